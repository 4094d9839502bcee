package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestKubectlAPIServices runs kubectl get apiservices against the built
// binary: the APIServices kube-apiserver 1.37 registers for its own
// group-versions are there, printed with its columns, and v1.apps reads
// as kube-apiserver's (kubectl get apiservice v1.apps -o yaml).
func TestKubectlAPIServices(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	srv := kubectlServer(t)

	// They are registered in the background as the server starts, one
	// by one: wait for all of those looked at.
	names := []string{"v1.", "v1.apps", "v1.apiextensions.k8s.io", "v1.batch", "v2.autoscaling", "v1.storage.k8s.io"}
	var out string
	var got map[string]string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		out = kubectl(t, srv, "get", "apiservices")
		rows := tableRows(out)
		if len(rows) == 0 { // none yet: kubectl says so on stderr
			rows = [][]string{{"NAME", "SERVICE", "AVAILABLE", "AGE"}}
		}
		if strings.Join(rows[0], " ") != "NAME SERVICE AVAILABLE AGE" {
			t.Fatalf("header %v", rows[0])
		}
		got = map[string]string{}
		for _, r := range rows[1:] {
			got[r[0]] = r[1] + " " + r[2]
		}
		all := true
		for _, name := range names {
			all = all && got[name] == "Local True"
		}
		if all || time.Now().After(deadline) {
			break
		}
	}
	for _, name := range names {
		if got[name] != "Local True" {
			t.Errorf("%s: %q, want Local True\n%s", name, got[name], out)
		}
	}

	yaml := kubectl(t, srv, "get", "apiservice", "v1.apps", "-o", "yaml")
	for _, want := range []string{
		"apiVersion: apiregistration.k8s.io/v1\nkind: APIService\n",
		"  labels:\n    kube-aggregator.kubernetes.io/automanaged: onstart\n  name: v1.apps\n",
		"spec:\n  group: apps\n  groupPriorityMinimum: 17800\n  version: v1\n  versionPriority: 15\n",
		"    message: Local APIServices are always available\n    reason: Local\n    status: \"True\"\n    type: Available\n",
	} {
		if !strings.Contains(yaml, want) {
			t.Errorf("v1.apps lacks\n%s\nin\n%s", want, yaml)
		}
	}
}
