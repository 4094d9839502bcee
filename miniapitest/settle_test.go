package miniapitest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/miniapi/miniapi/miniapitest"
	"github.com/miniapi/miniapi/registry"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestWaitForControllers reads what kube's deployment and replicaset
// controllers and our garbage collector do right after
// WaitForControllers, with no polling: if it returned before they had
// caught up, the counts would be short.
func TestWaitForControllers(t *testing.T) {
	env := miniapitest.Start(t, miniapitest.WithControllers("*"))
	cs := kubernetes.NewForConfigOrDie(env.Config)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	ns := "settle"
	env.WaitForControllers(ctx) // the namespace's ServiceAccount, below
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: podTemplate(labels, corev1.RestartPolicyAlways),
		},
	}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	env.WaitForControllers(ctx)
	checkWorkload(t, ctx, cs, ns, 1, 3)
	if sas, err := cs.CoreV1().ServiceAccounts(ns).List(ctx, metav1.ListOptions{}); err != nil || len(sas.Items) != 1 {
		t.Errorf("ServiceAccounts of %s: %v, %v; want default", ns, sas, err)
	}

	scale, err := cs.AppsV1().Deployments(ns).GetScale(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	scale.Spec.Replicas = 5
	if _, err := cs.AppsV1().Deployments(ns).UpdateScale(ctx, "web", scale, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	env.WaitForControllers(ctx)
	checkWorkload(t, ctx, cs, ns, 1, 5)
	got, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.ObservedGeneration != got.Generation || got.Status.Replicas != 5 {
		t.Errorf("Deployment status %+v at generation %d, want observed and 5 replicas", got.Status, got.Generation)
	}

	// Background deletion: the garbage collector removes the
	// ReplicaSet, then its pods (Pending, on no node: at once).
	bg := metav1.DeletePropagationBackground
	if err := cs.AppsV1().Deployments(ns).Delete(ctx, "web", metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil {
		t.Fatal(err)
	}
	env.WaitForControllers(ctx)
	checkWorkload(t, ctx, cs, ns, 0, 0)
}

// checkWorkload checks the counts of ReplicaSets and pods in ns.
func checkWorkload(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns string, wantRS, wantPods int) {
	t.Helper()
	rss, err := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rss.Items) != wantRS || len(pods.Items) != wantPods {
		t.Errorf("right after WaitForControllers: %d ReplicaSets and %d pods, want %d and %d", len(rss.Items), len(pods.Items), wantRS, wantPods)
	}
}

// TestSettleAndWaitFor watches ConfigMaps in process and over HTTP while
// a test writes them, and reads each watch right after Settle or
// WaitFor without waiting: the in-process watch holds every event in its
// channel, and the HTTP watch has had every event written to its
// connection, so a read finds it at once (the client side may still be
// decoding; the read waits for that, bounded).
func TestSettleAndWaitFor(t *testing.T) {
	t.Parallel()
	env := miniapitest.Start(t)
	cs := kubernetes.NewForConfigOrDie(env.Config)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, ok := env.Server.Registry().Snapshot().Lookup("", "v1", "configmaps")
	if !ok {
		t.Fatal("no configmaps")
	}
	noInitial := false
	inProcess, err := res.Store.Watch(ctx, "default", registry.WatchOptions{SendInitialEvents: &noInitial})
	if err != nil {
		t.Fatal(err)
	}
	defer inProcess.Stop()
	overHTTP, err := cs.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer overHTTP.Stop()

	for round, wait := range []func(rv string){
		func(string) { env.Settle(ctx) },
		func(rv string) { env.WaitFor(ctx, rv) },
	} {
		const n = 20
		var rv string
		for i := range n {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d-%d", round, i)}}
			out, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			rv = out.ResourceVersion
		}
		wait(rv)
		for i := range n {
			select {
			case ev := <-inProcess.ResultChan():
				if ev.Object == nil || ev.Type != "ADDED" {
					t.Fatalf("round %d: in-process event %d: %+v", round, i, ev)
				}
			default:
				t.Fatalf("round %d: the in-process watch holds %d of %d events after the wait", round, i, n)
			}
		}
		for i := range n {
			select {
			case ev := <-overHTTP.ResultChan():
				if ev.Type != "ADDED" {
					t.Fatalf("round %d: HTTP event %d: %+v", round, i, ev)
				}
			case <-ctx.Done():
				t.Fatalf("round %d: the HTTP watch had %d of %d events", round, i, n)
			}
		}
	}
}

// TestSettleIgnoresOtherClusters: Settle in one logical cluster waits
// for its own controllers' work queues, not for those of another
// cluster of the process kept busy meanwhile (namespaces created every
// few milliseconds, each giving its controllers work). Counted by
// queue name across the process, as client-go's metrics count them,
// this Settle never returned while the other cluster was busy.
func TestSettleIgnoresOtherClusters(t *testing.T) {
	env := miniapitest.Start(t, miniapitest.WithControllers("*"))
	busy := miniapitest.Start(t, miniapitest.WithControllers("*"))
	cs := kubernetes.NewForConfigOrDie(env.Config)
	busyClient := kubernetes.NewForConfigOrDie(busy.Config)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	churn, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; churn.Err() == nil; i++ {
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("busy-%d", i)}}
			if _, err := busyClient.CoreV1().Namespaces().Create(churn, ns, metav1.CreateOptions{}); err != nil && churn.Err() == nil {
				t.Errorf("create namespace in the busy cluster: %v", err)
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	defer func() {
		stop()
		<-done
	}()

	for i := range 10 {
		name := fmt.Sprintf("settle-%d", i)
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		sctx, scancel := context.WithTimeout(ctx, 10*time.Second)
		env.Settle(sctx) // fails the test if the cluster does not settle
		scancel()
		// Settled means its own controllers are done: the namespace's
		// ServiceAccount exists, read without polling.
		if _, err := cs.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{}); err != nil {
			t.Fatalf("after Settle, namespace %s has no default ServiceAccount: %v", name, err)
		}
	}
}
