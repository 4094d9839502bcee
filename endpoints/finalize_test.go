package endpoints

import (
	"reflect"
	"testing"
)

// methodNotAllowed is kube-apiserver's answer to a method no route of
// the path serves.
var methodNotAllowed = map[string]any{
	"apiVersion": "v1", "kind": "Status", "metadata": map[string]any{},
	"status": "Failure", "message": "the server does not allow this method on the requested resource",
	"reason": "MethodNotAllowed", "details": map[string]any{}, "code": float64(405),
}

// TestNamespaceFinalize serves PUT namespaces/{name}/finalize as
// kube-apiserver's FinalizeREST: it changes spec.finalizers (and
// metadata) but never status, and it serves no other verb; discovery
// lists it as kube's /api/v1 does.
func TestNamespaceFinalize(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("fin"))

	body := map[string]any{
		"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": "fin", "labels": map[string]any{"x": "y"}},
		"spec":     map[string]any{"finalizers": []any{"kubernetes", "example.com/f"}},
		"status":   map[string]any{"phase": "Terminating"},
	}
	got := f.Must(200, "PUT", "/api/v1/namespaces/fin/finalize", body)
	if fin := field(got, "spec.finalizers"); !reflect.DeepEqual(fin, []any{"kubernetes", "example.com/f"}) {
		t.Errorf("spec.finalizers after finalize = %v", fin)
	}
	if l := field(got, "metadata.labels.x"); l != "y" {
		t.Errorf("labels after finalize = %v, want x=y kept as kube does", field(got, "metadata.labels"))
	}
	if p := field(got, "status.phase"); p != "Active" {
		t.Errorf("status.phase after finalize = %v, want Active: finalize never writes status", p)
	}
	mf, _ := field(got, "metadata.managedFields").([]any)
	if len(mf) == 0 || field(mf[len(mf)-1].(map[string]any), "subresource") != "finalize" {
		t.Errorf("managedFields %v, want the write recorded for subresource finalize", mf)
	}

	body["spec"] = map[string]any{"finalizers": []any{"not a finalizer"}}
	f.Status(f.Do("PUT", "/api/v1/namespaces/fin/finalize", body), 422, "Invalid")
	f.Status(f.Do("PUT", "/api/v1/namespaces/nothere/finalize", ns("nothere")), 404, "NotFound")

	for _, m := range []string{"GET", "PATCH", "POST", "DELETE"} {
		r := f.Do(m, "/api/v1/namespaces/fin/finalize", `{}`, "Content-Type", "application/merge-patch+json")
		if st := f.Status(r, 405, "MethodNotAllowed"); !reflect.DeepEqual(st, methodNotAllowed) {
			t.Errorf("%s finalize answered %v, want kube's %v", m, st, methodNotAllowed)
		}
		if _, ok := r.Header["Allow"]; ok {
			t.Errorf("%s finalize sent an Allow header, which kube-apiserver does not", m)
		}
	}

	rl := f.Must(200, "GET", "/api/v1", nil)
	var found map[string]any
	for _, r := range rl["resources"].([]any) {
		if r := r.(map[string]any); r["name"] == "namespaces/finalize" {
			found = r
		}
	}
	want := map[string]any{"name": "namespaces/finalize", "singularName": "", "namespaced": false, "kind": "Namespace", "verbs": []any{"update"}}
	if !reflect.DeepEqual(found, want) {
		t.Errorf("discovery of namespaces/finalize = %v, want %v", found, want)
	}
}

// TestMethodNotAllowed answers a method a path does not serve with
// kube-apiserver's generic 405, and a watch of a list that cannot be
// watched with kube's "watch is not supported".
func TestMethodNotAllowed(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/v1/namespaces/default/bindings"},
		{"GET", "/api/v1/namespaces/default/bindings?watch=1"},
		{"PUT", "/api/v1/namespaces/default/pods/p/binding"},
		{"GET", "/api/v1/namespaces/default/pods/p/eviction"},
		{"POST", "/api/v1/componentstatuses"},
		{"DELETE", "/api/v1/namespaces/default/status"},
		{"DELETE", "/api/v1/namespaces"},
		{"POST", "/api/v1/watch/namespaces"},
	} {
		if st := f.Status(f.Do(c.method, c.path, `{}`), 405, "MethodNotAllowed"); !reflect.DeepEqual(st, methodNotAllowed) {
			t.Errorf("%s %s answered %v, want kube's %v", c.method, c.path, st, methodNotAllowed)
		}
	}
	st := f.Status(f.Do("GET", "/api/v1/componentstatuses?watch=1", nil), 405, "MethodNotAllowed")
	if want := `watch is not supported on resources of kind "componentstatuses"`; st["message"] != want {
		t.Errorf("watch of componentstatuses: %v, want %q", st["message"], want)
	}
	f.Status(f.Do("GET", "/api/v1/watch/componentstatuses", nil), 404, "NotFound")
}
