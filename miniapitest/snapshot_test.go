package miniapitest_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miniapi/miniapi/miniapitest"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// TestSnapshotForkReset builds a fixture (a namespace, ConfigMaps, a CRD
// and a custom resource), snapshots it, forks it into parallel tests
// that change their copies freely, and resets the original to it.
func TestSnapshotForkReset(t *testing.T) {
	t.Parallel()
	src := miniapitest.Start(t, miniapitest.WithCRDObjects(widgetCRD), miniapitest.WithNamespaces("fx"))
	ctx := t.Context()
	cs := kubernetes.NewForConfigOrDie(src.Config)
	cms := cs.CoreV1().ConfigMaps("fx")
	for _, name := range []string{"a", "b"} {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	widgets := dynamic.NewForConfigOrDie(src.Config).Resource(widgetGVK.GroupVersion().WithResource("widgets")).Namespace("fx")
	w := newWidget()
	w.SetName("w")
	w.Object["spec"] = map[string]any{"color": "red"}
	if _, err := widgets.Create(ctx, w, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	a, _ := cms.Get(ctx, "a", metav1.GetOptions{})
	b, _ := cms.Get(ctx, "b", metav1.GetOptions{})
	snap, err := src.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("forks", func(t *testing.T) {
		for i := range 3 {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				start := time.Now()
				env := miniapitest.Fork(t, snap)
				t.Logf("fork of %d objects ready in %v", snap.Len(), time.Since(start))
				fcs := kubernetes.NewForConfigOrDie(env.Config)
				got, err := fcs.CoreV1().ConfigMaps("fx").Get(ctx, "a", metav1.GetOptions{})
				if err != nil || got.UID != a.UID || got.Data["v"] != "a" {
					t.Fatalf("the fork's ConfigMap a: %+v, %v; want the fixture's (uid %s)", got, err, a.UID)
				}
				fw := dynamic.NewForConfigOrDie(env.Config).Resource(widgetGVK.GroupVersion().WithResource("widgets")).Namespace("fx")
				if got, err := fw.Get(ctx, "w", metav1.GetOptions{}); err != nil || got.Object["spec"].(map[string]any)["color"] != "red" {
					t.Fatalf("the fork's Widget w: %v, %v", got, err)
				}
				// The fork's writes are its own.
				if err := fcs.CoreV1().ConfigMaps("fx").Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
				if _, err := cms.Get(ctx, "a", metav1.GetOptions{}); err != nil {
					t.Errorf("deleting a in a fork deleted it in the source: %v", err)
				}
			})
		}
	})

	t.Run("reset", func(t *testing.T) {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "extra"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		a2 := a.DeepCopy()
		a2.ResourceVersion = ""
		a2.Data["v"] = "changed"
		if _, err := cms.Update(ctx, a2, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := cms.Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		watcher, err := cms.Watch(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer watcher.Stop()
		if err := src.Reset(ctx, snap); err != nil {
			t.Fatal(err)
		}
		// The open watch is told to relist: 410, then its end.
		var last watch.Event
		for ev := range watcher.ResultChan() {
			last = ev
		}
		if st, ok := last.Object.(*metav1.Status); last.Type != watch.Error || !ok || st.Code != http.StatusGone {
			t.Errorf("the open watch ended with %s %+v, want a 410 ERROR", last.Type, last.Object)
		}
		list, err := cms.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, cm := range list.Items {
			got[cm.Name] = cm.Data["v"] + " " + string(cm.UID)
		}
		want := map[string]string{"a": "a " + string(a.UID), "b": "b " + string(b.UID)}
		for name, v := range want {
			if got[name] != v {
				t.Errorf("after reset %s is %q, want %q", name, got[name], v)
			}
		}
		if _, ok := got["extra"]; ok {
			t.Error("after reset, the ConfigMap created since remains")
		}
		if _, err := cms.Get(ctx, "extra", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("get extra after reset: %v", err)
		}
	})
}

// BenchmarkFork forks a state of 10,000 ConfigMaps (issue 15's fixture
// size) into a new environment, ready to serve: go test -run '^$'
// -bench 'Fork|StartEmpty' ./miniapitest. BenchmarkStartEmpty is the
// baseline: an environment from nothing, stopped the same way.
func BenchmarkFork(b *testing.B) {
	src := miniapitest.Start(b, miniapitest.WithNamespaces("fx"))
	cs := kubernetes.NewForConfigOrDie(src.Config)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < 10000; i += 8 {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%05d", i)}, Data: map[string]string{"k": strings.Repeat("v", 100)}}
				if _, err := cs.CoreV1().ConfigMaps("fx").Create(b.Context(), cm, metav1.CreateOptions{}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	snap, err := src.Snapshot(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	src.Stop()
	b.ReportMetric(float64(snap.Len()), "objects")
	for b.Loop() {
		miniapitest.Fork(b, snap).Stop()
	}
}

// BenchmarkReset returns an environment whose 1,000 ConfigMaps were all
// deleted to the snapshot that holds them: go test -run '^$' -bench
// Reset ./miniapitest. Only the Reset is timed.
func BenchmarkReset(b *testing.B) {
	env := miniapitest.Start(b, miniapitest.WithNamespaces("fx"))
	cms := kubernetes.NewForConfigOrDie(env.Config).CoreV1().ConfigMaps("fx")
	for i := range 1000 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%04d", i)}, Data: map[string]string{"k": strings.Repeat("v", 100)}}
		if _, err := cms.Create(b.Context(), cm, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	snap, err := env.Snapshot(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		b.StopTimer()
		if err := cms.DeleteCollection(b.Context(), metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := env.Reset(b.Context(), snap); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if l, err := cms.List(b.Context(), metav1.ListOptions{}); err != nil || len(l.Items) != 1000 {
		b.Fatalf("after the last reset: %v ConfigMaps, err %v", len(l.Items), err)
	}
}

func BenchmarkStartEmpty(b *testing.B) {
	for b.Loop() {
		miniapitest.Start(b).Stop()
	}
}

// TestStartMain: outside a test, a failure is an error and nothing is
// left running; a success gives a server and its stop.
func TestStartMain(t *testing.T) {
	t.Parallel()
	if _, _, err := miniapitest.StartMain(miniapitest.WithCRDs("/no/such/dir")); err == nil || !strings.Contains(err.Error(), "/no/such/dir") {
		t.Errorf("StartMain with a missing CRD directory: %v", err)
	}
	env, stop, err := miniapitest.StartMain()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kubernetes.NewForConfigOrDie(env.Config).CoreV1().Namespaces().Get(t.Context(), "default", metav1.GetOptions{}); err != nil {
		t.Error(err)
	}
	stop()
	if _, err := kubernetes.NewForConfigOrDie(env.Config).CoreV1().Namespaces().Get(t.Context(), "default", metav1.GetOptions{}); err == nil {
		t.Error("the server still answers after stop")
	}
}
