package handlers

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/miniapi/miniapi/internal/apitest"
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

// TestObjectTooLargeForEtcd answers 413 with a message that says so,
// never 500, when a custom resource under the 3 MiB body limit is over
// what etcd stores (1.5 MiB), whichever verb writes it.
func TestObjectTooLargeForEtcd(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	widget := func(name string, size int) map[string]any {
		return map[string]any{
			"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": name},
			"spec": map[string]any{"blob": strings.Repeat("x", size)},
		}
	}
	f.Must(201, "POST", widgets, widget("small", 10))
	for _, size := range []int{1600 << 10, 2900 << 10} {
		want := `Request entity too large: widgets.example.com "%s" is too large to be stored in etcd (etcdserver: request is too large)`
		check := func(verb string, r apitest.Response, name string) {
			t.Helper()
			st := f.Status(r, 413, "RequestEntityTooLarge")
			if msg := fmt.Sprintf(want, name); st["message"] != msg {
				t.Errorf("%s of %d bytes: message %q, want %q", verb, size, st["message"], msg)
			}
		}
		check("create", f.Do("POST", widgets, widget("big", size)), "big")
		if size > 2<<20 {
			continue // the storage tests cover the other writes at this size
		}
		check("update", f.Do("PUT", widgets+"/small", widget("small", size)), "small")
		patch := map[string]any{"spec": map[string]any{"blob": strings.Repeat("x", size)}}
		check("merge patch", f.Do("PATCH", widgets+"/small", patch, "Content-Type", "application/merge-patch+json"), "small")
		check("apply", f.Do("PATCH", widgets+"/small?fieldManager=m&force=true", widget("small", size), "Content-Type", "application/apply-patch+yaml"), "small")
		check("apply create", f.Do("PATCH", widgets+"/new?fieldManager=m", widget("new", size), "Content-Type", "application/apply-patch+yaml"), "new")
	}
	f.Status(f.Do("GET", widgets+"/big", nil), 404, "NotFound")
}

// TestTooLargeWithManagedFields stores an object that etcd refuses only
// for its managedFields without them, as kube-apiserver does on create,
// update and patch; an apply, whose managedFields are its result, is
// refused.
func TestTooLargeWithManagedFields(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	// 7,500 fields of long names: 0.9 MB of object, as much again of
	// managedFields, which etcd's 1.5 MiB cannot hold together.
	spec := map[string]any{}
	for i := range 7500 {
		spec[fmt.Sprintf("field-%0104d", i)] = 1
	}
	widget := map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "wide"}, "spec": spec,
	}
	noManagedFields := func(verb string, obj map[string]any) {
		t.Helper()
		if mf := fieldAt(obj, "metadata.managedFields"); mf != nil {
			t.Errorf("%s: managedFields kept: %.200v", verb, mf)
		}
	}
	noManagedFields("create", f.Must(201, "POST", widgets, widget))
	spec[fmt.Sprintf("field-%0104d", 0)] = 2
	noManagedFields("update", f.Must(200, "PUT", widgets+"/wide", widget))
	noManagedFields("patch", f.Must(200, "PATCH", widgets+"/wide", `{"spec":{"other":2}}`, "Content-Type", "application/merge-patch+json"))
	f.Status(f.Do("PATCH", widgets+"/wide?fieldManager=a&force=true", widget, "Content-Type", "application/apply-patch+yaml"), 413, "RequestEntityTooLarge")
	widget["metadata"] = map[string]any{"name": "applied"}
	f.Status(f.Do("PATCH", widgets+"/applied?fieldManager=a", widget, "Content-Type", "application/apply-patch+yaml"), 413, "RequestEntityTooLarge")
}
