package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// TestAbuse sends the built server the abuse of issue 12: a custom
// resource over what etcd stores but under the body limit, and a JSON
// patch of copy operations that would grow an object by GiBs. Each is
// refused with a client error, kube-apiserver's where kube has one, and
// nothing is logged as an internal error.
func TestAbuse(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	srv := startServer(t, t.TempDir())
	srv.must(t, 201, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "blobs.abuse.example.com"},
		"spec": map[string]any{
			"group": "abuse.example.com", "scope": "Namespaced",
			"names": map[string]any{"plural": "blobs", "singular": "blob", "kind": "Blob"},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
			}},
		},
	})
	srv.waitEstablished(t, "blobs.abuse.example.com")
	const blobs = "/apis/abuse.example.com/v1/namespaces/default/blobs"
	blob := func(name string, size int) map[string]any {
		return map[string]any{
			"apiVersion": "abuse.example.com/v1", "kind": "Blob", "metadata": map[string]any{"name": name},
			"data": map[string]any{"a": strings.Repeat("x", size)},
		}
	}

	// 2 MiB: under the 3 MiB body limit, over etcd's 1.5 MiB.
	st := wantStatus(t, srv.do(t, "POST", blobs, blob("big", 2<<20)), 413, "RequestEntityTooLarge")
	if want := `Request entity too large: blobs.abuse.example.com "big" is too large to be stored in etcd (etcdserver: request is too large)`; st["message"] != want {
		t.Errorf("message %q, want %q", st["message"], want)
	}

	// Twelve copies of a 1 KB object's data into itself would add 4 MiB;
	// forty, as a few hundred bytes of patch, 1 TiB.
	srv.must(t, 201, "POST", blobs, blob("bomb", 1000))
	var ops []string
	for i := range 40 {
		ops = append(ops, fmt.Sprintf(`{"op":"copy","from":"/data","path":"/data/%d"}`, i))
	}
	patch := "[" + strings.Join(ops, ",") + "]"
	st = wantStatus(t, srv.do(t, "PATCH", blobs+"/bomb", patch, "Content-Type", "application/json-patch+json"), 422, "Invalid")
	if st["message"] != "the server rejected our request due to an error in our request" {
		t.Errorf("copy bomb: message %q, want kube-apiserver's", st["message"])
	}

	if logs := srv.Stderr(); strings.Contains(logs, "level=ERROR") {
		t.Errorf("abuse logged errors:\n%s", logs)
	}
}

// TestCommandLineMistakes runs the binary with a bad flag, a flag
// without its value and a stray argument: each exits 1 printing the usage
// and the error, where it used to print nothing.
func TestCommandLineMistakes(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "Error: unknown flag: --bogus"},
		{[]string{"--listen"}, "Error: flag needs an argument: --listen"},
		{[]string{"stray-arg"}, `Error: "miniapi" does not take any arguments, got ["stray-arg"]`},
	} {
		out, code := runToExit(t, tc.args...)
		if code != 1 || !strings.Contains(out, "Usage:\n  miniapi [flags]") || !strings.Contains(out, tc.want) {
			t.Errorf("miniapi %q: exit %d, output:\n%s\nwant exit 1, the usage and %q", tc.args, code, out, tc.want)
		}
	}
}
