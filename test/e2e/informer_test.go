package e2e

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// TestInformer runs a client-go SharedInformer on ConfigMaps against the
// binary, with the WatchList client behaviour (client-go's default: one
// watch with sendInitialEvents) and without it (list, then watch). It must
// sync, see every add, update and delete of 50 concurrent changes, and end
// with a store equal to a fresh list.
func TestInformer(t *testing.T) {
	skipIfShort(t)
	for _, watchList := range []bool{true, false} {
		t.Run(fmt.Sprintf("WatchListClient=%v", watchList), func(t *testing.T) {
			clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, watchList)
			srv := startServer(t, t.TempDir(), "--log-level", "debug")
			runInformer(t, srv)
			// The server logs each request when it ends; the informer's
			// watch ended when it was shut down. The log shows which
			// protocol the informer used.
			deadline := time.Now().Add(10 * time.Second)
			for !strings.Contains(srv.Stderr(), "watch=true") {
				if time.Now().After(deadline) {
					t.Fatalf("the informer's watch request was never logged:\n%s", srv.Stderr())
				}
				time.Sleep(20 * time.Millisecond)
			}
			initial := strings.Contains(srv.Stderr(), "sendInitialEvents=true")
			if initial != watchList {
				t.Fatalf("informer with WatchListClient=%v sent sendInitialEvents=%v", watchList, initial)
			}
		})
	}
}

func runInformer(t *testing.T, srv *serverProc) {
	// JSON both ways: this test reads the server's request log.
	cs, err := kubernetes.NewForConfig(jsonOnly(clientConfig(t, srv)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const ns = "inf"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cms := cs.CoreV1().ConfigMaps(ns)
	for i := 0; i < 10; i++ {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pre-%d", i)}, Data: map[string]string{"v": "0"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	rec := newEventRecorder()
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	inf := factory.Core().V1().ConfigMaps().Informer()
	if _, err := inf.AddEventHandler(rec); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	stopped := false
	shutdown := func() {
		if !stopped {
			stopped = true
			close(stop)
			factory.Shutdown()
		}
	}
	defer shutdown()
	factory.Start(stop)
	syncCtx, syncCancel := context.WithTimeout(ctx, 20*time.Second)
	defer syncCancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), inf.HasSynced) {
		t.Fatal("informer did not sync within 20s")
	}
	if n := len(inf.GetStore().List()); n != 10 {
		t.Fatalf("synced store has %d objects, want 10", n)
	}

	// 50 concurrent changes from 10 writers: each creates 2, updates 2
	// (one twice) and deletes 1 of the pre-existing objects.
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for w := 0; w < 10; w++ {
		wg.Go(func() {
			for i := 0; i < 2; i++ {
				if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("new-%d-%d", w, i)}}, metav1.CreateOptions{}); err != nil {
					errs <- err
				}
			}
			for i := 0; i < 2; i++ {
				name := fmt.Sprintf("new-%d-0", w)
				patch := fmt.Sprintf(`{"data":{"v":"%d"}}`, i+1)
				if _, err := cms.Patch(ctx, name, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
					errs <- err
				}
			}
			if _, err := cms.Patch(ctx, fmt.Sprintf("new-%d-1", w), "application/merge-patch+json", []byte(`{"data":{"v":"9"}}`), metav1.PatchOptions{}); err != nil {
				errs <- err
			}
			if err := cms.Delete(ctx, fmt.Sprintf("pre-%d", w), metav1.DeleteOptions{}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	fresh, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, cm := range fresh.Items {
		want[cm.Name] = cm.ResourceVersion
	}
	if len(want) != 20 {
		t.Fatalf("fresh list has %d objects, want 20", len(want))
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := map[string]string{}
		for _, o := range inf.GetStore().List() {
			cm := o.(*corev1.ConfigMap)
			got[cm.Name] = cm.ResourceVersion
		}
		if maps.Equal(got, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("informer store never matched a fresh list:\n got  %v\n want %v", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
	shutdown()
	adds, updates, deletes := rec.counts()
	// 10 initial + 20 created; 30 updates (3 per writer); 10 deletes.
	if adds != 30 || updates != 30 || deletes != 10 {
		t.Fatalf("informer saw %d adds, %d updates, %d deletes; want 30, 30, 10", adds, updates, deletes)
	}
}

// eventRecorder counts informer notifications.
type eventRecorder struct {
	mu                     sync.Mutex
	adds, updates, deletes int
}

func newEventRecorder() *eventRecorder { return &eventRecorder{} }

func (r *eventRecorder) OnAdd(any, bool) {
	r.mu.Lock()
	r.adds++
	r.mu.Unlock()
}

func (r *eventRecorder) OnUpdate(_, _ any) {
	r.mu.Lock()
	r.updates++
	r.mu.Unlock()
}

func (r *eventRecorder) OnDelete(any) {
	r.mu.Lock()
	r.deletes++
	r.mu.Unlock()
}

func (r *eventRecorder) counts() (int, int, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.adds, r.updates, r.deletes
}
