package miniapitest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/miniapi/miniapi/miniapitest"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

var widgetGVK = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}

// newWidget is an empty Widget for the client to fill.
func newWidget() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(widgetGVK)
	return u
}

// widgetReconciler keeps, for every Widget, a ConfigMap "<name>-color"
// that the Widget owns, holding its spec.color, and reports the color it
// acted on in status.observed.
type widgetReconciler struct {
	client client.Client
	scheme *runtime.Scheme
}

func (r *widgetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	w := newWidget()
	if err := r.client.Get(ctx, req.NamespacedName, w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	color, _, _ := unstructured.NestedString(w.Object, "spec", "color")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: w.GetName() + "-color", Namespace: w.GetNamespace()}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.client, cm, func() error {
		cm.Data = map[string]string{"color": color}
		return controllerutil.SetControllerReference(w, cm, r.scheme)
	}); err != nil {
		return ctrl.Result{}, err
	}
	if observed, _, _ := unstructured.NestedString(w.Object, "status", "observed"); observed != color {
		if err := unstructured.SetNestedField(w.Object, color, "status", "observed"); err != nil {
			return ctrl.Result{}, err
		}
		if err := r.client.Status().Update(ctx, w); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

// TestControllerRuntime runs a controller-runtime manager against an
// in-process miniapi with the Widget CRD: its cache watches Widgets and
// ConfigMaps, and its reconciler creates and updates an owned ConfigMap
// and writes the Widget's status subresource.
func TestControllerRuntime(t *testing.T) {
	t.Parallel()
	env := miniapitest.Start(t, miniapitest.WithCRDObjects(widgetCRD), miniapitest.WithNamespaces("shop"))

	mgr, scheme := newManager(t, env)
	r := &widgetReconciler{client: mgr.GetClient(), scheme: scheme}
	if err := ctrl.NewControllerManagedBy(mgr).For(newWidget()).Owns(&corev1.ConfigMap{}).Named("widget").Complete(r); err != nil {
		t.Fatal(err)
	}
	ctx := startManager(t, mgr)

	c := mgr.GetClient()
	w := newWidget()
	w.SetName("w1")
	w.SetNamespace("shop")
	w.Object["spec"] = map[string]any{"color": "red"}
	if err := c.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKey{Namespace: "shop", Name: "w1-color"}
	eventually(t, "ConfigMap w1-color holds red and w1 observed red", func() error {
		return checkWidget(ctx, c, key, "red")
	})

	if err := retryOnConflict(func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
			return err
		}
		w.Object["spec"] = map[string]any{"color": "blue"}
		return c.Update(ctx, w)
	}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "ConfigMap w1-color holds blue and w1 observed blue", func() error {
		return checkWidget(ctx, c, key, "blue")
	})
}

// checkWidget reports whether the ConfigMap at key holds color, is
// controlled by its Widget, and the Widget's status says it observed
// color.
func checkWidget(ctx context.Context, c client.Client, key client.ObjectKey, color string) error {
	var cm corev1.ConfigMap
	if err := c.Get(ctx, key, &cm); err != nil {
		return err
	}
	if cm.Data["color"] != color {
		return fmt.Errorf("ConfigMap holds %q", cm.Data["color"])
	}
	if ref := metav1.GetControllerOf(&cm); ref == nil || ref.Kind != "Widget" || ref.Name != "w1" {
		return fmt.Errorf("ConfigMap controller is %+v, want Widget w1", ref)
	}
	w := newWidget()
	if err := c.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: "w1"}, w); err != nil {
		return err
	}
	if got, _, _ := unstructured.NestedString(w.Object, "status", "observed"); got != color {
		return fmt.Errorf("status.observed %q", got)
	}
	return nil
}

// eventually polls check every 10 ms until it returns nil, failing the
// test with its last error after testTimeout.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v: %v", what, testTimeout, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// retryOnConflict calls f until it does not fail with a conflict, up to
// ten times.
func retryOnConflict(f func() error) error {
	var err error
	for range 10 {
		if err = f(); !apierrors.IsConflict(err) {
			return err
		}
	}
	return errors.Join(errors.New("still conflicting after 10 tries"), err)
}

// newManager returns a controller-runtime manager on env with client-go's
// scheme, no metrics or health listeners.
func newManager(t *testing.T, env *miniapitest.Env) (ctrl.Manager, *runtime.Scheme) {
	t.Helper()
	return newManagerFor(t, env.Config)
}

// newManagerFor is newManager with its own client configuration.
func newManagerFor(t *testing.T, cfg *rest.Config) (ctrl.Manager, *runtime.Scheme) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	return mgr, scheme
}

// startManager runs mgr until the test ends, and returns the context
// it runs in. The manager stops before the server: cleanups run
// last-in first-out.
func startManager(t *testing.T, mgr ctrl.Manager) context.Context {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("manager: %v", err)
			}
		case <-time.After(testTimeout):
			t.Error("manager did not stop")
		}
	})
	return ctx
}
