package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/miniapi/miniapi/version"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// What a simulated node has, unless whoever added it says otherwise.
var (
	// nodeCapacity is each node's capacity and allocatable: a large
	// machine, so that pods' requests rarely decide where they go unless
	// a test makes them.
	nodeCapacity = corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("32"),
		corev1.ResourceMemory:           resource.MustParse("256Gi"),
		corev1.ResourceEphemeralStorage: resource.MustParse("1Ti"),
		corev1.ResourcePods:             resource.MustParse("110"),
	}
	// podNetwork is where nodes' podCIDRs come from, one /24 each, as
	// kind and kubeadm clusters commonly number them.
	podNetwork = netip.MustParsePrefix("10.244.0.0/16")
	// nodeNetwork is where nodes' InternalIPs come from.
	nodeNetwork = netip.MustParsePrefix("172.18.0.0/16")
)

// kubeletPort is the port nodes advertise for their kubelet.
const kubeletPort = 10250

// leaseNamespace holds the node Leases.
const leaseNamespace = corev1.NamespaceNodeLease

// NodeName is the name of the i-th node the cluster registers.
func NodeName(i int) string { return "node-" + strconv.Itoa(i) }

// Nodes keeps the simulated nodes as their kubelets would: it registers
// the configured number at start, adopts Nodes added with SimulatedLabel,
// fills in what their status lacks (Ready, capacity, addresses, node
// info), gives them a podCIDR, and renews each one's Lease in
// kube-node-lease. All nodes share one timer: an idle cluster of ten
// nodes writes one Lease a second.
type Nodes struct {
	client    kubernetes.Interface
	lister    corelisters.NodeLister
	store     cache.Store
	log       *slog.Logger
	count     int
	leaseDur  time.Duration
	statusDur time.Duration
	loop      *loop

	// mu protects leases and cidrs.
	mu sync.Mutex
	// leases are the simulated nodes' Leases as last written, by node
	// name; a node is renewed while it is here.
	leases map[string]*coordinationv1.Lease
	// cidrs are the podCIDR indexes given out, by index, with the node
	// given each: the informer may not show a node updated a moment ago.
	cidrs map[int]string
}

func newNodes(cfg Config) (*Nodes, error) {
	n := &Nodes{
		client: cfg.Client, lister: cfg.Nodes.Lister(), store: cfg.Nodes.Informer().GetStore(),
		log: cfg.Logger.With("component", "nodes"), count: cfg.NodeCount,
		leaseDur: cfg.LeaseDuration, statusDur: cfg.NodeStatusInterval,
		leases: map[string]*coordinationv1.Lease{}, cidrs: map[int]string{},
	}
	n.loop = newLoop("nodes", n.log, n.sync)
	_, err := cfg.Nodes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    n.loop.add,
		UpdateFunc: func(_, cur any) { n.loop.add(cur) },
		DeleteFunc: n.loop.add,
	})
	return n, err
}

// isSimulated reports whether node is one of ours.
func isSimulated(node *corev1.Node) bool { return node.Labels[SimulatedLabel] == "true" }

// register creates the nodes that do not exist yet, with their status,
// as a kubelet registers its node (the node loop adds the Lease).
func (n *Nodes) register(ctx context.Context) error {
	if n.count == 0 {
		return nil
	}
	existing, err := n.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("cluster: list nodes: %w", err)
	}
	have := map[string]bool{}
	n.mu.Lock()
	for i := range existing.Items {
		node := &existing.Items[i]
		have[node.Name] = true
		if idx, ok := cidrIndex(node.Spec.PodCIDR); ok {
			n.cidrs[idx] = node.Name
		}
	}
	n.mu.Unlock()
	// The nodes are created at once, in parallel; their Leases come from
	// the node loop (sync), off the start-up path.
	var wg sync.WaitGroup
	errs := make([]error, n.count)
	for i := range n.count {
		name := NodeName(i)
		if have[name] {
			continue // the informer adopts it if it is ours
		}
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{SimulatedLabel: "true"}}}
		if err := n.complete(node, time.Now()); err != nil {
			return err
		}
		wg.Go(func() {
			_, err := n.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				errs[i] = fmt.Errorf("cluster: register node %s: %w", name, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// run reconciles nodes and renews Leases until ctx ends.
func (n *Nodes) run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { n.loop.run(ctx, 1) })
	wg.Go(func() { n.heartbeat(ctx) })
	wg.Wait()
}

// sync makes a simulated node complete and gives it a Lease; a node
// gone, or no longer simulated, is no longer renewed.
func (n *Nodes) sync(ctx context.Context, name string) error {
	node, err := n.lister.Get(name)
	if apierrors.IsNotFound(err) || (err == nil && !isSimulated(node)) {
		n.forget(name)
		return nil
	}
	if err != nil {
		return err
	}
	if node.DeletionTimestamp != nil {
		return nil
	}
	if upd, changed := n.completeSpec(node); changed {
		if node, err = n.client.CoreV1().Nodes().Update(ctx, upd, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	upd := node.DeepCopy()
	if err := n.complete(upd, time.Now()); err != nil {
		return err
	}
	if !statusEqual(node.Status, upd.Status) {
		if node, err = n.client.CoreV1().Nodes().UpdateStatus(ctx, upd, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	return n.ensureLease(ctx, node)
}

// notReadyTaints are the taints kube's node lifecycle controller keeps
// on a node that is not Ready (kube-apiserver's TaintNodesByCondition
// admission puts the first on every new node); it removes them once the
// node is Ready, and so does the simulation, which keeps its nodes so.
var notReadyTaints = map[string]bool{corev1.TaintNodeNotReady: true, corev1.TaintNodeUnreachable: true}

// completeSpec returns node with a podCIDR, and without the not-ready
// taints, and whether that changed it.
func (n *Nodes) completeSpec(node *corev1.Node) (*corev1.Node, bool) {
	upd := node.DeepCopy()
	changed := false
	if upd.Spec.PodCIDR == "" {
		if err := n.assignCIDR(upd); err == nil {
			changed = true
		}
	}
	taints := upd.Spec.Taints[:0]
	for _, t := range upd.Spec.Taints {
		if notReadyTaints[t.Key] {
			changed = true
			continue
		}
		taints = append(taints, t)
	}
	upd.Spec.Taints = taints
	return upd, changed
}

// complete fills in what a kubelet reports of node that it lacks: a
// podCIDR, capacity, the conditions of a healthy node, addresses, the
// kubelet's endpoint and node info. What is there is kept: a test may
// give a node less capacity or other labels.
func (n *Nodes) complete(node *corev1.Node, now time.Time) error {
	if node.Spec.PodCIDR == "" {
		if err := n.assignCIDR(node); err != nil {
			return err
		}
	}
	if node.Labels == nil {
		node.Labels = map[string]string{}
	}
	for k, v := range map[string]string{
		corev1.LabelHostname: node.Name, corev1.LabelOSStable: "linux", corev1.LabelArchStable: runtime.GOARCH,
		"beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": runtime.GOARCH,
	} {
		if _, ok := node.Labels[k]; !ok {
			node.Labels[k] = v
		}
	}
	st := &node.Status
	if st.Capacity == nil {
		st.Capacity = nodeCapacity.DeepCopy()
	}
	if st.Allocatable == nil {
		st.Allocatable = st.Capacity.DeepCopy()
	}
	setNodeConditions(st, now)
	if len(st.Addresses) == 0 {
		idx, _ := cidrIndex(node.Spec.PodCIDR)
		st.Addresses = []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: nodeIP(idx).String()},
			{Type: corev1.NodeHostName, Address: node.Name},
		}
	}
	if st.DaemonEndpoints.KubeletEndpoint.Port == 0 {
		st.DaemonEndpoints.KubeletEndpoint.Port = kubeletPort
	}
	if st.NodeInfo.KubeletVersion == "" {
		st.NodeInfo = corev1.NodeSystemInfo{
			MachineID: node.Name, SystemUUID: node.Name, BootID: node.Name,
			KernelVersion: "6.8.0-miniapi", OSImage: "miniapi simulated node",
			ContainerRuntimeVersion: "miniapi://" + version.Miniapi,
			KubeletVersion:          version.Kubernetes,
			OperatingSystem:         "linux", Architecture: runtime.GOARCH,
		}
	}
	return nil
}

// nodeConditions are a healthy kubelet's node conditions, with kubelet's
// reasons and messages.
var nodeConditions = []corev1.NodeCondition{
	{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory", Message: "kubelet has sufficient memory available"},
	{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasNoDiskPressure", Message: "kubelet has no disk pressure"},
	{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientPID", Message: "kubelet has sufficient PID available"},
	{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status"},
}

// setNodeConditions makes st's kubelet conditions healthy; a condition
// already so keeps its times. Other conditions (a node problem
// detector's) are left alone.
func setNodeConditions(st *corev1.NodeStatus, now time.Time) {
	t := metav1.NewTime(now)
	for _, want := range nodeConditions {
		i := 0
		for i < len(st.Conditions) && st.Conditions[i].Type != want.Type {
			i++
		}
		if i == len(st.Conditions) {
			st.Conditions = append(st.Conditions, corev1.NodeCondition{Type: want.Type})
		}
		c := &st.Conditions[i]
		if c.Status != want.Status || c.Reason != want.Reason || c.Message != want.Message {
			want.LastHeartbeatTime, want.LastTransitionTime = t, t
			*c = want
		}
	}
}

// statusEqual compares node statuses by their meaning.
func statusEqual(a, b corev1.NodeStatus) bool {
	ja, _ := a.Marshal()
	jb, _ := b.Marshal()
	return string(ja) == string(jb)
}

// assignCIDR gives node the lowest free podCIDR.
func (n *Nodes) assignCIDR(node *corev1.Node) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	used := map[int]bool{}
	for idx := range n.cidrs {
		used[idx] = true
	}
	for _, obj := range n.store.List() {
		if idx, ok := cidrIndex(obj.(*corev1.Node).Spec.PodCIDR); ok {
			used[idx] = true
		}
	}
	for idx := range 256 {
		if !used[idx] {
			n.cidrs[idx] = node.Name
			cidr := podCIDR(idx).String()
			node.Spec.PodCIDR, node.Spec.PodCIDRs = cidr, []string{cidr}
			return nil
		}
	}
	return fmt.Errorf("cluster: no podCIDR left in %s for node %s", podNetwork, node.Name)
}

// podCIDR is the idx-th /24 of podNetwork.
func podCIDR(idx int) netip.Prefix {
	a := podNetwork.Addr().As4()
	a[2] = byte(idx)
	return netip.PrefixFrom(netip.AddrFrom4(a), 24)
}

// cidrIndex is the index of a podCIDR of podNetwork.
func cidrIndex(cidr string) (int, bool) {
	p, err := netip.ParsePrefix(cidr)
	if err != nil || p.Bits() != 24 || !podNetwork.Contains(p.Addr()) {
		return 0, false
	}
	return int(p.Addr().As4()[2]), true
}

// nodeIP is the InternalIP of the node with podCIDR index idx.
func nodeIP(idx int) netip.Addr {
	a := nodeNetwork.Addr().As4()
	a[2], a[3] = byte(idx/250), byte(idx%250+2)
	return netip.AddrFrom4(a)
}

// ensureLease makes sure node has a Lease, owned by it as kubelet's is,
// and records it for renewal.
func (n *Nodes) ensureLease(ctx context.Context, node *corev1.Node) error {
	n.mu.Lock()
	_, ok := n.leases[node.Name]
	n.mu.Unlock()
	if ok {
		return nil
	}
	lease, err := n.client.CoordinationV1().Leases(leaseNamespace).Get(ctx, node.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		lease, err = n.client.CoordinationV1().Leases(leaseNamespace).Create(ctx, n.newLease(node), metav1.CreateOptions{})
	}
	if err != nil {
		return fmt.Errorf("cluster: lease of node %s: %w", node.Name, err)
	}
	n.mu.Lock()
	n.leases[node.Name] = lease
	n.mu.Unlock()
	return nil
}

func (n *Nodes) newLease(node *corev1.Node) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{
			Name: node.Name, Namespace: leaseNamespace,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}},
		},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(node.Name),
			LeaseDurationSeconds: ptr.To(int32(n.leaseDur / time.Second)),
			RenewTime:            &metav1.MicroTime{Time: time.Now()},
		},
	}
}

// forget stops renewing a node's Lease (the garbage collector deletes it
// with its node).
func (n *Nodes) forget(name string) {
	n.mu.Lock()
	delete(n.leases, name)
	n.mu.Unlock()
}

// heartbeat renews every Lease each quarter of the lease duration, as
// kubelet does, and writes the nodes' status every status interval.
func (n *Nodes) heartbeat(ctx context.Context) {
	renew := time.NewTicker(n.leaseDur / 4)
	defer renew.Stop()
	status := time.NewTicker(n.statusDur)
	defer status.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-renew.C:
			n.renewLeases(ctx)
		case <-status.C:
			n.reportStatus(ctx)
		}
	}
}

func (n *Nodes) renewLeases(ctx context.Context) {
	n.mu.Lock()
	leases := make([]*coordinationv1.Lease, 0, len(n.leases))
	for _, l := range n.leases {
		leases = append(leases, l)
	}
	n.mu.Unlock()
	for _, l := range leases {
		upd := l.DeepCopy()
		upd.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
		got, err := n.client.CoordinationV1().Leases(leaseNamespace).Update(ctx, upd, metav1.UpdateOptions{})
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			// Someone else wrote or deleted it: take the node's Lease
			// anew through the node loop.
			n.log.Debug("cluster: renew lease", "node", l.Name, "err", err)
			n.forget(l.Name)
			n.loop.queue.Add(l.Name)
			continue
		}
		n.mu.Lock()
		if _, ok := n.leases[l.Name]; ok {
			n.leases[l.Name] = got
		}
		n.mu.Unlock()
	}
}

// reportStatus writes each simulated node's status with fresh heartbeat
// times, as kubelet does even when nothing changed.
func (n *Nodes) reportStatus(ctx context.Context) {
	nodes, err := n.lister.List(labels.SelectorFromSet(labels.Set{SimulatedLabel: "true"}))
	if err != nil {
		return
	}
	now := metav1.Now()
	for _, node := range nodes {
		upd := node.DeepCopy()
		for i := range upd.Status.Conditions {
			upd.Status.Conditions[i].LastHeartbeatTime = now
		}
		if _, err := n.client.CoreV1().Nodes().UpdateStatus(ctx, upd, metav1.UpdateOptions{}); err != nil && ctx.Err() == nil {
			n.log.Debug("cluster: node status", "node", node.Name, "err", err)
		}
	}
}

// WaitIdle returns once the node part has caught up with the server:
// the nodes it registers exist and every simulated node is complete and
// has its Lease. It fails when ctx ends first.
func (n *Nodes) WaitIdle(ctx context.Context) error {
	return waitCaughtUp(ctx, func(ctx context.Context) (map[string]string, error) {
		list, err := n.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		out := map[string]string{}
		for _, node := range list.Items {
			out[node.Name] = node.ResourceVersion
		}
		for i := range n.count {
			if _, ok := out[NodeName(i)]; !ok {
				out = nil // not registered yet: never equal twice
				break
			}
		}
		return out, nil
	}, n.store, n.loop)
}
