package miniapitest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/miniapi/miniapi/miniapitest"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// These tests run kube-controller-manager's controllers in the server
// with no nodes, scheduler or kubelet: pods stay Pending unless a test
// sets their status by hand, as a kubelet would.
func TestKubeControllers(t *testing.T) {
	env := miniapitest.Start(t, miniapitest.WithControllers("*"))
	cs := kubernetes.NewForConfigOrDie(env.Config)

	t.Run("deployment", func(t *testing.T) {
		ctx, ns := controllersNamespace(t, cs, "deploy")
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
		waitFor(t, ctx, "a ReplicaSet of web and its 3 pods", func() (bool, error) {
			rss, err := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
			if err != nil || len(rss.Items) != 1 {
				return false, err
			}
			if owner := metav1.GetControllerOf(&rss.Items[0]); owner == nil || owner.Name != "web" {
				return false, fmt.Errorf("ReplicaSet %s is not controlled by web: %v", rss.Items[0].Name, owner)
			}
			pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err
			}
			for _, p := range pods.Items {
				if owner := metav1.GetControllerOf(&p); owner == nil || owner.Name != rss.Items[0].Name {
					return false, fmt.Errorf("pod %s is not controlled by the ReplicaSet: %v", p.Name, owner)
				}
			}
			return len(pods.Items) == 3, nil
		})
	})

	t.Run("job", func(t *testing.T) {
		ctx, ns := controllersNamespace(t, cs, "job")
		j := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: "once"},
			Spec:       batchv1.JobSpec{Template: podTemplate(nil, corev1.RestartPolicyNever)},
		}
		if _, err := cs.BatchV1().Jobs(ns).Create(ctx, j, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var pod *corev1.Pod
		waitFor(t, ctx, "the Job's pod", func() (bool, error) {
			pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "job-name=once"})
			if err != nil || len(pods.Items) == 0 {
				return false, err
			}
			pod = &pods.Items[0]
			return true, nil
		})
		// What a kubelet would write once the container exited 0.
		now := metav1.Now()
		pod.Status.Phase = corev1.PodSucceeded
		pod.Status.StartTime = &now
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{
			Name: "main", Image: "busybox",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: now, FinishedAt: now}},
		}}
		if _, err := cs.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, ctx, "the Job to complete", func() (bool, error) {
			j, err := cs.BatchV1().Jobs(ns).Get(ctx, "once", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			for _, c := range j.Status.Conditions {
				if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
					return j.Status.Succeeded == 1, nil
				}
			}
			return false, nil
		})
	})

	t.Run("endpointslices", func(t *testing.T) {
		ctx, ns := controllersNamespace(t, cs, "svc")
		// The EndpointSlice controller skips pods on nodes it does not
		// know; no node is simulated here, so make one.
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ns + "-node"}}
		if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cs.CoreV1().Nodes().Delete(context.Background(), node.Name, metav1.DeleteOptions{})
		})
		labels := map[string]string{"app": "api"}
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "api"},
			Spec: corev1.ServiceSpec{
				Selector: labels,
				Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}},
			},
		}
		if _, err := cs.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		ready := map[string]bool{}
		for i, ip := range []string{"10.244.0.10", "10.244.0.11", "10.244.0.12"} {
			p := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("api-%d", i), Labels: labels},
				Spec:       podTemplate(labels, corev1.RestartPolicyAlways).Spec,
			}
			p.Spec.NodeName = node.Name
			p, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if i == 2 {
				continue // left Pending, without an IP: not an endpoint
			}
			setPodRunning(t, ctx, cs, p, ip)
			ready[ip] = true
		}
		waitFor(t, ctx, "an EndpointSlice of api listing the two ready pods", func() (bool, error) {
			slices, err := cs.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=api"})
			if err != nil {
				return false, err
			}
			got := map[string]bool{}
			for _, s := range slices.Items {
				for _, e := range s.Endpoints {
					if e.Conditions.Ready != nil && *e.Conditions.Ready {
						got[e.Addresses[0]] = true
					}
				}
			}
			return fmt.Sprint(got) == fmt.Sprint(ready), nil
		})
	})

	t.Run("root CA", func(t *testing.T) {
		ctx, ns := controllersNamespace(t, cs, "ca")
		waitFor(t, ctx, "kube-root-ca.crt", func() (bool, error) {
			cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			if want := string(env.Config.CAData); cm.Data["ca.crt"] != want {
				return false, fmt.Errorf("ca.crt is %q, want the server's CA %q", cm.Data["ca.crt"], want)
			}
			return true, nil
		})
		// The ServiceAccount controller is another controller, on
		// its own schedule: the ConfigMap says nothing of it.
		waitFor(t, ctx, "the default ServiceAccount", func() (bool, error) {
			_, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
			return err == nil, err
		})
	})

	t.Run("resource quota", func(t *testing.T) {
		ctx, ns := controllersNamespace(t, cs, "quota")
		q := &corev1.ResourceQuota{
			ObjectMeta: metav1.ObjectMeta{Name: "q"},
			Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
				corev1.ResourcePods:      resource.MustParse("10"),
				corev1.ResourceSecrets:   resource.MustParse("10"),
				"count/deployments.apps": resource.MustParse("5"),
			}},
		}
		if _, err := cs.CoreV1().ResourceQuotas(ns).Create(ctx, q, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// As kube's own quota e2e tests do, wait for the controller's
		// first status before creating what the quota counts: the quota
		// admission plugin charges creates only once it sees the quota,
		// and the controller recounts on updates and deletes, not on
		// creates (until its 5-minute resync). Settle makes sure the
		// plugin's informer has seen the quota and its status.
		waitFor(t, ctx, "the quota's first status", func() (bool, error) {
			q, err := cs.CoreV1().ResourceQuotas(ns).Get(ctx, "q", metav1.GetOptions{})
			return err == nil && len(q.Status.Hard) == 3, err
		})
		env.Settle(ctx)
		for i := range 2 {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i)}, Spec: podTemplate(nil, corev1.RestartPolicyAlways).Spec}
			if _, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		waitFor(t, ctx, "the quota's usage", func() (bool, error) {
			q, err := cs.CoreV1().ResourceQuotas(ns).Get(ctx, "q", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			pods, secrets := q.Status.Used[corev1.ResourcePods], q.Status.Used[corev1.ResourceSecrets]
			deployments, ok := q.Status.Used["count/deployments.apps"]
			if len(q.Status.Hard) == 3 && pods.Value() == 2 && secrets.Value() == 0 && ok && deployments.Value() == 0 {
				return true, nil
			}
			// What the controller wrote last, should the wait fail.
			return false, fmt.Errorf("status: hard %v, used %v (resourceVersion %s)", q.Status.Hard, q.Status.Used, q.ResourceVersion)
		})
	})

	t.Run("disruption budget", func(t *testing.T) {
		ctx, ns := controllersNamespace(t, cs, "pdb")
		labels := map[string]string{"app": "db"}
		pdb := &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: "db"},
			Spec: policyv1.PodDisruptionBudgetSpec{
				MinAvailable: ptr(intstr.FromInt32(1)),
				Selector:     &metav1.LabelSelector{MatchLabels: labels},
			},
		}
		if _, err := cs.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for i, ip := range []string{"10.244.1.10", "10.244.1.11"} {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("db-%d", i), Labels: labels}, Spec: podTemplate(nil, corev1.RestartPolicyAlways).Spec}
			p, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			setPodRunning(t, ctx, cs, p, ip)
		}
		waitFor(t, ctx, "the budget's status", func() (bool, error) {
			pdb, err := cs.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "db", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			s := pdb.Status
			return s.ExpectedPods == 2 && s.CurrentHealthy == 2 && s.DesiredHealthy == 1 && s.DisruptionsAllowed == 1, nil
		})
	})
}

// controllersNamespace makes a namespace for one subtest and a context
// bounding its waits.
func controllersNamespace(t *testing.T, cs kubernetes.Interface, name string) (context.Context, string) {
	t.Helper()
	// kube's controllers start in the background after the server and,
	// the quota controller first, list what they watch: on a loaded
	// machine under -race that takes seconds.
	ctx, cancel := context.WithTimeout(t.Context(), 3*testTimeout)
	t.Cleanup(cancel)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kcm-" + name}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return ctx, ns.Name
}

// podTemplate is one busybox container with the given labels.
func podTemplate(labels map[string]string, restart corev1.RestartPolicy) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{
			RestartPolicy: restart,
			Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
		},
	}
}

// setPodRunning writes what a kubelet would once p's container has
// started and passed its readiness checks.
func setPodRunning(t *testing.T, ctx context.Context, cs kubernetes.Interface, p *corev1.Pod, ip string) {
	t.Helper()
	now := metav1.Now()
	p.Status = corev1.PodStatus{
		Phase:     corev1.PodRunning,
		PodIP:     ip,
		PodIPs:    []corev1.PodIP{{IP: ip}},
		StartTime: &now,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		},
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: "main", Image: "busybox", Ready: true, Started: ptr(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		}},
	}
	if _, err := cs.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond until it holds, fails, or ctx ends.
func waitFor(t *testing.T, ctx context.Context, what string, cond func() (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(context.Context) (bool, error) {
		ok, err := cond()
		last = err
		return ok, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v (last error: %v)", what, err, last)
	}
}
