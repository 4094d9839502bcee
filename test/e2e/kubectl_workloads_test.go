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

	// The pods not being deleted: on the simulated node they run, and a
	// scaled-down one terminates for its grace period, as on a cluster.
	pods := func() []string {
		var live []string
		out := kubectl(t, srv, "get", "pods", "-l", "app=web", "--no-headers",
			"-o", "custom-columns=NAME:.metadata.name,DELETING:.metadata.deletionTimestamp")
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if f := strings.Fields(line); len(f) == 2 && f[1] == "<none>" {
				live = append(live, f[0])
			}
		}
		return live
	}
	waitUntil(t, "3 pods of web", func() bool { return len(pods()) == 3 })
	waitUntil(t, "3 pods of web Running", func() bool {
		return strings.Count(kubectl(t, srv, "get", "pods", "-l", "app=web", "-o", "jsonpath={.items[*].status.phase}"), "Running") == 3
	})
	rs := strings.Fields(kubectl(t, srv, "get", "replicasets", "-l", "app=web", "-o", "jsonpath={.items[*].metadata.ownerReferences[0].name}"))
	if len(rs) != 1 || rs[0] != "web" {
		t.Errorf("ReplicaSets of web owned by %q, want one owned by web", rs)
	}

	kubectl(t, srv, "scale", "deployment/web", "--replicas=1")
	waitUntil(t, "web scaled to 1 pod", func() bool { return len(pods()) == 1 })
	if got := kubectl(t, srv, "get", "deployment", "web", "-o", "jsonpath={.status.replicas}"); got != "1" {
		t.Errorf("deployment web status.replicas %q, want 1", got)
	}
}
