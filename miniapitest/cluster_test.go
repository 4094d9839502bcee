package miniapitest_test

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/miniapi/miniapi/cluster"
	"github.com/miniapi/miniapi/miniapitest"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	utilptr "k8s.io/utils/ptr"
)

func newPod(name string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func createPods(t *testing.T, ctx context.Context, cs kubernetes.Interface, pods ...*corev1.Pod) {
	t.Helper()
	for _, p := range pods {
		if _, err := cs.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

func getPod(t *testing.T, ctx context.Context, cs kubernetes.Interface, name string) *corev1.Pod {
	t.Helper()
	p, err := cs.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func condition(p *corev1.Pod, typ corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == typ {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func isTrue(p *corev1.Pod, typ corev1.PodConditionType) bool {
	c := condition(p, typ)
	return c != nil && c.Status == corev1.ConditionTrue
}

// With the cluster on, nodes are Ready with their Leases, and a pod is
// scheduled to one and runs: an IP of that node's podCIDR, the node's
// IP as hostIP, a start time, running containers and a cluster's
// conditions.
func TestClusterRunsPods(t *testing.T) {
	env := miniapitest.Start(t, miniapitest.WithCluster(2))
	cs := kubernetes.NewForConfigOrDie(env.Config)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	env.WaitForNodes(ctx)

	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 2 {
		t.Fatalf("%d nodes, want 2", len(nodes.Items))
	}
	byName := map[string]*corev1.Node{}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		byName[n.Name] = n
		ready := false
		for _, c := range n.Status.Conditions {
			ready = ready || (c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue)
		}
		if !ready || n.Spec.PodCIDR == "" || n.Status.Allocatable.Cpu().IsZero() || n.Labels[corev1.LabelHostname] != n.Name {
			t.Errorf("node %s: ready %v, podCIDR %q, allocatable %v, labels %v", n.Name, ready, n.Spec.PodCIDR, n.Status.Allocatable, n.Labels)
		}
		lease, err := cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, n.Name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("lease of %s: %v", n.Name, err)
		} else if lease.Spec.RenewTime == nil || *lease.Spec.HolderIdentity != n.Name {
			t.Errorf("lease of %s: %+v", n.Name, lease.Spec)
		}
	}

	createPods(t, ctx, cs, newPod("web"))
	env.WaitForScheduler(ctx)
	env.WaitForKubelet(ctx)
	p := getPod(t, ctx, cs, "web")
	node := byName[p.Spec.NodeName]
	if node == nil {
		t.Fatalf("pod bound to %q, not a node", p.Spec.NodeName)
	}
	if p.Status.Phase != corev1.PodRunning || p.Status.StartTime == nil {
		t.Fatalf("phase %s, startTime %v; want Running with a start time", p.Status.Phase, p.Status.StartTime)
	}
	cidr := netip.MustParsePrefix(node.Spec.PodCIDR)
	if ip, err := netip.ParseAddr(p.Status.PodIP); err != nil || !cidr.Contains(ip) || len(p.Status.PodIPs) != 1 {
		t.Errorf("podIP %q (podIPs %v), want one in %s", p.Status.PodIP, p.Status.PodIPs, cidr)
	}
	if p.Status.HostIP != node.Status.Addresses[0].Address {
		t.Errorf("hostIP %q, want the node's %q", p.Status.HostIP, node.Status.Addresses[0].Address)
	}
	for _, typ := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		if !isTrue(p, typ) {
			t.Errorf("condition %s not True: %+v", typ, p.Status.Conditions)
		}
	}
	if len(p.Status.ContainerStatuses) != 1 || p.Status.ContainerStatuses[0].State.Running == nil ||
		!p.Status.ContainerStatuses[0].Ready || p.Status.ContainerStatuses[0].ContainerID == "" {
		t.Errorf("container statuses %+v, want c running and ready", p.Status.ContainerStatuses)
	}

	// A second pod gets another IP and, spread by the scheduler, the
	// other node.
	createPods(t, ctx, cs, newPod("web2"))
	env.WaitForScheduler(ctx)
	env.WaitForKubelet(ctx)
	p2 := getPod(t, ctx, cs, "web2")
	if p2.Status.PodIP == p.Status.PodIP || p2.Spec.NodeName == p.Spec.NodeName {
		t.Errorf("second pod on %s with IP %s; first on %s with %s", p2.Spec.NodeName, p2.Status.PodIP, p.Spec.NodeName, p.Status.PodIP)
	}
}

// The scheduler follows nodeSelector, taints and tolerations, cordons
// and requests; a pod no node can take stays Pending with
// PodScheduled=False (Unschedulable) and is bound once a node can take
// it.
func TestSchedulerRules(t *testing.T) {
	env := miniapitest.Start(t, miniapitest.WithNodes(3), miniapitest.WithScheduler())
	cs := kubernetes.NewForConfigOrDie(env.Config)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	env.WaitForNodes(ctx)

	// node-0: tainted; node-1: disk=ssd; node-2: cordoned.
	patch := func(name, body string) {
		t.Helper()
		if _, err := cs.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType, []byte(body), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	patch("node-0", `{"spec":{"taints":[{"key":"dedicated","value":"gpu","effect":"NoSchedule"}]}}`)
	patch("node-1", `{"metadata":{"labels":{"disk":"ssd"}}}`)
	patch("node-2", `{"spec":{"unschedulable":true}}`)
	env.WaitForNodes(ctx)

	createPods(t, ctx, cs,
		newPod("plain"),
		newPod("ssd", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"disk": "ssd"} }),
		newPod("gpu", func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
					{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{"node-0"}},
				}}},
			}}}
		}),
		newPod("nowhere", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"disk": "nvme"} }),
		newPod("huge", func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1000")}
		}),
		newPod("other-scheduler", func(p *corev1.Pod) { p.Spec.SchedulerName = "custom" }),
	)
	env.WaitForScheduler(ctx)

	for name, want := range map[string]string{"plain": "node-1", "ssd": "node-1", "gpu": "node-0", "other-scheduler": ""} {
		if got := getPod(t, ctx, cs, name).Spec.NodeName; got != want {
			t.Errorf("pod %s on %q, want %q", name, got, want)
		}
	}
	for name, why := range map[string]string{
		"nowhere": "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint {dedicated: gpu}, 1 node(s) were unschedulable.",
		"huge":    "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {dedicated: gpu}, 1 node(s) were unschedulable.",
	} {
		p := getPod(t, ctx, cs, name)
		c := condition(p, corev1.PodScheduled)
		if p.Spec.NodeName != "" || p.Status.Phase != corev1.PodPending || c == nil || c.Status != corev1.ConditionFalse ||
			c.Reason != corev1.PodReasonUnschedulable || c.Message != why {
			t.Errorf("pod %s: node %q, phase %s, PodScheduled %+v; want Pending, Unschedulable: %s", name, p.Spec.NodeName, p.Status.Phase, c, why)
		}
	}

	// A node that matches comes: the unschedulable pod is bound to it.
	patch("node-1", `{"metadata":{"labels":{"disk":"nvme"}}}`)
	env.WaitForScheduler(ctx)
	if got := getPod(t, ctx, cs, "nowhere").Spec.NodeName; got != "node-1" {
		t.Errorf("pod nowhere on %q after node-1 was labelled disk=nvme, want node-1", got)
	}
}

// A Job's pod completes (Succeeded, its container exited 0), or fails
// with the exit code its annotation gives; a pod's readiness waits for
// its annotation's delay, or never comes.
func TestKubeletStages(t *testing.T) {
	env := miniapitest.Start(t, miniapitest.WithCluster(1))
	cs := kubernetes.NewForConfigOrDie(env.Config)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// No job controller runs here: the pods are made by hand, owned by a
	// Job as the controller's would be (so that the garbage collector
	// keeps them).
	job, err := cs.BatchV1().Jobs("default").Create(ctx, &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "job"},
		Spec: batchv1.JobSpec{Suspend: utilptr.To(true), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
		}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ofJob := func(p *corev1.Pod) {
		p.Labels = map[string]string{"batch.kubernetes.io/job-name": "job", "job-name": "job"}
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID, Controller: utilptr.To(true), BlockOwnerDeletion: utilptr.To(true)}}
		p.Spec.RestartPolicy = corev1.RestartPolicyNever
	}
	readyAfter := 300 * time.Millisecond
	// Before the creates: the slow pod's delay runs from its start,
	// which is after this.
	created := time.Now()
	createPods(t, ctx, cs,
		newPod("job-ok", ofJob),
		newPod("job-fail", ofJob, func(p *corev1.Pod) { p.Annotations = map[string]string{cluster.ExitCodeAnnotation: "3"} }),
		newPod("not-a-job", func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyNever }),
		newPod("never-ready", func(p *corev1.Pod) { p.Annotations = map[string]string{cluster.ReadyAnnotation: "false"} }),
		newPod("slow", func(p *corev1.Pod) {
			p.Annotations = map[string]string{cluster.ReadyAfterAnnotation: readyAfter.String()}
		}),
	)
	env.WaitForScheduler(ctx)
	env.WaitForKubelet(ctx)

	ok := getPod(t, ctx, cs, "job-ok")
	if ok.Status.Phase != corev1.PodSucceeded || ok.Status.ContainerStatuses[0].State.Terminated == nil ||
		ok.Status.ContainerStatuses[0].State.Terminated.ExitCode != 0 || isTrue(ok, corev1.PodReady) {
		t.Errorf("job-ok: phase %s, containers %+v; want Succeeded, exit 0, not Ready", ok.Status.Phase, ok.Status.ContainerStatuses)
	}
	fail := getPod(t, ctx, cs, "job-fail")
	if fail.Status.Phase != corev1.PodFailed || fail.Status.ContainerStatuses[0].State.Terminated == nil ||
		fail.Status.ContainerStatuses[0].State.Terminated.ExitCode != 3 {
		t.Errorf("job-fail: phase %s, containers %+v; want Failed, exit 3", fail.Status.Phase, fail.Status.ContainerStatuses)
	}
	if p := getPod(t, ctx, cs, "not-a-job"); p.Status.Phase != corev1.PodRunning {
		t.Errorf("not-a-job: phase %s, want Running (only a Job's pods complete)", p.Status.Phase)
	}
	if p := getPod(t, ctx, cs, "never-ready"); p.Status.Phase != corev1.PodRunning || isTrue(p, corev1.PodReady) ||
		condition(p, corev1.PodReady).Reason != "ContainersNotReady" {
		t.Errorf("never-ready: phase %s, conditions %+v; want Running, not Ready", p.Status.Phase, p.Status.Conditions)
	}
	// Read first, then look at the clock: an answer that arrives before
	// the delay has passed since the pod was created was read before it
	// could become Ready, however slow the machine.
	if p := getPod(t, ctx, cs, "slow"); time.Since(created) < readyAfter {
		if p.Status.Phase != corev1.PodRunning || isTrue(p, corev1.PodReady) {
			t.Errorf("slow, before its delay: phase %s, Ready %v; want Running, not Ready", p.Status.Phase, isTrue(p, corev1.PodReady))
		}
	}
	for {
		p := getPod(t, ctx, cs, "slow")
		if isTrue(p, corev1.PodReady) {
			if wait := condition(p, corev1.PodReady).LastTransitionTime.Sub(p.Status.StartTime.Time); wait < readyAfter-time.Second {
				t.Errorf("slow became Ready %v after its start, want %v", wait, readyAfter)
			}
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("slow never became Ready")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// A deleted running pod stays, terminating, for its grace period, then
// its containers end and it is deleted, as a kubelet deletes it.
func TestKubeletGracePeriod(t *testing.T) {
	env := miniapitest.Start(t, miniapitest.WithCluster(1))
	cs := kubernetes.NewForConfigOrDie(env.Config)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	createPods(t, ctx, cs, newPod("web"))
	env.WaitForScheduler(ctx)
	env.WaitForKubelet(ctx)

	// deletionTimestamp, when the kubelet ends the containers, has a
	// resolution of a second: the pod may go up to a second before
	// start+grace, so the grace is long enough to look inside it.
	grace := int64(3)
	start := time.Now()
	if err := cs.CoreV1().Pods("default").Delete(ctx, "web", metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
		t.Fatal(err)
	}
	env.WaitForKubelet(ctx)
	p, err := cs.CoreV1().Pods("default").Get(ctx, "web", metav1.GetOptions{})
	if time.Since(start) < time.Duration(grace)*time.Second-time.Second-100*time.Millisecond {
		if err != nil || p.DeletionTimestamp == nil || p.Status.Phase != corev1.PodRunning {
			t.Fatalf("within the grace period: %v, %+v; want the pod Running, terminating", err, p)
		}
	}
	for {
		_, err := cs.CoreV1().Pods("default").Get(ctx, "web", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-ctx.Done():
			p, _ := cs.CoreV1().Pods("default").Get(context.Background(), "web", metav1.GetOptions{})
			t.Fatalf("pod not deleted after its grace period: %+v %+v", p.ObjectMeta, p.Status)
		case <-time.After(50 * time.Millisecond):
		}
	}
	// deletionTimestamp has a resolution of a second.
	if took := time.Since(start); took < time.Duration(grace)*time.Second-time.Second || took > 10*time.Second {
		t.Errorf("pod deleted after %v, want about its grace period, %ds", took, grace)
	}
}
