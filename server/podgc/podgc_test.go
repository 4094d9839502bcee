package podgc_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapi/miniapi/miniapitest"
	_ "github.com/miniapi/miniapi/server/podgc"
)

// TestPodGC: with this package imported, a server asked for the pod
// garbage collector runs kube's. A pod that is being deleted and was
// never scheduled (a finalizer holds it) is marked Failed by its first
// pass and deleted with no grace period, as kube-controller-manager's
// does it.
func TestPodGC(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The pod is made on a server without the collector, then forked
	// into one with it, so that its first pass, at start, finds it.
	src := miniapitest.Start(t)
	cs := kubernetes.NewForConfigOrDie(src.Config)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "held", Namespace: "default", Finalizers: []string{"example.com/hold"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
	}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Pods("default").Delete(ctx, "held", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	snap, err := src.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	env := miniapitest.Fork(t, snap, miniapitest.WithControllers("podgc"))
	cs = kubernetes.NewForConfigOrDie(env.Config)
	var last *corev1.Pod
	err = wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods("default").Get(ctx, "held", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = p
		grace := p.DeletionGracePeriodSeconds
		return p.Status.Phase == corev1.PodFailed && grace != nil && *grace == 0, nil
	})
	if err != nil {
		t.Fatalf("the unscheduled terminating pod was not marked Failed and deleted at once: %v; last seen phase %q, grace %v",
			err, last.Status.Phase, last.DeletionGracePeriodSeconds)
	}
}
