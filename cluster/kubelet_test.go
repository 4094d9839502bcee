package cluster

import (
	"net/netip"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
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
