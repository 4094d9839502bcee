package miniapitest_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/miniapi/miniapi/miniapitest"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// TestLogicalClustersAreIsolated: two environments of one process share
// its etcd member, and neither sees anything of the other: objects (by
// get, list and watch), CRDs, compaction, and credentials.
func TestLogicalClustersAreIsolated(t *testing.T) {
	t.Parallel()
	a := miniapitest.Start(t, miniapitest.WithNamespaces("shared-name"), miniapitest.WithCRDObjects(widgetCRD))
	b := miniapitest.Start(t, miniapitest.WithNamespaces("shared-name"))
	ctx := t.Context()
	if a.URL == b.URL {
		t.Fatalf("both environments serve on %s", a.URL)
	}
	csA, csB := kubernetes.NewForConfigOrDie(a.Config), kubernetes.NewForConfigOrDie(b.Config)

	// B watches its namespace from now on: A's writes must not reach it.
	w, err := csB.CoreV1().ConfigMaps("shared-name").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "only-in-a"}, Data: map[string]string{"k": "a"}}
	created, err := csA.CoreV1().ConfigMaps("shared-name").Create(ctx, cm, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := csB.CoreV1().ConfigMaps("shared-name").Get(ctx, "only-in-a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("B gets A's ConfigMap: %v", err)
	}
	l, err := csB.CoreV1().ConfigMaps("shared-name").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 0 {
		t.Errorf("B lists %d ConfigMaps in shared-name, want 0", len(l.Items))
	}
	// The same name in B is a new object, not a conflict.
	cm.Data["k"] = "b"
	if _, err := csB.CoreV1().ConfigMaps("shared-name").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("B creates its own only-in-a: %v", err)
	}
	select {
	case ev := <-w.ResultChan():
		got, _ := ev.Object.(*corev1.ConfigMap)
		if ev.Type != watch.Added || got == nil || got.Data["k"] != "b" {
			t.Errorf("B's watch: %s %+v, want B's own ADDED", ev.Type, ev.Object)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("B's watch saw nothing of B's create")
	}
	b.Settle(ctx)
	select {
	case ev := <-w.ResultChan():
		t.Errorf("B's watch: unexpected %s %+v", ev.Type, ev.Object)
	default:
	}
	got, err := csA.CoreV1().ConfigMaps("shared-name").Get(ctx, "only-in-a", metav1.GetOptions{})
	if err != nil || got.Data["k"] != "a" || got.ResourceVersion != created.ResourceVersion {
		t.Errorf("A's ConfigMap after B's create: %+v, %v", got, err)
	}

	// A's CRD is served by A only.
	if _, err := csB.Discovery().ServerResourcesForGroupVersion("example.com/v1"); !apierrors.IsNotFound(err) {
		t.Errorf("B serves A's CRD group: %v", err)
	}
	if _, err := csA.Discovery().ServerResourcesForGroupVersion("example.com/v1"); err != nil {
		t.Errorf("A does not serve its CRD group: %v", err)
	}

	// The OpenAPI documents: built once for both (the built-in kinds'
	// are the same), A's CRD only in A's.
	pathsA, err := csA.Discovery().OpenAPIV3().Paths()
	if err != nil {
		t.Fatal(err)
	}
	pathsB, err := csB.Discovery().OpenAPIV3().Paths()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := pathsA["apis/example.com/v1"]; !ok {
		t.Error("A's OpenAPI has no apis/example.com/v1")
	}
	if _, ok := pathsB["apis/example.com/v1"]; ok {
		t.Error("B's OpenAPI has A's apis/example.com/v1")
	}
	for _, gv := range []string{"api/v1", "apis/apps/v1"} {
		a, okA := pathsA[gv]
		b, okB := pathsB[gv]
		if !okA || !okB {
			t.Fatalf("%s missing from A's (%v) or B's (%v) OpenAPI", gv, okA, okB)
		}
		if a.ServerRelativeURL() != b.ServerRelativeURL() {
			t.Errorf("%s: A serves %s, B %s; the same kinds should give the same document", gv, a.ServerRelativeURL(), b.ServerRelativeURL())
		}
	}

	// A's compaction is A's: B still reads its own history.
	before, err := csB.CoreV1().ConfigMaps("shared-name").Get(ctx, "only-in-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	before.Data["k"] = "b2"
	if _, err := csB.CoreV1().ConfigMaps("shared-name").Update(ctx, before, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.GetAt(ctx, corev1.SchemeGroupVersion.WithResource("configmaps"), "shared-name", "only-in-a", created.ResourceVersion); !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Errorf("A reads before its compaction: %v", err)
	}
	if _, err := b.GetAt(ctx, corev1.SchemeGroupVersion.WithResource("configmaps"), "shared-name", "only-in-a", before.ResourceVersion); err != nil {
		t.Errorf("B cannot read its history after A compacted: %v", err)
	}

	// A's admin credentials mean nothing to B: B's CA does not sign
	// them, nor A's serving certificate.
	cross := *a.Config
	cross.Host = b.URL
	if _, err := kubernetes.NewForConfigOrDie(&cross).CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err == nil {
		t.Error("A's credentials are accepted by B")
	}
	cross.TLSClientConfig.Insecure, cross.TLSClientConfig.CAData, cross.TLSClientConfig.CAFile = true, nil, ""
	_, err = kubernetes.NewForConfigOrDie(&cross).CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
	if !apierrors.IsUnauthorized(err) && (err == nil || !strings.Contains(err.Error(), "certificate")) {
		t.Errorf("A's client certificate at B (server unverified): %v, want 401 or a TLS refusal", err)
	}
}

// TestManyParallelClusters: parallel tests each get a cluster of their
// own from the one etcd member; each sees only what it wrote.
func TestManyParallelClusters(t *testing.T) {
	t.Parallel()
	const clusters = 8
	for i := range clusters {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			env := miniapitest.Start(t)
			cs := kubernetes.NewForConfigOrDie(env.Config)
			ctx := t.Context()
			for j := range 3 {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d-%d", i, j)}}
				if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			l, err := cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, cm := range l.Items {
				if strings.HasPrefix(cm.Name, "cm-") {
					names = append(names, cm.Name)
				}
			}
			want := fmt.Sprintf("[cm-%d-0 cm-%d-1 cm-%d-2]", i, i, i)
			if fmt.Sprint(names) != want {
				t.Errorf("cluster %d lists %v, want %s", i, names, want)
			}
		})
	}
}

// TestWithOwnEtcd: an environment with a member of its own serves and
// compacts etcd itself.
func TestWithOwnEtcd(t *testing.T) {
	t.Parallel()
	env := miniapitest.Start(t, miniapitest.WithOwnEtcd(), miniapitest.WithNamespaces("own"))
	ctx := t.Context()
	cms := kubernetes.NewForConfigOrDie(env.Config).CoreV1().ConfigMaps("own")
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data = map[string]string{"k": "v"}
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := env.GetAt(ctx, corev1.SchemeGroupVersion.WithResource("configmaps"), "own", "cm", cm.ResourceVersion); !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Errorf("GetAt before the compaction: %v, want 410", err)
	}
}
