package miniapitest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/miniapi/miniapi/faults"
	"github.com/miniapi/miniapi/miniapitest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestReconcilerSurvivesFaults runs the Widget reconciler of
// TestControllerRuntime in a controller-runtime manager while each class
// of fault hits the manager's own requests and watches: after each, a
// change to the Widget still reaches its ConfigMap and status.
func TestReconcilerSurvivesFaults(t *testing.T) {
	t.Parallel()
	env := miniapitest.Start(t, miniapitest.WithCRDObjects(widgetCRD), miniapitest.WithNamespaces("shop"))

	// The rules match the manager by its user agent, so the test's own
	// client is not faulted.
	const agent = "widget-manager"
	cfg := rest.CopyConfig(env.Config)
	cfg.UserAgent = agent
	mgr, scheme := newManagerFor(t, cfg)
	r := &widgetReconciler{client: mgr.GetClient(), scheme: scheme}
	if err := ctrl.NewControllerManagedBy(mgr).For(newWidget()).Owns(&corev1.ConfigMap{}).Named("widget").Complete(r); err != nil {
		t.Fatal(err)
	}
	ctx := startManager(t, mgr)
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	// The CRD allows these; each change picks the next.
	colors := []string{"red", "green", "blue"}
	w := newWidget()
	w.SetName("w1")
	w.SetNamespace("shop")
	w.Object["spec"] = map[string]any{"color": colors[0]}
	if err := c.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKey{Namespace: "shop", Name: "w1-color"}
	eventually(t, "the first reconcile", func() error { return checkWidget(ctx, c, key, colors[0]) })

	manager := faults.Match{UserAgents: []string{agent}}
	writes := faults.Match{UserAgents: []string{agent}, Verbs: []string{"create", "update", "patch"}}
	watches := faults.Match{UserAgents: []string{agent}, Verbs: []string{"watch"}}
	ms := func(d time.Duration) metav1.Duration { return metav1.Duration{Duration: d} }
	classes := []struct {
		name string
		rule faults.Rule
	}{
		{"conflicts", faults.Rule{Match: writes, Error: faults.Conflict(), Times: 3}},
		{"429 Too Many Requests", faults.Rule{Match: writes, Error: faults.TooManyRequests(1), Times: 2}},
		{"500 Internal Error", faults.Rule{Match: writes, Error: faults.InternalError(), Times: 3}},
		{"504 Timeout", faults.Rule{Match: writes, Error: faults.Timeout(), Times: 3}},
		{"latency", faults.Rule{Match: manager, Latency: ms(200 * time.Millisecond), Times: 5}},
		{"watches end", faults.Rule{Match: watches, Watch: faults.WatchEnd, Times: 2}},
		{"watches reset", faults.Rule{Match: watches, Watch: faults.WatchReset, Times: 2}},
		{"watches expire", faults.Rule{Match: watches, Watch: faults.WatchExpire, Times: 2}},
		{"watch delivery delayed", faults.Rule{Match: watches, WatchDelay: ms(300 * time.Millisecond)}},
	}
	setColor := func(color string) {
		t.Helper()
		if err := retryOnConflict(func() error {
			if err := c.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
				return err
			}
			w.Object["spec"] = map[string]any{"color": color}
			return c.Update(ctx, w)
		}); err != nil {
			t.Fatal(err)
		}
	}
	for n, class := range classes {
		before := env.Faults.Injected()
		if _, err := env.Faults.Add(class.rule); err != nil {
			t.Fatal(err)
		}
		color := colors[(n+1)%len(colors)]
		setColor(color)
		eventually(t, class.name+": the reconciler acts on "+color, func() error { return checkWidget(ctx, c, key, color) })
		if env.Faults.Injected() == before {
			t.Errorf("%s: no fault was injected", class.name)
		}
		env.Faults.Clear()
	}

	// etcd stops answering while the reconciler writes: the manager's
	// watch is held back so that its reconcile starts in the outage.
	if _, err := env.Faults.Add(faults.Rule{Match: watches, WatchDelay: ms(300 * time.Millisecond)}); err != nil {
		t.Fatal(err)
	}
	last := colors[(len(classes)+1)%len(colors)]
	setColor(last)
	outage, err := env.Faults.Add(faults.Rule{EtcdUnavailable: true})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "a write failing in the outage", func() error {
		for _, r := range env.Faults.Rules() {
			if r.Name == outage.Name && r.Injected > 0 {
				return nil
			}
		}
		return fmt.Errorf("etcd not called in the outage")
	})
	time.Sleep(200 * time.Millisecond)
	env.Faults.Clear()
	eventually(t, "the reconciler acts after the outage", func() error { return checkWidget(ctx, c, key, last) })
}
