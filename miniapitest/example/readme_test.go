// Package example is the README's "Testing with miniapi" example, run
// as it is shown.
package example

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/miniapi/miniapi/faults"
	"github.com/miniapi/miniapi/miniapitest"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// README begins

var fixture *miniapitest.Snapshot // built once, forked by every test

func TestMain(m *testing.M) {
	fixture = buildFixture() // a namespace "shop" and a Deployment "web" of 3 pods
	os.Exit(m.Run())
}

func TestScaleUp(t *testing.T) {
	t.Parallel()
	// A private server per test, starting as the fixture, with kube's controllers.
	env := miniapitest.Fork(t, fixture, miniapitest.WithControllers("*"))
	ctx := t.Context()
	cs := kubernetes.NewForConfigOrDie(env.Config)

	// The next two updates of web conflict, as when another writer wins.
	env.Faults.Add(faults.Rule{
		Match: faults.Match{Verbs: []string{"update"}, Resources: []string{"deployments.apps"}, Names: []string{"web"}},
		Error: faults.Conflict(),
		Times: 2,
	})
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		web, err := cs.AppsV1().Deployments("shop").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		web.Spec.Replicas = ptr(int32(5))
		_, err = cs.AppsV1().Deployments("shop").Update(ctx, web, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	env.Settle(ctx) // the controllers have acted on every write: no Eventually
	pods, err := cs.CoreV1().Pods("shop").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil || len(pods.Items) != 5 {
		t.Fatalf("%d pods, want 5 (%v)", len(pods.Items), err) // the log ends with the server's journal
	}
}

// README ends

// buildFixture starts an environment, makes the fixture and snapshots
// it: three pods of web, made by kube's controllers.
func buildFixture() *miniapitest.Snapshot {
	env, stop, err := miniapitest.StartMain(miniapitest.WithControllers("*"), miniapitest.WithNamespaces("shop"))
	if err != nil {
		panic(err)
	}
	defer stop()
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(env.Config)
	labels := map[string]string{"app": "web"}
	web := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(int32(3)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
			},
		},
	}
	if _, err := cs.AppsV1().Deployments("shop").Create(ctx, web, metav1.CreateOptions{}); err != nil {
		panic(err)
	}
	env.Settle(ctx)
	snap, err := env.Snapshot(ctx)
	if err != nil {
		panic(err)
	}
	return snap
}

func ptr[T any](v T) *T { return &v }

// TestREADMEShowsThisExample keeps the README's example the one above.
func TestREADMEShowsThisExample(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.ReadFile("readme_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, block, _ := strings.Cut(string(self), "// README begins\n")
	block, _, _ = strings.Cut(block, "// README ends")
	block = strings.Trim(block, "\n")
	if !strings.Contains(string(readme), "```go\n"+block+"\n```") {
		t.Errorf("README.md's \"Testing with miniapi\" example is not the code between the README markers of readme_test.go")
	}
}
