package e2e

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// startEnvtestOn starts testEnv as a suite run with
// USE_EXISTING_CLUSTER=true and KUBECONFIG naming srv's kubeconfig does
// (envtest reads both from the environment), stopping it when the test
// ends, and returns its rest.Config.
func startEnvtestOn(t *testing.T, srv *serverProc, testEnv *envtest.Environment) *rest.Config {
	t.Helper()
	t.Setenv("KUBECONFIG", srv.kubeconfigPath(t))
	t.Setenv("USE_EXISTING_CLUSTER", "true")
	log.SetLogger(logr.Discard())
	cfg, err := testEnv.Start()
	if err != nil {
		t.Fatalf("envtest: %v", err)
	}
	t.Cleanup(func() {
		if err := testEnv.Stop(); err != nil {
			t.Errorf("envtest stop: %v", err)
		}
	})
	return cfg
}

// envtestFlags are the flags docs/testing.md tells users to start the
// binary with for an envtest suite run with USE_EXISTING_CLUSTER=true.
func envtestFlags(t *testing.T) []string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/testing.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("`miniapi (--controllers=namespace[^`]*)`").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/testing.md shows no `miniapi --controllers=namespace ...` command for envtest suites")
	}
	return strings.Fields(string(m[1]))
}

// TestEnvtestExistingClusterDocFlags starts the binary with the flags
// docs/testing.md gives for running an envtest suite against it and
// does what such suites do (kuberay's among them): create a Pod in a
// namespace with no ServiceAccount, which envtest's kube-apiserver
// admits because it runs without the ServiceAccount admission plugin,
// write Pod and Deployment status by hand, which nothing overwrites
// because no kubelet and no workload controller runs, and keep an object
// whose owner was never created, which no garbage collector deletes.
func TestEnvtestExistingClusterDocFlags(t *testing.T) {
	skipIfShort(t)
	flags := envtestFlags(t)
	srv := startServer(t, t.TempDir(), flags...)
	cfg := startEnvtestOn(t, srv, &envtest.Environment{})
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "suite-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// No serviceaccount controller runs, so the namespace has no
	// "default" ServiceAccount, as under envtest.
	if sas, err := cs.CoreV1().ServiceAccounts(ns.Name).List(ctx, metav1.ListOptions{}); err != nil || len(sas.Items) != 0 {
		t.Fatalf("ServiceAccounts in a new namespace: %v, %v; want none", sas, err)
	}
	pod, err := cs.CoreV1().Pods(ns.Name).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "head"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "ray", Image: "rayproject/ray"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a Pod in a namespace without a default ServiceAccount: %v (envtest admits it)", err)
	}
	if pod.Spec.ServiceAccountName != "" || pod.Spec.NodeName != "" {
		t.Errorf("new Pod: serviceAccountName %q, nodeName %q; want both empty (no ServiceAccount admission, no scheduler)", pod.Spec.ServiceAccountName, pod.Spec.NodeName)
	}
	pod.Status.Phase = corev1.PodRunning
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	if _, err := cs.CoreV1().Pods(ns.Name).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("write a Pod's status by hand: %v", err)
	}

	// An object owned by one never created: envtest runs no garbage
	// collector, so it stays (kube-controller-manager's would delete it).
	orphan := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owned", OwnerReferences: []metav1.OwnerReference{{
		APIVersion: "apps/v1", Kind: "Deployment", Name: "never-created", UID: types.UID("4c8a3b1e-0000-4000-8000-000000000001"),
	}}}}
	if _, err := cs.CoreV1().ConfigMaps(ns.Name).Create(ctx, orphan, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	replicas := int32(2)
	labels := map[string]string{"app": "web"}
	d, err := cs.AppsV1().Deployments(ns.Name).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 2, UpdatedReplicas: 2}
	if _, err := cs.AppsV1().Deployments(ns.Name).UpdateStatus(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("write a Deployment's status by hand: %v", err)
	}

	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil || len(nodes.Items) != 0 {
		t.Fatalf("nodes: %v, %v; want none", nodes, err)
	}
	got, err := cs.CoreV1().Pods(ns.Name).Get(ctx, "head", metav1.GetOptions{})
	if err != nil || got.Status.Phase != corev1.PodRunning {
		t.Fatalf("Pod after its status was written: %v, %v; want Running", got, err)
	}
	// The deployment controller is off: the status written stays, and no
	// ReplicaSet is made for it. Namespace deletion still finishes (the
	// namespace controller is on, kinder than envtest's Terminating
	// forever).
	if rs, err := cs.AppsV1().ReplicaSets(ns.Name).List(ctx, metav1.ListOptions{}); err != nil || len(rs.Items) != 0 {
		t.Errorf("ReplicaSets: %v, %v; want none (no deployment controller)", rs, err)
	}
	// envtest's kube-apiserver adds the garbage collector's finalizers
	// though no collector runs: a Job deleted in the foreground stays.
	job, err := cs.BatchV1().Jobs(ns.Name).Create(ctx, &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "trial"},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "c", Image: "busybox"}},
		}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	foreground := metav1.DeletePropagationForeground
	if err := cs.BatchV1().Jobs(ns.Name).Delete(ctx, job.Name, metav1.DeleteOptions{PropagationPolicy: &foreground}); err != nil {
		t.Fatal(err)
	}
	if got, err := cs.BatchV1().Jobs(ns.Name).Get(ctx, job.Name, metav1.GetOptions{}); err != nil || got.DeletionTimestamp == nil || !slices.Contains(got.Finalizers, metav1.FinalizerDeleteDependents) {
		t.Errorf("Job deleted in the foreground: %v, %v; want it kept with the foregroundDeletion finalizer", got, err)
	}

	// Long enough for a garbage collector to have acted (miniapi's takes
	// milliseconds); the ConfigMap must still be there.
	time.Sleep(time.Second)
	if _, err := cs.CoreV1().ConfigMaps(ns.Name).Get(ctx, "owned", metav1.GetOptions{}); err != nil {
		t.Errorf("ConfigMap owned by an object never created: %v; want it kept (no garbage collector)", err)
	}
	if err := cs.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for {
		_, err := cs.CoreV1().Namespaces().Get(ctx, ns.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("namespace %s not deleted: %v", ns.Name, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
