package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
	kubefeatures "k8s.io/kubernetes/pkg/features"
)

// DefaultSchedulerName is the schedulerName of the pods the scheduler
// binds, kube-scheduler's.
const DefaultSchedulerName = corev1.DefaultSchedulerName

// Scheduler binds pending pods to nodes through pods/binding, as
// kube-scheduler does, with a small rule set of its own (kube-scheduler's
// framework would add tens of megabytes and informers over many groups
// to every start): a node is feasible when it is schedulable (not
// cordoned, or the pod tolerates that), matches the pod's nodeSelector
// and required node affinity, has no NoSchedule or NoExecute taint the
// pod does not tolerate, and has room for the pod's requests in its
// allocatable resources (pods included). Of the feasible nodes, the
// least allocated wins. A pod no node can take stays Pending with
// kube-scheduler's PodScheduled=False condition (reason Unschedulable)
// and is tried again when nodes change or pods go.
type Scheduler struct {
	client kubernetes.Interface
	pods   corelisters.PodLister
	nodes  corelisters.NodeLister
	store  cache.Store
	log    *slog.Logger
	loop   *loop
	// comparisons is kube's TaintTolerationComparisonOperators gate.
	comparisons bool

	// mu protects assumed and unschedulable.
	mu sync.Mutex
	// assumed are the pods bound but not yet seen bound by the informer,
	// with their node, so that their requests count at once.
	assumed map[string]*corev1.Pod
	// unschedulable are the keys of pods no node could take.
	unschedulable map[string]bool
}

func newScheduler(cfg Config) (*Scheduler, error) {
	s := &Scheduler{
		client: cfg.Client, pods: cfg.Pods.Lister(), nodes: cfg.Nodes.Lister(),
		store: cfg.Pods.Informer().GetStore(), log: cfg.Logger.With("component", "scheduler"),
		comparisons:   utilfeature.DefaultFeatureGate.Enabled(kubefeatures.TaintTolerationComparisonOperators),
		assumed:       map[string]*corev1.Pod{},
		unschedulable: map[string]bool{},
	}
	s.loop = newLoop("scheduler", s.log, s.sync)
	if _, err := cfg.Pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.podChanged(nil, obj) },
		UpdateFunc: s.podChanged,
		DeleteFunc: func(obj any) { s.podChanged(obj, nil) },
	}); err != nil {
		return nil, err
	}
	_, err := cfg.Nodes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { s.retryUnschedulable() },
		UpdateFunc: func(any, any) { s.retryUnschedulable() },
	})
	return s, err
}

// podChanged queues pods to schedule, and retries the unschedulable
// ones when a pod's resources are freed.
func (s *Scheduler) podChanged(old, cur any) {
	if pod, ok := cur.(*corev1.Pod); ok && needsScheduling(pod) {
		s.loop.add(pod)
	}
	if pod, ok := cur.(*corev1.Pod); ok && pod.Spec.NodeName != "" {
		key, _ := cache.MetaNamespaceKeyFunc(pod)
		s.mu.Lock()
		delete(s.assumed, key)
		delete(s.unschedulable, key)
		s.mu.Unlock()
	}
	freed := false
	switch cur := cur.(type) {
	case nil:
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(old); err == nil {
			s.mu.Lock()
			delete(s.assumed, key)
			delete(s.unschedulable, key)
			s.mu.Unlock()
		}
		freed = true
	case *corev1.Pod:
		freed = cur.Spec.NodeName != "" && isTerminal(cur) && (old == nil || !isTerminal(old.(*corev1.Pod)))
	}
	if freed {
		s.retryUnschedulable()
	}
}

// retryUnschedulable queues the unschedulable pods again.
func (s *Scheduler) retryUnschedulable() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for key := range s.unschedulable {
		s.loop.queue.Add(key)
	}
}

// needsScheduling reports whether pod waits for this scheduler.
func needsScheduling(pod *corev1.Pod) bool {
	return pod.Spec.NodeName == "" && pod.DeletionTimestamp == nil && !isTerminal(pod) &&
		(pod.Spec.SchedulerName == "" || pod.Spec.SchedulerName == DefaultSchedulerName)
}

func isTerminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

func (s *Scheduler) run(ctx context.Context) { s.loop.run(ctx, 1) }

// sync schedules one pod: it binds it to the best feasible node, or
// records why none is.
func (s *Scheduler) sync(ctx context.Context, key string) error {
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	pod, err := s.pods.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	s.mu.Lock()
	_, assumed := s.assumed[key]
	s.mu.Unlock()
	if assumed || !needsScheduling(pod) {
		return nil
	}
	if len(pod.Spec.SchedulingGates) > 0 {
		return s.setScheduledCondition(ctx, pod, corev1.PodReasonSchedulingGated, "Scheduling is blocked due to non-empty scheduling gates")
	}
	nodes, err := s.nodes.List(labels.Everything())
	if err != nil {
		return err
	}
	node, why := s.pick(pod, nodes)
	if node == nil {
		s.mu.Lock()
		s.unschedulable[key] = true
		s.mu.Unlock()
		return s.setScheduledCondition(ctx, pod, corev1.PodReasonUnschedulable, why)
	}
	s.mu.Lock()
	delete(s.unschedulable, key)
	bound := pod.DeepCopy()
	bound.Spec.NodeName = node.Name
	s.assumed[key] = bound
	s.mu.Unlock()
	err = s.client.CoreV1().Pods(ns).Bind(ctx, &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: node.Name},
	}, metav1.CreateOptions{})
	if err != nil {
		s.mu.Lock()
		delete(s.assumed, key)
		s.mu.Unlock()
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil // gone, or bound by someone else: the informer tells
		}
		return err
	}
	s.log.Debug("scheduled", "pod", key, "node", node.Name)
	return nil
}

// setScheduledCondition records, as kube-scheduler does, why pod is not
// scheduled, unless it says so already.
func (s *Scheduler) setScheduledCondition(ctx context.Context, pod *corev1.Pod, reason, message string) error {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == reason && c.Message == message {
			return nil
		}
	}
	upd := pod.DeepCopy()
	setPodCondition(&upd.Status, corev1.PodCondition{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: reason, Message: message,
	}, time.Now())
	_, err := s.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, upd, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone, or changed: the informer brings it back
	}
	return err
}

// pick returns the best node for pod, or nil and kube-scheduler's
// message saying why no node fits.
func (s *Scheduler) pick(pod *corev1.Pod, nodes []*corev1.Node) (*corev1.Node, string) {
	if len(nodes) == 0 {
		return nil, "no nodes available to schedule pods"
	}
	used := s.usage()
	req := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	affinity := nodeaffinity.GetRequiredNodeAffinity(pod)
	reasons := map[string]int{}
	var best *corev1.Node
	bestScore := -1.0
	for _, node := range nodes {
		if node.DeletionTimestamp != nil {
			reasons["node(s) were being deleted"]++
			continue
		}
		why := s.filter(pod, req, affinity, node, used[node.Name])
		if len(why) > 0 {
			for _, r := range why {
				reasons[r]++
			}
			continue
		}
		score := freeShare(req, node.Status.Allocatable, used[node.Name])
		if score > bestScore || (score == bestScore && node.Name < best.Name) {
			best, bestScore = node, score
		}
	}
	if best != nil {
		return best, ""
	}
	return nil, unschedulableMessage(len(nodes), reasons)
}

// unschedulableMessage is kube-scheduler's FailedScheduling message:
// "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated
// taint {k: v}."
func unschedulableMessage(total int, reasons map[string]int) string {
	parts := make([]string, 0, len(reasons))
	for r, n := range reasons {
		parts = append(parts, fmt.Sprintf("%d %s", n, r))
	}
	sort.Strings(parts)
	return fmt.Sprintf("0/%d nodes are available: %s.", total, strings.Join(parts, ", "))
}

// filter returns why node cannot take pod, in kube-scheduler's words;
// none when it can. The rules run in the order of kube-scheduler's
// filter plugins, and the first that fails is the node's reason, as
// there.
func (s *Scheduler) filter(pod *corev1.Pod, req corev1.ResourceList, affinity nodeaffinity.RequiredNodeAffinity, node *corev1.Node, used *nodeUsage) []string {
	logger := klog.Background()
	if node.Spec.Unschedulable && !corev1helpers.TolerationsTolerateTaint(logger, pod.Spec.Tolerations,
		&corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}, s.comparisons) {
		return []string{"node(s) were unschedulable"}
	}
	if taint, found := corev1helpers.FindMatchingUntoleratedTaint(logger, node.Spec.Taints, pod.Spec.Tolerations, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	}, s.comparisons); found {
		return []string{fmt.Sprintf("node(s) had untolerated taint {%s: %s}", taint.Key, taint.Value)}
	}
	if ok, _ := affinity.Match(node); !ok {
		return []string{"node(s) didn't match Pod's node affinity/selector"}
	}
	return insufficient(req, node.Status.Allocatable, used)
}

// nodeUsage is what the pods on a node request.
type nodeUsage struct {
	requests corev1.ResourceList
	pods     int64
}

// usage sums the requests of the pods bound to each node, the assumed
// ones included; terminal pods hold nothing.
func (s *Scheduler) usage() map[string]*nodeUsage {
	out := map[string]*nodeUsage{}
	add := func(pod *corev1.Pod) {
		if pod.Spec.NodeName == "" || isTerminal(pod) {
			return
		}
		u := out[pod.Spec.NodeName]
		if u == nil {
			u = &nodeUsage{requests: corev1.ResourceList{}}
			out[pod.Spec.NodeName] = u
		}
		u.pods++
		for name, q := range resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}) {
			sum := u.requests[name]
			sum.Add(q)
			u.requests[name] = sum
		}
	}
	s.mu.Lock()
	seen := map[string]bool{}
	for key, pod := range s.assumed {
		seen[key] = true
		add(pod)
	}
	s.mu.Unlock()
	for _, obj := range s.store.List() {
		pod := obj.(*corev1.Pod)
		if key, _ := cache.MetaNamespaceKeyFunc(pod); !seen[key] {
			add(pod)
		}
	}
	return out
}

// insufficient lists the resources node lacks for req, in kube's words.
func insufficient(req, allocatable corev1.ResourceList, used *nodeUsage) []string {
	if used == nil {
		used = &nodeUsage{}
	}
	var out []string
	if maxPods, ok := allocatable[corev1.ResourcePods]; ok && used.pods+1 > maxPods.Value() {
		out = append(out, "Too many pods")
	}
	names := make([]string, 0, len(req))
	for name := range req {
		names = append(names, string(name))
	}
	slices.Sort(names)
	for _, n := range names {
		name := corev1.ResourceName(n)
		want := req[name]
		if want.IsZero() || name == corev1.ResourcePods {
			continue
		}
		free := allocatable[name].DeepCopy()
		free.Sub(used.requests[name])
		if free.Cmp(want) < 0 {
			out = append(out, "Insufficient "+n)
		}
	}
	return out
}

// freeShare is the mean share of a node's CPU and memory left once pod
// is placed there: kube-scheduler's LeastAllocated score, so that pods
// spread over nodes.
func freeShare(req, allocatable corev1.ResourceList, used *nodeUsage) float64 {
	if used == nil {
		used = &nodeUsage{requests: corev1.ResourceList{}}
	}
	share := func(name corev1.ResourceName) float64 {
		total := allocatable[name]
		if total.IsZero() {
			return 0
		}
		taken := used.requests[name].DeepCopy()
		taken.Add(req[name])
		return 1 - float64(taken.MilliValue())/float64(total.MilliValue())
	}
	pods := 0.0
	if max, ok := allocatable[corev1.ResourcePods]; ok && max.Value() > 0 {
		pods = 1 - float64(used.pods+1)/float64(max.Value())
	}
	// Pods without requests still spread, by count.
	return (share(corev1.ResourceCPU) + share(corev1.ResourceMemory) + pods) / 3
}

// WaitIdle returns once the scheduler has caught up with the server:
// every pod it can bind now is bound, and every one it cannot carries
// the condition saying why. It fails when ctx ends first.
func (s *Scheduler) WaitIdle(ctx context.Context) error {
	return waitCaughtUp(ctx, listPods(s.client), s.store, s.loop)
}

// listPods lists every pod's key and resourceVersion.
func listPods(client kubernetes.Interface) func(context.Context) (map[string]string, error) {
	return func(ctx context.Context) (map[string]string, error) {
		list, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		out := make(map[string]string, len(list.Items))
		for _, p := range list.Items {
			out[p.Namespace+"/"+p.Name] = p.ResourceVersion
		}
		return out, nil
	}
}

// setPodCondition sets a pod condition, keeping its transition time
// when its status does not change.
func setPodCondition(st *corev1.PodStatus, c corev1.PodCondition, now time.Time) {
	c.LastTransitionTime = metav1.NewTime(now)
	for i := range st.Conditions {
		if st.Conditions[i].Type == c.Type {
			if st.Conditions[i].Status == c.Status {
				c.LastTransitionTime = st.Conditions[i].LastTransitionTime
			}
			st.Conditions[i] = c
			return
		}
	}
	st.Conditions = append(st.Conditions, c)
}
