package handlers

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

const widgets = "/apis/example.com/v1/namespaces/ns1/widgets"

// TestJSONPatchLimits refuses a JSON patch whose copy operations would
// grow the object past kube-apiserver's 3 MiB copy limit (a few hundred
// bytes of patch once made the server allocate GiBs) and one of more
// than 10,000 operations, each with kube-apiserver's exact answer.
func TestJSONPatchLimits(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	f.Must(201, "POST", widgets, map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"},
		"spec": map[string]any{"a": strings.Repeat("x", 1000)},
	})
	// Each copy doubles spec: 12 of them would add 4 MiB.
	var ops []map[string]string
	for i := range 12 {
		ops = append(ops, map[string]string{"op": "copy", "from": "/spec", "path": fmt.Sprintf("/spec/k%d", i)})
	}
	r := f.Do("PATCH", widgets+"/w", ops, "Content-Type", "application/json-patch+json")
	want := map[string]any{
		"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{}, "status": "Failure",
		"message": "the server rejected our request due to an error in our request",
		"reason":  "Invalid", "details": map[string]any{}, "code": float64(422),
	}
	if r.Code != 422 || !reflect.DeepEqual(r.Obj(t), want) {
		t.Errorf("copy bomb answered %d %.300s, want kube's 422 %v", r.Code, r.Body, want)
	}
	// Fewer copies stay under the limit and apply.
	f.Must(200, "PATCH", widgets+"/w", ops[:5], "Content-Type", "application/json-patch+json")

	many := make([]map[string]string, 10001)
	for i := range many {
		many[i] = map[string]string{"op": "test", "path": "/kind", "value": "Widget"}
	}
	r = f.Do("PATCH", widgets+"/w", many, "Content-Type", "application/json-patch+json")
	want = map[string]any{
		"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{}, "status": "Failure",
		"message": "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001",
		"reason":  "RequestEntityTooLarge", "code": float64(413),
	}
	if r.Code != 413 || !reflect.DeepEqual(r.Obj(t), want) {
		t.Errorf("10001 operations answered %d %.300s, want kube's 413 %v", r.Code, r.Body, want)
	}
	f.Must(200, "PATCH", widgets+"/w", many[:10000], "Content-Type", "application/json-patch+json")
}

// TestPatchBodyLimit refuses a patch body over kube-apiserver's 3 MiB
// request body limit, in every patch type, before reading it all.
func TestPatchBodyLimit(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	f.Must(201, "POST", cms, configMap("a", nil, nil))
	big, err := json.Marshal(map[string]any{"data": map[string]string{"k": strings.Repeat("x", 3<<20)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, ct := range []string{"application/merge-patch+json", "application/strategic-merge-patch+json", "application/apply-patch+yaml", "application/json-patch+json"} {
		st := f.Status(f.Do("PATCH", cms+"/a?fieldManager=m", big, "Content-Type", ct), 413, "RequestEntityTooLarge")
		if st["message"] != "Request entity too large: limit is 3145728" {
			t.Errorf("%s: message %q, want kube's", ct, st["message"])
		}
	}
}
