package miniapitest_test

import (
	"context"
	"testing"
	"time"

	"github.com/miniapi/miniapi/miniapitest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// An environment is envtest-like by default: a pod is stored as written,
// with no service account given by admission. With every controller and
// the server's whole admission chain it gets what a cluster gives it:
// the default ServiceAccount (made by kube's controller), its token
// volume, and the default tolerations.
func TestAdmissionDefaults(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	plain := miniapitest.Start(t)
	got, err := kubernetes.NewForConfigOrDie(plain.Config).CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.ServiceAccountName != "" || len(got.Spec.Volumes) != 0 {
		t.Errorf("default environment: serviceAccountName %q, volumes %v; want the pod as written", got.Spec.ServiceAccountName, got.Spec.Volumes)
	}

	full := miniapitest.Start(t, miniapitest.WithControllers("*"), miniapitest.WithAdmissionPlugins(nil, nil))
	// The ServiceAccount plugin waits a moment for the controller's
	// default ServiceAccount, as kube's does.
	got, err = kubernetes.NewForConfigOrDie(full.Config).CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.ServiceAccountName != "default" {
		t.Errorf("serviceAccountName = %q, want default", got.Spec.ServiceAccountName)
	}
	if len(got.Spec.Volumes) != 1 || got.Spec.Volumes[0].Projected == nil {
		t.Errorf("volumes = %+v, want the projected service account token", got.Spec.Volumes)
	}
	tolerations := map[string]bool{}
	for _, tol := range got.Spec.Tolerations {
		if tol.TolerationSeconds != nil && *tol.TolerationSeconds == 300 {
			tolerations[tol.Key] = true
		}
	}
	if !tolerations["node.kubernetes.io/not-ready"] || !tolerations["node.kubernetes.io/unreachable"] {
		t.Errorf("tolerations = %+v, want DefaultTolerationSeconds' two", got.Spec.Tolerations)
	}
}
