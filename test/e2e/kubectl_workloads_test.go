package e2e

import (
	"strings"
	"testing"
)

// TestKubectlCreateDeployment runs the everyday workload commands with
// the binary's default controllers ("*": kube-controller-manager's run
// in the server): a Deployment gets its ReplicaSet and pods, and scaling
// it changes the pods. No node, scheduler or kubelet is asked for, so the
// pods stay Pending.
func TestKubectlCreateDeployment(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	srv := startServer(t, t.TempDir(), "--controllers=*")
	kubectl(t, srv, "create", "deployment", "web", "--image=nginx", "--replicas=3")

	pods := func() []string {
		return strings.Fields(kubectl(t, srv, "get", "pods", "-l", "app=web", "-o", "name"))
	}
	waitUntil(t, "3 pods of web", func() bool { return len(pods()) == 3 })
	rs := strings.Fields(kubectl(t, srv, "get", "replicasets", "-l", "app=web", "-o", "jsonpath={.items[*].metadata.ownerReferences[0].name}"))
	if len(rs) != 1 || rs[0] != "web" {
		t.Errorf("ReplicaSets of web owned by %q, want one owned by web", rs)
	}

	kubectl(t, srv, "scale", "deployment/web", "--replicas=1")
	// Pending pods bound to no node go at once when deleted.
	waitUntil(t, "web scaled to 1 pod", func() bool { return len(pods()) == 1 })
	if got := kubectl(t, srv, "get", "deployment", "web", "-o", "jsonpath={.status.replicas}"); got != "1" {
		t.Errorf("deployment web status.replicas %q, want 1", got)
	}
}
