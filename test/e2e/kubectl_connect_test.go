package e2e

import (
	"strings"
	"testing"
)

// connectManifest is a pod on no node, one on a node that does not exist
// (with several containers), and one on a node whose kubelet nothing
// answers.
const connectManifest = `
apiVersion: v1
kind: Namespace
metadata: {name: kc}
---
apiVersion: v1
kind: Node
metadata: {name: n1}
---
apiVersion: v1
kind: Pod
metadata: {name: unsched, namespace: kc}
spec:
  containers: [{name: c1, image: busybox}]
---
apiVersion: v1
kind: Pod
metadata: {name: two, namespace: kc}
spec:
  nodeName: ghost
  initContainers: [{name: init1, image: busybox}]
  containers: [{name: c1, image: busybox}, {name: c2, image: busybox}]
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: kc}
spec:
  nodeName: n1
  containers: [{name: c1, image: busybox}]
`

// TestKubectlLogsExec runs kubectl logs, exec and attach where
// kube-apiserver would reach a kubelet: kubectl prints what it prints
// against kube-apiserver 1.37 with no kubelet running (exec and attach
// come as WebSocket upgrades, which kube-apiserver accepts before it
// dials the kubelet).
func TestKubectlLogsExec(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	srv := kubectlServer(t)
	if r := runKubectl(t, srv, connectManifest, nil, "apply", "-f", "-"); r.err != nil {
		t.Fatalf("apply: %v\n%s", r.err, r.stderr)
	}
	kubectl(t, srv, "patch", "node", "n1", "--subresource=status", "--type=merge",
		"-p", `{"status":{"addresses":[{"type":"InternalIP","address":"192.0.2.10"}]}}`)

	if out := kubectl(t, srv, "-n", "kc", "logs", "unsched"); out != "" {
		t.Errorf("logs of a pod on no node: %q, want nothing", out)
	}
	cases := []struct {
		args   []string
		stderr []string
	}{
		{[]string{"logs", "two"}, []string{
			`Defaulted container "c1" out of: c1, c2, init1 (init)`,
			`Error from server (NotFound): pods "ghost" not found`}},
		{[]string{"logs", "web"}, []string{
			`Error from server: Get "https://192.0.2.10:10250/containerLogs/kc/web/c1": dial tcp 192.0.2.10:10250: connect: connection refused`}},
		{[]string{"exec", "unsched", "--", "ls"}, []string{`error: unable to upgrade connection: pod unsched does not have a host assigned`}},
		{[]string{"exec", "two", "--", "ls"}, []string{`error: unable to upgrade connection: pods "ghost" not found`}},
		{[]string{"exec", "web", "--", "ls"}, []string{
			`error: Internal error occurred: error sending request: Post "https://192.0.2.10:10250/exec/kc/web/c1?command=ls&error=1&output=1": dial tcp 192.0.2.10:10250: connect: connection refused`}},
		{[]string{"attach", "web"}, []string{
			`error: Internal error occurred: error sending request: Post "https://192.0.2.10:10250/attach/kc/web/c1?error=1&output=1": dial tcp 192.0.2.10:10250: connect: connection refused`}},
	}
	for _, c := range cases {
		r := runKubectl(t, srv, "", nil, append([]string{"-n", "kc"}, c.args...)...)
		if r.err == nil {
			t.Errorf("kubectl %s succeeded: %s", strings.Join(c.args, " "), r.stdout)
			continue
		}
		for _, want := range c.stderr {
			if !strings.Contains(r.stderr, want+"\n") {
				t.Errorf("kubectl %s: stderr lacks %q:\n%s", strings.Join(c.args, " "), want, r.stderr)
			}
		}
	}
}
