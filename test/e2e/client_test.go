package e2e

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/pager"
	"k8s.io/client-go/util/retry"
)

// clientTimeout bounds each client-go call and each wait in these tests.
const clientTimeout = 30 * time.Second

// kubeconfigLinePrefix starts the line after "serving on" on which miniapi
// names the kubeconfig it wrote.
const kubeconfigLinePrefix = "kubeconfig written to "

// kubeconfigPath returns the kubeconfig path the server printed, waiting
// (bounded) for the line: it follows the serving line, which the harness
// may have seen alone.
func (p *serverProc) kubeconfigPath(t *testing.T) string {
	t.Helper()
	deadline := time.Now().Add(startTimeout)
	for {
		for _, line := range strings.Split(p.stdout.String(), "\n") {
			if path, ok := strings.CutPrefix(line, kubeconfigLinePrefix); ok {
				return path
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("miniapi did not print %q within %v; stdout:\n%s", kubeconfigLinePrefix+"<path>", startTimeout, p.stdout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// clientConfig is the rest.Config client-go builds from the server's
// kubeconfig alone, as any user of it would, without client-side rate
// limiting (the tests make bursts of requests on purpose).
func clientConfig(t *testing.T, srv *serverProc) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", srv.kubeconfigPath(t))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != srv.URL {
		t.Fatalf("kubeconfig server %s, want %s", cfg.Host, srv.URL)
	}
	cfg.QPS = -1
	cfg.Timeout = clientTimeout
	return cfg
}

// jsonOnly pins a config to JSON in both directions, for the typed
// clients' JSON path (their default is protobuf).
func jsonOnly(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.ContentType = "application/json"
	cfg.AcceptContentTypes = "application/json"
	return cfg
}

func TestKubeconfigOut(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	out := filepath.Join(t.TempDir(), "sub", "my.kubeconfig")
	srv := startServer(t, t.TempDir(), "--kubeconfig-out", out)
	if got := srv.kubeconfigPath(t); got != out {
		t.Errorf("printed kubeconfig path %q, want %q", got, out)
	}
	if _, err := os.Stat(filepath.Join(srv.DataDir, "kubeconfig")); !os.IsNotExist(err) {
		t.Errorf("a kubeconfig was also written to the data directory (%v)", err)
	}
	cs, err := kubernetes.NewForConfig(jsonOnly(clientConfig(t, srv)))
	if err != nil {
		t.Fatal(err)
	}
	v, err := cs.Discovery().ServerVersion()
	if err != nil || !strings.Contains(v.GitVersion, "miniapi") {
		t.Fatalf("server version through the kubeconfig: %v, %v", v, err)
	}
}

// TestClientGo drives one server with client-go's discovery, dynamic,
// metadata and typed clients and its pager, retry and leader election
// helpers, each configured from nothing but the kubeconfig miniapi wrote.
func TestClientGo(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	file := filepath.Join(t.TempDir(), "resources.yaml")
	if err := os.WriteFile(file, []byte(widgetsFile), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, t.TempDir(), "--resources", file)
	cfg := clientConfig(t, srv)
	// The typed clientset with its defaults: protobuf both ways for the
	// built-in types. The recorder proves it.
	var media mediaRecorder
	cs, err := kubernetes.NewForConfig(media.wrap(cfg))
	if err != nil {
		t.Fatal(err)
	}
	csJSON, err := kubernetes.NewForConfig(jsonOnly(cfg))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, ns := range []string{"dyn", "meta", "typed", "typed-json", "pager", "retry", "election"} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("discovery", func(t *testing.T) { testDiscovery(t, cfg) })
	t.Run("dynamic", func(t *testing.T) { testDynamic(ctx, t, cfg) })
	t.Run("metadata", func(t *testing.T) { testMetadata(ctx, t, cfg, cs) })
	t.Run("typed/protobuf", func(t *testing.T) {
		testTyped(ctx, t, cs, "typed")
		for _, want := range []string{"request " + protobufMedia, "response " + protobufMedia} {
			if !media.saw(want) {
				t.Errorf("the typed client never had a %s; saw %v", want, media.all())
			}
		}
	})
	t.Run("typed/json", func(t *testing.T) { testTyped(ctx, t, csJSON, "typed-json") })
	t.Run("pager", func(t *testing.T) { testPager(ctx, t, cs) })
	t.Run("RetryOnConflict", func(t *testing.T) { testRetryOnConflict(ctx, t, cs) })
	t.Run("leader election", func(t *testing.T) { testLeaderElection(ctx, t, cs) })
}

// testDiscovery reads groups and resources with the legacy and the
// default (aggregated first) discovery protocols and maps a kind to its
// resource with a RESTMapper built from them.
func testDiscovery(t *testing.T, cfg *rest.Config) {
	for _, legacy := range []bool{true, false} {
		t.Run(fmt.Sprintf("legacy=%v", legacy), func(t *testing.T) {
			var media mediaRecorder
			dc, err := discovery.NewDiscoveryClientForConfig(media.wrap(cfg))
			if err != nil {
				t.Fatal(err)
			}
			dc.UseLegacyDiscovery = legacy
			groups, lists, err := dc.ServerGroupsAndResources()
			if err != nil {
				t.Fatal(err)
			}
			if aggregated := media.saw("response " + aggregatedDiscoveryMedia); aggregated == legacy {
				t.Errorf("aggregated discovery answered: %v; saw %v", aggregated, media.all())
			}
			var gvs []string
			for _, g := range groups {
				for _, v := range g.Versions {
					gvs = append(gvs, v.GroupVersion)
				}
			}
			for _, want := range []string{"v1", "coordination.k8s.io/v1", "example.com/v1"} {
				if !slices.Contains(gvs, want) {
					t.Errorf("group versions %v lack %s", gvs, want)
				}
			}
			res := map[string]metav1.APIResource{}
			for _, l := range lists {
				for _, r := range l.APIResources {
					res[l.GroupVersion+"/"+r.Name] = r
				}
			}
			cm := res["v1/configmaps"]
			if cm.Kind != "ConfigMap" || !cm.Namespaced || !slices.Equal(cm.ShortNames, []string{"cm"}) {
				t.Errorf("configmaps: %+v", cm)
			}
			for _, verb := range []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"} {
				if !slices.Contains(cm.Verbs, verb) {
					t.Errorf("configmaps verbs %v lack %s", cm.Verbs, verb)
				}
			}
			if w := res["example.com/v1/widgets"]; w.Kind != "Widget" || !slices.Equal(w.ShortNames, []string{"wd"}) {
				t.Errorf("widgets: %+v", w)
			}
			if _, ok := res["example.com/v1/widgets/status"]; !ok {
				t.Errorf("no widgets/status in discovery")
			}
			if ns := res["v1/namespaces"]; ns.Namespaced {
				t.Errorf("namespaces are namespaced in discovery: %+v", ns)
			}

			grs, err := restmapper.GetAPIGroupResources(dc)
			if err != nil {
				t.Fatal(err)
			}
			m, err := restmapper.NewDiscoveryRESTMapper(grs).RESTMapping(schema.GroupKind{Group: "example.com", Kind: "Widget"})
			if err != nil {
				t.Fatal(err)
			}
			if m.Resource != (schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}) || m.Scope.Name() != "namespace" {
				t.Errorf("RESTMapping(Widget) = %v, %v", m.Resource, m.Scope.Name())
			}
		})
	}
}

// testDynamic runs CRUD, list with a label selector and a watch through
// the dynamic client, on a type from the resources file and a built-in.
func testDynamic(ctx context.Context, t *testing.T, cfg *rest.Config) {
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		gvr    schema.GroupVersionResource
		kind   string
		field  string // the top-level field the test writes
		update func(u *unstructured.Unstructured, v string)
	}{
		{schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}, "Widget", "spec",
			func(u *unstructured.Unstructured, v string) {
				unstructured.SetNestedField(u.Object, v, "spec", "color")
			}},
		{schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "ConfigMap", "data",
			func(u *unstructured.Unstructured, v string) {
				unstructured.SetNestedField(u.Object, v, "data", "color")
			}},
	} {
		t.Run(tc.gvr.Resource, func(t *testing.T) {
			rc := dc.Resource(tc.gvr).Namespace("dyn")
			list, err := rc.List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			w, err := rc.Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()

			obj := &unstructured.Unstructured{}
			obj.SetAPIVersion(tc.gvr.GroupVersion().String())
			obj.SetKind(tc.kind)
			obj.SetName("first")
			obj.SetLabels(map[string]string{"app": "dyn"})
			tc.update(obj, "red")
			created, err := rc.Create(ctx, obj, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if created.GetUID() == "" || created.GetResourceVersion() == "" {
				t.Fatalf("created object lacks uid or resourceVersion: %v", created.Object)
			}
			got, err := rc.Get(ctx, "first", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			tc.update(got, "green")
			updated, err := rc.Update(ctx, got, metav1.UpdateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if c, _, _ := unstructured.NestedString(updated.Object, tc.field, "color"); c != "green" {
				t.Errorf("after update color = %q", c)
			}
			// A stale resourceVersion conflicts.
			if _, err := rc.Update(ctx, got, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
				t.Errorf("update with a stale resourceVersion: %v, want Conflict", err)
			}
			patched, err := rc.Patch(ctx, "first", types.MergePatchType, []byte(`{"`+tc.field+`":{"color":"blue"}}`), metav1.PatchOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if c, _, _ := unstructured.NestedString(patched.Object, tc.field, "color"); c != "blue" {
				t.Errorf("after patch color = %q", c)
			}
			other := obj.DeepCopy()
			other.SetName("second")
			other.SetLabels(map[string]string{"app": "other"})
			if _, err := rc.Create(ctx, other, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			sel, err := rc.List(ctx, metav1.ListOptions{LabelSelector: "app=dyn"})
			if err != nil {
				t.Fatal(err)
			}
			if len(sel.Items) != 1 || sel.Items[0].GetName() != "first" {
				t.Errorf("list app=dyn: %d items", len(sel.Items))
			}
			if err := rc.Delete(ctx, "first", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := rc.Get(ctx, "first", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("get after delete: %v, want NotFound", err)
			}
			want := []string{"ADDED first", "MODIFIED first", "MODIFIED first", "ADDED second", "DELETED first"}
			for i, ev := range want {
				e := nextEvent(t, w)
				u, ok := e.Object.(*unstructured.Unstructured)
				if !ok {
					t.Fatalf("event %d: %T, want *unstructured.Unstructured", i, e.Object)
				}
				if got := string(e.Type) + " " + u.GetName(); got != ev {
					t.Fatalf("event %d = %s, want %s", i, got, ev)
				}
			}
		})
	}
}

// nextEvent receives one watch event, failing the test after
// clientTimeout or if the watch ends.
func nextEvent(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	timer := time.NewTimer(clientTimeout)
	defer timer.Stop()
	select {
	case e, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed")
		}
		if e.Type == watch.Error {
			t.Fatalf("watch error: %v", apierrors.FromObject(e.Object))
		}
		return e
	case <-timer.C:
		t.Fatalf("no watch event within %v", clientTimeout)
	}
	return watch.Event{}
}

// testMetadata lists, gets and watches ConfigMaps as
// PartialObjectMetadata with client-go's metadata client.
func testMetadata(ctx context.Context, t *testing.T, cfg *rest.Config, cs kubernetes.Interface) {
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cms := cs.CoreV1().ConfigMaps("meta")
	for _, n := range []string{"a", "b"} {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: map[string]string{"n": n}}, Data: map[string]string{"big": strings.Repeat("x", 1000)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	rc := mc.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("meta")
	list, err := rc.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, it := range list.Items {
		names = append(names, it.Name)
		if it.Labels["n"] != it.Name || it.UID == "" {
			t.Errorf("item %s: labels %v uid %q", it.Name, it.Labels, it.UID)
		}
	}
	if !slices.Equal(names, []string{"a", "b"}) {
		t.Errorf("metadata list names %v, want [a b]", names)
	}
	one, err := rc.Get(ctx, "b", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if one.Name != "b" || one.Labels["n"] != "b" {
		t.Errorf("metadata get: %+v", one.ObjectMeta)
	}
	w, err := rc.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e := nextEvent(t, w)
	pom, ok := e.Object.(*metav1.PartialObjectMetadata)
	if !ok || e.Type != watch.Added || pom.Name != "c" {
		t.Fatalf("metadata watch event %s %T %v", e.Type, e.Object, e.Object)
	}
}

// testTyped runs the typed clientset over each built-in type in ns.
func testTyped(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns string) {
	cm, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["k"] = "w"
	if cm, err = cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil || cm.Data["k"] != "w" {
		t.Fatalf("update configmap: %v, %v", cm, err)
	}
	sec, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, StringData: map[string]string{"password": "hunter2"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(sec.Data["password"]) != "hunter2" || sec.Type != corev1.SecretTypeOpaque {
		t.Errorf("secret data %q type %q", sec.Data, sec.Type)
	}
	holder := "me"
	if _, err := cs.CoordinationV1().Leases(ns).Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "l"}, Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Events(ns).Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "e"},
		InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Namespace: ns, Name: "cm"},
		Reason:         "Tested", Message: "typed client", Type: corev1.EventTypeNormal,
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=cm"})
	if err != nil || len(evs.Items) != 1 || evs.Items[0].Reason != "Tested" {
		t.Fatalf("events for cm: %v, %v", evs, err)
	}
	l, err := cs.CoordinationV1().Leases(ns).Get(ctx, "l", metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != "me" {
		t.Fatalf("get lease: %v, %v", l, err)
	}
	if err := cs.CoreV1().Secrets(ns).Delete(ctx, "s", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Secrets(ns).Get(ctx, "s", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get deleted secret: %v, want NotFound", err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); !apierrors.IsBadRequest(err) {
		// cm carries a resourceVersion: kube-apiserver refuses that on create.
		t.Errorf("create with a resourceVersion: %v, want BadRequest", err)
	}
}

// testPager walks 25 ConfigMaps in pages of 10 with client-go's pager.
func testPager(ctx context.Context, t *testing.T, cs kubernetes.Interface) {
	const ns = "pager"
	for i := range 25 {
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%02d", i)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var pages []int64
	p := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		pages = append(pages, opts.Limit)
		return cs.CoreV1().ConfigMaps(ns).List(ctx, opts)
	})
	p.PageSize = 10
	var names []string
	if err := p.EachListItem(ctx, metav1.ListOptions{}, func(obj runtime.Object) error {
		names = append(names, obj.(*corev1.ConfigMap).Name)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(names) != 25 || names[0] != "cm-00" || names[24] != "cm-24" || !slices.IsSorted(names) {
		t.Errorf("pager visited %d items %v", len(names), names)
	}
	if !slices.Equal(pages, []int64{10, 10, 10}) {
		t.Errorf("page requests with limits %v, want three of 10", pages)
	}
}

// testRetryOnConflict increments a counter in a ConfigMap from 20
// goroutines at once with retry.RetryOnConflict: every increment must
// land once.
func testRetryOnConflict(ctx context.Context, t *testing.T, cs kubernetes.Interface) {
	cms := cs.CoreV1().ConfigMaps("retry")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "counter"}, Data: map[string]string{"n": "0"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const writers = 20
	// Enough attempts for the last writer to lose to all the others.
	backoff := wait.Backoff{Steps: 4 * writers, Duration: 5 * time.Millisecond, Factor: 1.1, Jitter: 1, Cap: 200 * time.Millisecond}
	var conflicts atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for range writers {
		wg.Go(func() {
			attempt := 0
			errs <- retry.RetryOnConflict(backoff, func() error {
				if attempt++; attempt > 1 {
					conflicts.Add(1)
				}
				cm, err := cms.Get(ctx, "counter", metav1.GetOptions{})
				if err != nil {
					return err
				}
				n, err := strconv.Atoi(cm.Data["n"])
				if err != nil {
					return err
				}
				cm.Data["n"] = strconv.Itoa(n + 1)
				_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
				return err
			})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("writer: %v", err)
		}
	}
	cm, err := cms.Get(ctx, "counter", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data["n"] != strconv.Itoa(writers) {
		t.Errorf("counter = %s after %d increments (lost updates)", cm.Data["n"], writers)
	}
	t.Logf("%d writers, %d conflicts retried", writers, conflicts.Load())
}

// testLeaderElection runs two candidates for one Lease: exactly one leads,
// and when it stops (releasing the lease) the other takes over.
func testLeaderElection(ctx context.Context, t *testing.T, cs kubernetes.Interface) {
	var leaders atomic.Int32 // candidates leading right now
	var maxLeaders atomic.Int32
	type candidate struct {
		cancel  context.CancelFunc
		done    chan struct{}
		started chan struct{}
	}
	run := func(id string) *candidate {
		cctx, cancel := context.WithCancel(ctx)
		c := &candidate{cancel: cancel, done: make(chan struct{}), started: make(chan struct{})}
		lock := &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: "election", Name: "leader"},
			Client:     cs.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: id},
		}
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock:            lock,
			LeaseDuration:   2 * time.Second,
			RenewDeadline:   1500 * time.Millisecond,
			RetryPeriod:     200 * time.Millisecond,
			ReleaseOnCancel: true,
			Name:            id,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(context.Context) {
					n := leaders.Add(1)
					for m := maxLeaders.Load(); n > m && !maxLeaders.CompareAndSwap(m, n); m = maxLeaders.Load() {
					}
					close(c.started)
				},
				OnStoppedLeading: func() { leaders.Add(-1) },
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			defer close(c.done)
			le.Run(cctx)
		}()
		return c
	}
	waitFor := func(what string, ch <-chan struct{}) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(clientTimeout):
			t.Fatalf("%s did not happen within %v", what, clientTimeout)
		}
	}
	a := run("a")
	waitFor("a leading", a.started)
	b := run("b")
	// b keeps trying while a renews; a lease of 2 s would have lapsed
	// twice over, so b must not have taken it.
	select {
	case <-b.started:
		t.Fatal("b became leader while a held the lease")
	case <-time.After(4 * time.Second):
	}
	a.cancel()
	waitFor("a stopping", a.done)
	waitFor("b taking over", b.started)
	lease, err := cs.CoordinationV1().Leases("election").Get(ctx, "leader", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != "b" {
		t.Errorf("lease holder %v, want b", lease.Spec.HolderIdentity)
	}
	if lease.Spec.LeaseTransitions == nil || *lease.Spec.LeaseTransitions < 1 {
		t.Errorf("leaseTransitions %v, want at least 1", lease.Spec.LeaseTransitions)
	}
	b.cancel()
	waitFor("b stopping", b.done)
	if m := maxLeaders.Load(); m != 1 {
		t.Errorf("%d candidates led at once", m)
	}
}

// Media types the recorder looks for.
const (
	protobufMedia            = "application/vnd.kubernetes.protobuf"
	aggregatedDiscoveryMedia = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
)

// mediaRecorder notes the Content-Type of every request and response a
// client makes, as "request <type>" and "response <type>".
type mediaRecorder struct {
	mu   sync.Mutex
	seen map[string]bool
}

// wrap returns a copy of cfg whose transport records into r.
func (r *mediaRecorder) wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			r.note("request", req.Header.Get("Content-Type"))
			resp, err := rt.RoundTrip(req)
			if err == nil {
				r.note("response", resp.Header.Get("Content-Type"))
			}
			return resp, err
		})
	})
	return cfg
}

func (r *mediaRecorder) note(dir, ct string) {
	if ct == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	r.seen[dir+" "+strings.ReplaceAll(ct, " ", "")] = true
}

func (r *mediaRecorder) saw(s string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen[s]
}

func (r *mediaRecorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.seen))
}

// roundTripFunc is an http.RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
