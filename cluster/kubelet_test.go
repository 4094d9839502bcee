package cluster

import (
	"net/netip"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Pod IPs come from the node's podCIDR, skipping the gateway, never
// given twice, and free again once released.
func TestAllocateIP(t *testing.T) {
	k := &Kubelet{ips: map[string]map[netip.Addr]types.UID{}}
	node := &corev1.Node{Spec: corev1.NodeSpec{PodCIDR: "10.244.3.0/30"}}
	node.Name = "n"
	a, err := k.allocateIP(node, "a")
	if err != nil || a.String() != "10.244.3.2" {
		t.Fatalf("first IP %v, %v; want 10.244.3.2", a, err)
	}
	if _, err := k.allocateIP(node, "b"); err == nil {
		t.Fatal("a /30 gave a second pod IP; its last address is the broadcast")
	}
	k.releaseIP("n", a, "a")
	if b, err := k.allocateIP(node, "b"); err != nil || b != a {
		t.Fatalf("after release: %v, %v; want %v again", b, err, a)
	}
	if _, err := k.allocateIP(&corev1.Node{}, "c"); err == nil {
		t.Fatal("a node without podCIDR gave an IP")
	}
}

func TestRestartBackoff(t *testing.T) {
	for n, want := range map[int32]time.Duration{1: 10 * time.Second, 2: 20 * time.Second, 3: 40 * time.Second, 10: 5 * time.Minute} {
		if got := restartBackoff(n); got != want {
			t.Errorf("restartBackoff(%d) = %v, want %v", n, got, want)
		}
	}
}

func TestPodCIDRs(t *testing.T) {
	for idx, want := range map[int]string{0: "10.244.0.0/24", 7: "10.244.7.0/24", 255: "10.244.255.0/24"} {
		if got := podCIDR(idx).String(); got != want {
			t.Errorf("podCIDR(%d) = %s, want %s", idx, got, want)
		}
		if back, ok := cidrIndex(want); !ok || back != idx {
			t.Errorf("cidrIndex(%s) = %d, %v", want, back, ok)
		}
	}
	if _, ok := cidrIndex("10.1.0.0/24"); ok {
		t.Error("a CIDR outside the pod network has an index")
	}
	if got := nodeIP(0).String(); got != "172.18.0.2" {
		t.Errorf("nodeIP(0) = %s", got)
	}
}

// Delays count from when the kubelet started the containers, not from
// the API's start time, which keeps whole seconds: a pod started at
// .900 with a 300 ms readiness delay is ready at 1.200, not at once.
func TestDelaysCountFromTheTrueStart(t *testing.T) {
	start := time.Date(2026, 11, 28, 12, 0, 0, 900_000_000, time.UTC)
	api := metav1.NewTime(start.Truncate(time.Second))
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{UID: "p", Annotations: map[string]string{ReadyAfterAnnotation: "300ms", CompleteAfterAnnotation: "400ms"}},
		Spec:       corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &api, ContainerStatuses: []corev1.ContainerStatus{{
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: api}},
		}}},
	}
	k := &Kubelet{started: map[types.UID]time.Time{}}
	// Without a record (a kubelet that did not start it), the API's time.
	if due, ok := readyDue(k, pod); !ok || !due.Equal(api.Add(300*time.Millisecond)) {
		t.Errorf("ready due %v, %v without a record; want %v", due, ok, api.Add(300*time.Millisecond))
	}
	k.recordStart(pod, start)
	if due, ok := readyDue(k, pod); !ok || !due.Equal(start.Add(300*time.Millisecond)) {
		t.Errorf("ready due %v, %v; want %v", due, ok, start.Add(300*time.Millisecond))
	}
	if due, ok := completeDue(k, pod); !ok || !due.Equal(start.Add(400*time.Millisecond)) {
		t.Errorf("complete due %v, %v; want %v", due, ok, start.Add(400*time.Millisecond))
	}
	// A record of another second is not this start's.
	k.recordStart(pod, start.Add(-2*time.Second))
	if due, _ := readyDue(k, pod); !due.Equal(api.Add(300 * time.Millisecond)) {
		t.Errorf("ready due %v with a stale record; want %v", due, api.Add(300*time.Millisecond))
	}
}
