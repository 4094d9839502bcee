package miniapitest_test

import (
	"context"
	"testing"
	"time"

	"github.com/miniapi/miniapi/miniapitest"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// TestGetAtAndCompact reads an object as of past resourceVersions, then
// compacts the history away: reads, lists and watches at the old
// versions answer 410, and an informer started before the compaction
// goes on seeing changes.
func TestGetAtAndCompact(t *testing.T) {
	t.Parallel()
	env := miniapitest.Start(t, miniapitest.WithNamespaces("tt"))
	ctx := t.Context()
	cs := kubernetes.NewForConfigOrDie(env.Config)
	cms := cs.CoreV1().ConfigMaps("tt")
	gvr := corev1.SchemeGroupVersion.WithResource("configmaps")

	v1, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: map[string]string{"v": "1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v1.Data["v"] = "2"
	v2, err := cms.Update(ctx, v1, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	before := v1.ResourceVersion
	if err := cms.Delete(ctx, "cm", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for rv, want := range map[string]string{v1.ResourceVersion: "1", v2.ResourceVersion: "2"} {
		got, err := env.GetAt(ctx, gvr, "tt", "cm", rv)
		if err != nil {
			t.Fatalf("GetAt %s: %v", rv, err)
		}
		if v, _, _ := unstructured.NestedString(got.Object, "data", "v"); v != want || got.GetResourceVersion() != rv {
			t.Errorf("GetAt %s: data.v %q at %s, want %q", rv, v, got.GetResourceVersion(), want)
		}
	}
	created, _ := cms.Get(ctx, "cm", metav1.GetOptions{})
	if created != nil && created.Name != "" {
		t.Errorf("cm still exists: %+v", created)
	}

	// An informer watching since before the compaction.
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace("tt"))
	inf := factory.Core().V1().ConfigMaps().Informer()
	seen := make(chan string, 16)
	inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		seen <- obj.(*corev1.ConfigMap).Name
	}})
	ictx, stop := context.WithCancel(ctx)
	defer factory.Shutdown() // after stop
	defer stop()
	factory.Start(ictx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("informer did not sync")
	}

	rv, err := env.Compact(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.GetAt(ctx, gvr, "tt", "cm", before); !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Errorf("GetAt %s after compacting to %s: %v, want 410", before, rv, err)
	}
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: before})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-w.ResultChan():
		if st, ok := ev.Object.(*metav1.Status); ev.Type != watch.Error || !ok || st.Code != 410 {
			t.Errorf("a watch from %s after compacting: %s %+v, want a 410 ERROR", before, ev.Type, ev.Object)
		}
	case <-time.After(testTimeout):
		t.Error("a watch from before the compaction got nothing")
	}
	w.Stop()
	if _, err := env.GetAt(ctx, gvr, "tt", "cm", rv); !apierrors.IsNotFound(err) {
		t.Errorf("GetAt %s (the compaction's revision, after the delete): %v, want NotFound", rv, err)
	}

	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case name := <-seen:
		if name != "after" {
			t.Errorf("the informer saw %q", name)
		}
	case <-time.After(testTimeout):
		t.Error("the informer saw nothing after the compaction")
	}
}
