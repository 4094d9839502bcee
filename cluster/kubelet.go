package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// Kubelet runs, on paper, the pods bound to simulated nodes: each pod
// goes through the stages below, each written through pods/status as a
// kubelet writes it. A stage applies when the pod is in the state it
// starts from, after its delay; a pod waiting for a delay is queued
// again for that moment, not polled.
//
//	start     Pending (bound)   → Running: pod IP from the node's podCIDR (the node's
//	                              IP with hostNetwork), startTime, containers running,
//	                              conditions PodReadyToStartContainers, Initialized,
//	                              ContainersReady and Ready (True unless readiness waits)
//	ready     Running, not Ready → Ready, ReadyAfterAnnotation after the start;
//	                              never with ReadyAnnotation "false"
//	complete  Running           → Succeeded, or Failed with a non-zero
//	                              ExitCodeAnnotation (restartPolicy OnFailure: the
//	                              containers restart, with kubelet's back-off); for
//	                              restartPolicy Never and OnFailure pods of a Job after
//	                              Config.CompleteAfter, of any pod with
//	                              CompleteAfterAnnotation after that
//	terminate deleted           → containers exit when the grace period ends
//	                              (deletionTimestamp), then the pod is deleted with
//	                              grace period 0; at once if it never ran or has ended
type Kubelet struct {
	client        kubernetes.Interface
	pods          corelisters.PodLister
	nodes         corelisters.NodeLister
	store         cache.Store
	log           *slog.Logger
	loop          *loop
	completeAfter time.Duration

	// mu protects ips, written and started.
	mu sync.Mutex
	// ips are the pod IPs in use, by node, with their pod.
	ips map[string]map[netip.Addr]types.UID
	// written is the resourceVersion of each pod's last status write, so
	// that an older copy the informer still holds is not acted on again.
	written map[types.UID]string
	// started is when the kubelet last started each pod's containers,
	// to the nanosecond: the API keeps whole seconds, and a delay of
	// less than a second counted from those could be over at once.
	started map[types.UID]time.Time
}

func newKubelet(cfg Config) (*Kubelet, error) {
	k := &Kubelet{
		client: cfg.Client, pods: cfg.Pods.Lister(), nodes: cfg.Nodes.Lister(),
		store: cfg.Pods.Informer().GetStore(), log: cfg.Logger.With("component", "kubelet"),
		completeAfter: cfg.CompleteAfter,
		ips:           map[string]map[netip.Addr]types.UID{},
		written:       map[types.UID]string{},
		started:       map[types.UID]time.Time{},
	}
	k.loop = newLoop("kubelet", k.log, k.sync)
	if _, err := cfg.Pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { k.podChanged(obj, false) },
		UpdateFunc: func(_, cur any) { k.podChanged(cur, false) },
		DeleteFunc: func(obj any) { k.podChanged(obj, true) },
	}); err != nil {
		return nil, err
	}
	// A node adopted after its pods were bound: run them now.
	_, err := cfg.Nodes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			node := obj.(*corev1.Node)
			for _, p := range k.store.List() {
				if p.(*corev1.Pod).Spec.NodeName == node.Name {
					k.loop.add(p)
				}
			}
		},
	})
	return k, err
}

// podChanged keeps the IPs in use and queues bound pods.
func (k *Kubelet) podChanged(obj any, deleted bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Spec.NodeName == "" {
		return
	}
	k.mu.Lock()
	ip, err := netip.ParseAddr(pod.Status.PodIP)
	switch {
	case deleted || isTerminal(pod):
		if err == nil && k.ips[pod.Spec.NodeName][ip] == pod.UID {
			delete(k.ips[pod.Spec.NodeName], ip)
		}
		if deleted {
			delete(k.written, pod.UID)
			delete(k.started, pod.UID)
		}
	case err == nil && !pod.Spec.HostNetwork:
		if k.ips[pod.Spec.NodeName] == nil {
			k.ips[pod.Spec.NodeName] = map[netip.Addr]types.UID{}
		}
		k.ips[pod.Spec.NodeName][ip] = pod.UID
	}
	k.mu.Unlock()
	if !deleted {
		k.loop.add(pod)
	}
}

// kubeletWorkers is how many pods the kubelet writes at once.
const kubeletWorkers = 4

func (k *Kubelet) run(ctx context.Context) { k.loop.run(ctx, kubeletWorkers) }

// stage is one step of a pod's life; see Kubelet.
type stage struct {
	name string
	// due reports whether the stage applies to pod, and from when.
	due func(k *Kubelet, pod *corev1.Pod) (time.Time, bool)
	// apply makes the step.
	apply func(k *Kubelet, ctx context.Context, pod *corev1.Pod, node *corev1.Node, now time.Time) error
}

var stages = []stage{
	{name: "terminate", due: terminateDue, apply: (*Kubelet).terminate},
	{name: "start", due: startDue, apply: (*Kubelet).start},
	{name: "complete", due: completeDue, apply: (*Kubelet).complete},
	{name: "ready", due: readyDue, apply: (*Kubelet).ready},
}

// sync applies the earliest stage due for a pod, or queues it for when
// one will be.
func (k *Kubelet) sync(ctx context.Context, key string) error {
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	pod, err := k.pods.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil || pod.Spec.NodeName == "" {
		return err
	}
	node, err := k.nodes.Get(pod.Spec.NodeName)
	if apierrors.IsNotFound(err) || (err == nil && !isSimulated(node)) {
		return nil // no kubelet of ours there
	}
	if err != nil {
		return err
	}
	k.mu.Lock()
	stale := rvNewer(k.written[pod.UID], pod.ResourceVersion)
	k.mu.Unlock()
	if stale {
		return nil // the informer brings our write, and the pod back
	}
	var next *stage
	var at time.Time
	for i := range stages {
		if t, ok := stages[i].due(k, pod); ok && (next == nil || t.Before(at)) {
			next, at = &stages[i], t
		}
	}
	if next == nil {
		return nil
	}
	now := time.Now()
	if wait := at.Sub(now); wait > 0 {
		k.loop.queue.AddAfter(key, wait)
		return nil
	}
	if err := next.apply(k, ctx, pod, node, now); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("%s: %w", next.name, err)
	}
	return nil
}

// writeStatus writes pod's status and records the write.
func (k *Kubelet) writeStatus(ctx context.Context, pod *corev1.Pod) error {
	got, err := k.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	if err != nil {
		return err
	}
	k.mu.Lock()
	k.written[got.UID] = got.ResourceVersion
	k.mu.Unlock()
	return nil
}

func terminateDue(_ *Kubelet, pod *corev1.Pod) (time.Time, bool) {
	if pod.DeletionTimestamp == nil {
		return time.Time{}, false
	}
	if pod.Status.StartTime == nil || isTerminal(pod) {
		return time.Time{}, true
	}
	return pod.DeletionTimestamp.Time, true
}

// terminate ends a deleted pod's containers, then deletes the pod.
func (k *Kubelet) terminate(ctx context.Context, pod *corev1.Pod, _ *corev1.Node, now time.Time) error {
	if pod.Status.StartTime != nil && !isTerminal(pod) {
		upd := pod.DeepCopy()
		exitContainers(upd, 0, now)
		upd.Status.Phase = corev1.PodSucceeded
		return k.writeStatus(ctx, upd)
	}
	err := k.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0),
		Preconditions:      &metav1.Preconditions{UID: &pod.UID},
	})
	if apierrors.IsConflict(err) {
		return nil // another pod of that name now
	}
	return err
}

func startDue(_ *Kubelet, pod *corev1.Pod) (time.Time, bool) {
	return time.Time{}, pod.Status.StartTime == nil && !isTerminal(pod) && pod.DeletionTimestamp == nil
}

// start runs a bound pod: it gets its IP and its containers run.
func (k *Kubelet) start(ctx context.Context, pod *corev1.Pod, node *corev1.Node, now time.Time) error {
	hostIP, ok := internalIP(node)
	if !ok {
		return fmt.Errorf("node %s has no InternalIP yet", node.Name)
	}
	podIP := hostIP
	if !pod.Spec.HostNetwork {
		var err error
		if podIP, err = k.allocateIP(node, pod.UID); err != nil {
			return err
		}
	}
	upd := pod.DeepCopy()
	st := &upd.Status
	t := metav1.NewTime(now)
	st.Phase = corev1.PodRunning
	st.HostIP, st.HostIPs = hostIP.String(), []corev1.HostIP{{IP: hostIP.String()}}
	st.PodIP, st.PodIPs = podIP.String(), []corev1.PodIP{{IP: podIP.String()}}
	st.StartTime = &t
	ready := readyAt(pod) == time.Duration(0)
	st.InitContainerStatuses = nil
	for _, c := range pod.Spec.InitContainers {
		cs := containerStatus(pod, c, 0)
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			cs.State.Running = &corev1.ContainerStateRunning{StartedAt: t}
			cs.Started, cs.Ready = ptr.To(true), ready
		} else {
			cs.State.Terminated = &corev1.ContainerStateTerminated{Reason: "Completed", StartedAt: t, FinishedAt: t, ContainerID: cs.ContainerID}
			cs.Started, cs.Ready = ptr.To(false), true
		}
		st.InitContainerStatuses = append(st.InitContainerStatuses, cs)
	}
	st.ContainerStatuses = nil
	for _, c := range pod.Spec.Containers {
		cs := containerStatus(pod, c, 0)
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: t}
		cs.Started, cs.Ready = ptr.To(true), ready
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
	}
	setPodCondition(st, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, now)
	setPodCondition(st, corev1.PodCondition{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue}, now)
	setPodCondition(st, corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionTrue}, now)
	setReady(st, pod, ready, "", now)
	k.recordStart(pod, now)
	if err := k.writeStatus(ctx, upd); err != nil {
		if !pod.Spec.HostNetwork {
			k.releaseIP(node.Name, podIP, pod.UID)
		}
		return err
	}
	return nil
}

func readyDue(k *Kubelet, pod *corev1.Pod) (time.Time, bool) {
	if pod.Status.Phase != corev1.PodRunning || pod.Status.StartTime == nil || pod.DeletionTimestamp != nil || podReady(pod) {
		return time.Time{}, false
	}
	after := readyAt(pod)
	if after < 0 {
		return time.Time{}, false
	}
	return k.startTime(pod, pod.Status.StartTime.Time).Add(after), true
}

// ready makes a running pod's containers ready.
func (k *Kubelet) ready(ctx context.Context, pod *corev1.Pod, _ *corev1.Node, now time.Time) error {
	upd := pod.DeepCopy()
	for i := range upd.Status.ContainerStatuses {
		if upd.Status.ContainerStatuses[i].State.Running != nil {
			upd.Status.ContainerStatuses[i].Ready = true
		}
	}
	for i := range upd.Status.InitContainerStatuses {
		if upd.Status.InitContainerStatuses[i].State.Running != nil {
			upd.Status.InitContainerStatuses[i].Ready = true
		}
	}
	setReady(&upd.Status, pod, true, "", now)
	return k.writeStatus(ctx, upd)
}

// readyAt is how long after its start a pod becomes ready; negative for
// never.
func readyAt(pod *corev1.Pod) time.Duration {
	if pod.Annotations[ReadyAnnotation] == "false" {
		return -1
	}
	if d, err := time.ParseDuration(pod.Annotations[ReadyAfterAnnotation]); err == nil && d > 0 {
		return d
	}
	return 0
}

func completeDue(k *Kubelet, pod *corev1.Pod) (time.Time, bool) {
	if pod.Status.Phase != corev1.PodRunning || pod.DeletionTimestamp != nil || len(pod.Status.ContainerStatuses) == 0 {
		return time.Time{}, false
	}
	after, ok := k.runsFor(pod)
	running := pod.Status.ContainerStatuses[0].State.Running
	if !ok || running == nil {
		return time.Time{}, false
	}
	if restarts := pod.Status.ContainerStatuses[0].RestartCount; restarts > 0 {
		after = max(after, restartBackoff(restarts))
	}
	return k.startTime(pod, running.StartedAt.Time).Add(after), true
}

// startTime is when pod's containers last started: the kubelet's own
// record when it has one for the second the API shows (api), else api.
func (k *Kubelet) startTime(pod *corev1.Pod, api time.Time) time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	if t, ok := k.started[pod.UID]; ok && t.Unix() == api.Unix() {
		return t
	}
	return api
}

// recordStart notes that pod's containers (re)started at now.
func (k *Kubelet) recordStart(pod *corev1.Pod, now time.Time) {
	k.mu.Lock()
	k.started[pod.UID] = now
	k.mu.Unlock()
}

// runsFor is how long a pod's containers run before they exit, if they
// do: a Job's pods and pods with CompleteAfterAnnotation, when their
// restartPolicy lets them end.
func (k *Kubelet) runsFor(pod *corev1.Pod) (time.Duration, bool) {
	if pod.Spec.RestartPolicy != corev1.RestartPolicyNever && pod.Spec.RestartPolicy != corev1.RestartPolicyOnFailure {
		return 0, false
	}
	if v, ok := pod.Annotations[CompleteAfterAnnotation]; ok {
		d, err := time.ParseDuration(v)
		return max(d, 0), err == nil
	}
	if ref := metav1.GetControllerOf(pod); ref != nil && ref.Kind == "Job" && strings.HasPrefix(ref.APIVersion, "batch/") {
		return k.completeAfter, true
	}
	return 0, false
}

// restartBackoff is kubelet's crash loop back-off before restart n: 10 s,
// doubled each time, at most 5 minutes.
func restartBackoff(n int32) time.Duration {
	d := 10 * time.Second
	for i := int32(1); i < n && d < 5*time.Minute; i++ {
		d *= 2
	}
	return min(d, 5*time.Minute)
}

// complete makes a pod's containers exit with the code its annotation
// gives: the pod ends, or with restartPolicy OnFailure and a failure,
// its containers start again.
func (k *Kubelet) complete(ctx context.Context, pod *corev1.Pod, _ *corev1.Node, now time.Time) error {
	code, _ := strconv.Atoi(pod.Annotations[ExitCodeAnnotation])
	upd := pod.DeepCopy()
	if code != 0 && pod.Spec.RestartPolicy == corev1.RestartPolicyOnFailure {
		t := metav1.NewTime(now)
		for i := range upd.Status.ContainerStatuses {
			cs := &upd.Status.ContainerStatuses[i]
			if cs.State.Running == nil {
				continue
			}
			cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: int32(code), Reason: "Error", StartedAt: cs.State.Running.StartedAt, FinishedAt: t, ContainerID: cs.ContainerID,
			}}
			cs.RestartCount++
			cs.ContainerID = containerID(pod, cs.Name, cs.RestartCount)
			cs.State.Running = &corev1.ContainerStateRunning{StartedAt: t}
		}
		k.recordStart(pod, now)
		return k.writeStatus(ctx, upd)
	}
	exitContainers(upd, code, now)
	upd.Status.Phase = corev1.PodSucceeded
	if code != 0 {
		upd.Status.Phase = corev1.PodFailed
	}
	return k.writeStatus(ctx, upd)
}

// exitContainers ends every running container of pod with code.
func exitContainers(pod *corev1.Pod, code int, now time.Time) {
	t := metav1.NewTime(now)
	reason := "Completed"
	if code != 0 {
		reason = "Error"
	}
	exit := func(cs *corev1.ContainerStatus) {
		if cs.State.Running == nil {
			return
		}
		cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: int32(code), Reason: reason, StartedAt: cs.State.Running.StartedAt, FinishedAt: t, ContainerID: cs.ContainerID,
		}}
		cs.Ready, cs.Started = false, ptr.To(false)
	}
	for i := range pod.Status.ContainerStatuses {
		exit(&pod.Status.ContainerStatuses[i])
	}
	for i := range pod.Status.InitContainerStatuses {
		exit(&pod.Status.InitContainerStatuses[i])
	}
	setReady(&pod.Status, pod, false, "PodCompleted", now)
}

// setReady sets the ContainersReady and Ready conditions; reason is
// kube's for why they are False ("ContainersNotReady" by default).
func setReady(st *corev1.PodStatus, pod *corev1.Pod, ready bool, reason string, now time.Time) {
	for _, typ := range []corev1.PodConditionType{corev1.ContainersReady, corev1.PodReady} {
		c := corev1.PodCondition{Type: typ, Status: corev1.ConditionTrue}
		if !ready {
			c.Status = corev1.ConditionFalse
			c.Reason = reason
			if reason == "" {
				c.Reason = "ContainersNotReady"
				names := make([]string, 0, len(pod.Spec.Containers))
				for _, ctr := range pod.Spec.Containers {
					names = append(names, ctr.Name)
				}
				c.Message = "containers with unready status: [" + strings.Join(names, " ") + "]"
			}
		}
		setPodCondition(st, c, now)
	}
}

// podReady reports whether pod's Ready condition is True.
func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// containerStatus is a container's status with its identity filled in.
func containerStatus(pod *corev1.Pod, c corev1.Container, restarts int32) corev1.ContainerStatus {
	sum := sha256.Sum256([]byte(c.Image))
	return corev1.ContainerStatus{
		Name: c.Name, Image: c.Image, ImageID: "sha256:" + hex.EncodeToString(sum[:]),
		ContainerID: containerID(pod, c.Name, restarts), RestartCount: restarts,
	}
}

// containerID is a stable, unique-looking ID for a container run.
func containerID(pod *corev1.Pod, name string, restarts int32) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s/%s/%d", pod.UID, name, restarts))
	return "miniapi://" + hex.EncodeToString(sum[:])
}

// internalIP is a node's InternalIP.
func internalIP(node *corev1.Node) (netip.Addr, bool) {
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			ip, err := netip.ParseAddr(a.Address)
			return ip, err == nil
		}
	}
	return netip.Addr{}, false
}

// allocateIP gives pod the lowest free address of its node's podCIDR
// (the first is the node's gateway, the last the broadcast).
func (k *Kubelet) allocateIP(node *corev1.Node, uid types.UID) (netip.Addr, error) {
	cidr, err := netip.ParsePrefix(node.Spec.PodCIDR)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("node %s has no podCIDR yet", node.Name)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	used := k.ips[node.Name]
	if used == nil {
		used = map[netip.Addr]types.UID{}
		k.ips[node.Name] = used
	}
	cidr = cidr.Masked()
	for ip := cidr.Addr().Next().Next(); cidr.Contains(ip) && cidr.Contains(ip.Next()); ip = ip.Next() {
		if _, taken := used[ip]; !taken {
			used[ip] = uid
			return ip, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("node %s: no IP left in %s", node.Name, cidr)
}

func (k *Kubelet) releaseIP(node string, ip netip.Addr, uid types.UID) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.ips[node][ip] == uid {
		delete(k.ips[node], ip)
	}
}

// WaitIdle returns once the kubelet has caught up with the server: every
// stage due now has been applied to every pod on a simulated node.
// Stages waiting for their delay are not waited for. It fails when ctx
// ends first.
func (k *Kubelet) WaitIdle(ctx context.Context) error {
	return waitCaughtUp(ctx, listPods(k.client), k.store, k.loop)
}
