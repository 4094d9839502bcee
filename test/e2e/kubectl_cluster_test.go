package e2e

import (
	"strings"
	"testing"
)

// TestKubectlSimulatedCluster runs the binary on its defaults: one
// simulated node, listed Ready by kubectl get nodes from the start, and
// a pod made with kubectl run that is scheduled there and becomes Ready,
// with the node's IP range.
func TestKubectlSimulatedCluster(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	kubectlPath(t)
	srv := startServer(t, t.TempDir())

	out := kubectl(t, srv, "get", "nodes", "--no-headers")
	fields := strings.Fields(out)
	if len(strings.Split(strings.TrimSpace(out), "\n")) != 1 || len(fields) < 2 || fields[0] != "node-0" || fields[1] != "Ready" {
		t.Fatalf("kubectl get nodes:\n%s\nwant node-0 Ready", out)
	}
	// The Lease comes a moment after the node, as a kubelet's does.
	kubectl(t, srv, "wait", "--for=create", "-n", "kube-node-lease", "lease/node-0", "--timeout=10s")
	if got := kubectl(t, srv, "get", "lease", "-n", "kube-node-lease", "node-0", "-o", "jsonpath={.spec.holderIdentity}"); got != "node-0" {
		t.Errorf("node-0's Lease holder %q", got)
	}

	kubectl(t, srv, "run", "web", "--image=nginx")
	kubectl(t, srv, "wait", "--for=condition=Ready", "pod/web", "--timeout=10s")
	got := kubectl(t, srv, "get", "pod", "web", "-o", "jsonpath={.spec.nodeName} {.status.phase} {.status.podIP}")
	if f := strings.Fields(got); len(f) != 3 || f[0] != "node-0" || f[1] != "Running" || !strings.HasPrefix(f[2], "10.244.0.") {
		t.Errorf("pod web: %q, want node-0 Running 10.244.0.x", got)
	}
}
