package cluster

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func testNode(name string, mutate ...func(*corev1.Node)) *corev1.Node {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi"), corev1.ResourcePods: resource.MustParse("3"),
		}},
	}
	for _, m := range mutate {
		m(n)
	}
	return n
}

func testPod(name string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}},
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func requests(cpu string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	}
}

func onNode(n string) func(*corev1.Pod) { return func(p *corev1.Pod) { p.Spec.NodeName = n } }

// pick applies each rule and kube-scheduler's words for each failure.
func TestPick(t *testing.T) {
	tainted := func(n *corev1.Node) {
		n.Spec.Taints = []corev1.Taint{{Key: "k", Value: "v", Effect: corev1.TaintEffectNoSchedule}}
	}
	for _, tc := range []struct {
		name     string
		nodes    []*corev1.Node
		running  []*corev1.Pod
		pod      *corev1.Pod
		want     string
		whyNoFit string
	}{
		{name: "no nodes", pod: testPod("p"), whyNoFit: "no nodes available to schedule pods"},
		{name: "least allocated", nodes: []*corev1.Node{testNode("a"), testNode("b")},
			running: []*corev1.Pod{testPod("r", onNode("a"), requests("1"))}, pod: testPod("p"), want: "b"},
		{name: "ties go by name", nodes: []*corev1.Node{testNode("b"), testNode("a")}, pod: testPod("p"), want: "a"},
		{name: "terminal pods hold nothing", nodes: []*corev1.Node{testNode("a")},
			running: []*corev1.Pod{testPod("r", onNode("a"), requests("2"), func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded })},
			pod:     testPod("p", requests("2")), want: "a"},
		{name: "insufficient cpu", nodes: []*corev1.Node{testNode("a")},
			running: []*corev1.Pod{testPod("r", onNode("a"), requests("1500m"))}, pod: testPod("p", requests("1")),
			whyNoFit: "0/1 nodes are available: 1 Insufficient cpu."},
		{name: "too many pods", nodes: []*corev1.Node{testNode("a")},
			running: []*corev1.Pod{testPod("r1", onNode("a")), testPod("r2", onNode("a")), testPod("r3", onNode("a"))}, pod: testPod("p"),
			whyNoFit: "0/1 nodes are available: 1 Too many pods."},
		{name: "taint", nodes: []*corev1.Node{testNode("a", tainted), testNode("b", tainted)}, pod: testPod("p"),
			whyNoFit: "0/2 nodes are available: 2 node(s) had untolerated taint {k: v}."},
		{name: "toleration", nodes: []*corev1.Node{testNode("a", tainted)}, want: "a",
			pod: testPod("p", func(p *corev1.Pod) {
				p.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}
			})},
		{name: "PreferNoSchedule is no bar", want: "a", pod: testPod("p"),
			nodes: []*corev1.Node{testNode("a", func(n *corev1.Node) {
				n.Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectPreferNoSchedule}}
			})}},
		{name: "cordoned", nodes: []*corev1.Node{testNode("a", func(n *corev1.Node) { n.Spec.Unschedulable = true })}, pod: testPod("p"),
			whyNoFit: "0/1 nodes are available: 1 node(s) were unschedulable."},
		{name: "nodeSelector", nodes: []*corev1.Node{testNode("a"), testNode("b", func(n *corev1.Node) { n.Labels["disk"] = "ssd" })}, want: "b",
			pod: testPod("p", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"disk": "ssd"} })},
		{name: "node affinity", nodes: []*corev1.Node{testNode("a"), testNode("b")},
			pod: testPod("p", func(p *corev1.Pod) {
				p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
					NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
						{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpNotIn, Values: []string{"a", "b"}},
					}}},
				}}}
			}),
			whyNoFit: "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := cache.NewStore(cache.MetaNamespaceKeyFunc)
			for _, p := range tc.running {
				if err := store.Add(p); err != nil {
					t.Fatal(err)
				}
			}
			s := &Scheduler{store: store, assumed: map[string]*corev1.Pod{}}
			node, why := s.pick(tc.pod, tc.nodes)
			got := ""
			if node != nil {
				got = node.Name
			}
			if got != tc.want || why != tc.whyNoFit {
				t.Errorf("pick = %q, %q; want %q, %q", got, why, tc.want, tc.whyNoFit)
			}
		})
	}
}

// A pod bound a moment ago counts on its node before the informer shows
// it there.
func TestPickCountsAssumedPods(t *testing.T) {
	s := &Scheduler{store: cache.NewStore(cache.MetaNamespaceKeyFunc), assumed: map[string]*corev1.Pod{
		"ns/r": testPod("r", onNode("a"), requests("2")),
	}}
	if node, _ := s.pick(testPod("p", requests("1")), []*corev1.Node{testNode("a"), testNode("b")}); node == nil || node.Name != "b" {
		t.Errorf("pick = %v, want b (a is full with an assumed pod)", node)
	}
}
