package endpoints

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/miniapi/miniapi/registry"
)

// gizmoType has a schema: spec.size and spec.tags (a map of strings).
var gizmoType = registry.Type{
	Group: "example.com", Version: "v1", Kind: "Gizmo", Plural: "gizmos", Namespaced: true,
	Schema: json.RawMessage(`{"type":"object","properties":{
		"apiVersion":{"type":"string"},"kind":{"type":"string"},"metadata":{"type":"object"},
		"spec":{"type":"object","properties":{"size":{"type":"integer"},"tags":{"type":"object","additionalProperties":{"type":"string"}}}}}}`),
}

// warnings returns the text of each Warning header, unquoted.
func warnings(t *testing.T, r response) []string {
	t.Helper()
	var out []string
	for _, h := range r.Header.Values("Warning") {
		rest, ok := strings.CutPrefix(h, `299 - `)
		if !ok {
			t.Fatalf("Warning header %q is not 299 - \"...\"", h)
		}
		var s string
		if err := json.Unmarshal([]byte(rest), &s); err != nil {
			t.Fatalf("Warning header %q: %v", h, err)
		}
		out = append(out, s)
	}
	return out
}

func TestFieldValidation(t *testing.T) {
	f := newFixture(t)
	if err := f.reg.Add(gizmoType); err != nil {
		t.Fatal(err)
	}
	f.Must(201, "POST", "/api/v1/namespaces", `{"metadata":{"name":"fv"}}`)
	coll := "/apis/example.com/v1/namespaces/fv/gizmos"
	body := `{"apiVersion":"example.com/v1","kind":"Gizmo","metadata":{"name":"%s"},"spec":{"size":1,"colour":"red","tags":{"a":"1","a":"2"}}}`
	named := func(n string) string { return strings.Replace(body, "%s", n, 1) }

	t.Run("Strict", func(t *testing.T) {
		st := f.Status(f.Do("POST", coll+"?fieldValidation=Strict", named("strict")), 400, "BadRequest")
		want := `Gizmo in version "v1" cannot be handled as a Gizmo: strict decoding error: unknown field "spec.colour", duplicate field "spec.tags.a"`
		if st["message"] != want {
			t.Errorf("message\n got %v\nwant %s", st["message"], want)
		}
		f.Status(f.Do("GET", coll+"/strict", nil), 404, "NotFound")
	})
	t.Run("Warn is the default", func(t *testing.T) {
		for _, q := range []string{"?fieldValidation=Warn", ""} {
			name := "warn" + strings.TrimPrefix(q, "?fieldValidation=")
			r := f.Do("POST", coll+q, named(strings.ToLower(name)))
			if r.Code != 201 {
				t.Fatalf("POST%s = %d: %s", q, r.Code, r.Body)
			}
			if got, want := warnings(t, r), []string{`unknown field "spec.colour"`, `duplicate field "spec.tags.a"`}; !slices.Equal(got, want) {
				t.Errorf("POST%s warnings %q, want %q", q, got, want)
			}
			// As kube-apiserver, the unknown field is dropped and the last
			// duplicate kept.
			if got := field(r.Obj(t), "spec"); !jsonEqual(t, got, `{"size":1,"tags":{"a":"2"}}`) {
				t.Errorf("stored spec %v", got)
			}
		}
	})
	t.Run("Ignore", func(t *testing.T) {
		r := f.Do("POST", coll+"?fieldValidation=Ignore", named("ignore"))
		if r.Code != 201 || len(r.Header.Values("Warning")) != 0 {
			t.Fatalf("POST = %d, warnings %q: %s", r.Code, r.Header.Values("Warning"), r.Body)
		}
		if got := field(r.Obj(t), "spec"); !jsonEqual(t, got, `{"size":1,"tags":{"a":"2"}}`) {
			t.Errorf("stored spec %v", got)
		}
	})
	t.Run("update", func(t *testing.T) {
		r := f.Do("PUT", coll+"/ignore?fieldValidation=Strict", `{"metadata":{"name":"ignore"},"spec":{"size":2},"status":{}}`)
		st := f.Status(r, 400, "BadRequest")
		if !strings.HasSuffix(st["message"].(string), `strict decoding error: unknown field "status"`) {
			t.Errorf("message %v", st["message"])
		}
	})
	t.Run("YAML duplicates", func(t *testing.T) {
		yml := "metadata:\n  name: yaml\nspec:\n  size: 1\n  size: 2\n"
		r := f.Do("POST", coll, yml, "Content-Type", "application/yaml")
		if r.Code != 201 {
			t.Fatalf("POST = %d: %s", r.Code, r.Body)
		}
		if got, want := warnings(t, r), []string{`line 5: key "size" already set in map`}; !slices.Equal(got, want) {
			t.Errorf("warnings %q, want %q", got, want)
		}
	})
	t.Run("merge patch", func(t *testing.T) {
		st := f.Status(f.Do("PATCH", coll+"/ignore?fieldValidation=Strict", `{"spec":{"weight":3}}`, "Content-Type", "application/merge-patch+json"), 422, "Invalid")
		if msg := st["message"].(string); !strings.HasPrefix(msg, ` "" is invalid: patch: Invalid value: "{`) || !strings.HasSuffix(msg, `": strict decoding error: unknown field "spec.weight"`) {
			t.Errorf("message %s", msg)
		}
		r := f.Do("PATCH", coll+"/ignore", `{"spec":{"weight":3,"size":4}}`, "Content-Type", "application/merge-patch+json")
		if r.Code != 200 {
			t.Fatalf("PATCH = %d: %s", r.Code, r.Body)
		}
		if got, want := warnings(t, r), []string{`unknown field "spec.weight"`}; !slices.Equal(got, want) {
			t.Errorf("warnings %q, want %q", got, want)
		}
		if got := field(r.Obj(t), "spec"); !jsonEqual(t, got, `{"size":4,"tags":{"a":"2"}}`) {
			t.Errorf("patched spec %v", got)
		}
	})
	t.Run("json patch", func(t *testing.T) {
		r := f.Do("PATCH", coll+"/ignore", `[{"op":"replace","path":"/spec/size","value":5,"vaule":6}]`, "Content-Type", "application/json-patch+json")
		if r.Code != 200 {
			t.Fatalf("PATCH = %d: %s", r.Code, r.Body)
		}
		if got, want := warnings(t, r), []string{`json patch unknown field "[0].vaule"`}; !slices.Equal(got, want) {
			t.Errorf("warnings %q, want %q", got, want)
		}
	})
	t.Run("types without a schema take any field", func(t *testing.T) {
		r := f.Do("POST", "/apis/example.com/v1/namespaces/fv/widgets?fieldValidation=Strict", `{"metadata":{"name":"w"},"spec":{"anything":1}}`)
		if r.Code != 201 || len(r.Header.Values("Warning")) != 0 {
			t.Fatalf("POST = %d, warnings %q: %s", r.Code, r.Header.Values("Warning"), r.Body)
		}
		// Duplicates are still found, and metadata is still ObjectMeta.
		st := f.Status(f.Do("POST", "/apis/example.com/v1/namespaces/fv/widgets?fieldValidation=Strict", `{"metadata":{"name":"w2","nmae":"x"},"spec":{"a":1,"a":2}}`), 400, "BadRequest")
		if !strings.HasSuffix(st["message"].(string), `strict decoding error: unknown field "metadata.nmae", duplicate field "spec.a"`) {
			t.Errorf("message %v", st["message"])
		}
	})
}

func TestWriteOptionValidation(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", `{"metadata":{"name":"wo"}}`)
	cms := "/api/v1/namespaces/wo/configmaps"
	cm := `{"metadata":{"name":"a"}}`

	st := f.Status(f.Do("POST", cms+"?fieldValidation=strict", cm), 422, "Invalid")
	if want := `CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "strict": supported values: "", "Ignore", "Strict", "Warn"`; st["message"] != want {
		t.Errorf("message\n got %v\nwant %s", st["message"], want)
	}
	st = f.Status(f.Do("POST", cms+"?fieldManager="+strings.Repeat("m", 129), cm), 422, "Invalid")
	if !strings.Contains(st["message"].(string), "fieldManager: Too long: may not be more than 128 bytes") {
		t.Errorf("message %v", st["message"])
	}
	f.Status(f.Do("POST", cms+"?fieldManager=a%07b", cm), 422, "Invalid")

	r := f.Do("POST", cms+"?fieldManager=kubectl-create", `{"metadata":{"name":"a"},"data":{"k":"v"}}`)
	if r.Code != 201 {
		t.Fatalf("POST = %d: %s", r.Code, r.Body)
	}
	if got := warnings(t, r); len(got) != 0 {
		t.Errorf("warnings %q, want none", got)
	}
	if !bytes.Contains(r.Body, []byte(`"manager":"kubectl-create"`)) && !bytes.Contains(r.Body, []byte(`"manager": "kubectl-create"`)) {
		t.Errorf("managedFields do not name kubectl-create: %s", r.Body)
	}
	st = f.Status(f.Do("PATCH", cms+"/a?force=true", `{}`, "Content-Type", "application/merge-patch+json"), 422, "Invalid")
	if want := `PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch`; st["message"] != want {
		t.Errorf("message\n got %v\nwant %s", st["message"], want)
	}
	st = f.Status(f.Do("PATCH", cms+"/a", `{}`, "Content-Type", "application/apply-patch+yaml"), 422, "Invalid")
	if want := `PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch`; st["message"] != want {
		t.Errorf("message\n got %v\nwant %s", st["message"], want)
	}
}

func TestIgnoredParamsWarn(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", `{"metadata":{"name":"ip"}}`)
	cms := "/api/v1/namespaces/ip/configmaps"
	for _, n := range []string{"a", "b", "c"} {
		f.Must(201, "POST", cms, `{"metadata":{"name":"`+n+`"}}`)
	}
	tests := []struct {
		name, method, path, body, want string
	}{
		{"gracePeriodSeconds in the query", "DELETE", cms + "/a?gracePeriodSeconds=30", "", "gracePeriodSeconds has no effect"},
		{"gracePeriodSeconds in the body", "DELETE", cms + "/b", `{"gracePeriodSeconds":0}`, "gracePeriodSeconds has no effect"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var body any
			if tc.body != "" {
				body = tc.body
			}
			r := f.Do(tc.method, tc.path, body)
			if r.Code != http.StatusOK {
				t.Fatalf("%s %s = %d: %s", tc.method, tc.path, r.Code, r.Body)
			}
			w := warnings(t, r)
			if len(w) != 1 || !strings.HasPrefix(w[0], tc.want) {
				t.Errorf("warnings %q, want one starting %q", w, tc.want)
			}
		})
	}
	// Pods honour it: no warning.
	pods := "/api/v1/namespaces/ip/pods"
	f.Must(201, "POST", pods, `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`)
	if r := f.Do("DELETE", pods+"/p?gracePeriodSeconds=0", nil); r.Code != 200 || len(r.Header.Values("Warning")) != 0 {
		t.Errorf("DELETE pod with gracePeriodSeconds = %d, warnings %q", r.Code, r.Header.Values("Warning"))
	}
	// A pod on a node gets the grace period asked for, in the query or
	// the body, not spec.terminationGracePeriodSeconds.
	f.Must(201, "POST", pods, `{"metadata":{"name":"q"},"spec":{"nodeName":"n","containers":[{"name":"c","image":"nginx"}]}}`)
	marked := f.Must(200, "DELETE", pods+"/q?gracePeriodSeconds=5", "")
	if g := marked["metadata"].(map[string]any)["deletionGracePeriodSeconds"]; g != 5.0 {
		t.Errorf("deletionGracePeriodSeconds = %v after gracePeriodSeconds=5, want 5", g)
	}
	f.Must(200, "DELETE", pods+"/q", `{"gracePeriodSeconds":0}`)
	f.Status(f.Do("GET", pods+"/q", nil), 404, "NotFound")
	f.Status(f.Do("DELETE", cms+"/c?gracePeriodSeconds=soon", nil), 400, "BadRequest")
	st := f.Status(f.Do("DELETE", cms+"/c?orphanDependents=true&propagationPolicy=Background", nil), 422, "Invalid")
	if !strings.Contains(st["message"].(string), "orphanDependents and deletionPropagation cannot be both set") {
		t.Errorf("message %v", st["message"])
	}
	// Bad options are judged by kube's own rules, so the messages are
	// kube-apiserver 1.37's for the same requests.
	for _, c := range []struct{ method, path, body, want string }{
		{"DELETE", cms + "/c?propagationPolicy=Bogus", "",
			`DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Bogus": supported values: "Foreground", "Background", "Orphan", "nil"`},
		{"DELETE", cms + "/c?dryRun=Bogus", "",
			`DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Bogus"]: supported values: "All"`},
		{"DELETE", cms + "/c", `{"dryRun":["X"],"orphanDependents":true,"propagationPolicy":"Orphan"}`,
			`DeleteOptions.meta.k8s.io "" is invalid: [propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set, dryRun: Unsupported value: ["X"]: supported values: "All"]`},
		{"POST", cms + "?dryRun=Bogus", `{"metadata":{"name":"d"}}`,
			`CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Bogus"]: supported values: "All"`},
	} {
		var body any
		if c.body != "" {
			body = c.body
		}
		st := f.Status(f.Do(c.method, c.path, body), 422, "Invalid")
		if st["message"] != c.want {
			t.Errorf("%s %s: message\n%v\nwant\n%s", c.method, c.path, st["message"], c.want)
		}
	}
	// A body is the whole of a delete's options, as on kube-apiserver:
	// the query's are not read, so this dry run is a delete, and the
	// bad policy is not looked at; a warning says so.
	f.Must(201, "POST", cms, `{"metadata":{"name":"d1"}}`)
	r := f.Do("DELETE", cms+"/d1?dryRun=All&propagationPolicy=Bogus", `{}`)
	if r.Code != 200 {
		t.Fatalf("DELETE with a body and query options = %d: %s", r.Code, r.Body)
	}
	if w := warnings(t, r); len(w) != 1 || !strings.HasPrefix(w[0], "dryRun, propagationPolicy in the query have no effect") {
		t.Errorf("warnings %q, want one saying the query's options have no effect", w)
	}
	f.Status(f.Do("GET", cms+"/d1", nil), 404, "NotFound")
	// Without a body the query is read.
	f.Must(201, "POST", cms, `{"metadata":{"name":"d2"}}`)
	f.Must(200, "DELETE", cms+"/d2?dryRun=All", nil)
	f.Must(200, "GET", cms+"/d2", nil)
	// A plain request has no warnings, nor one with a timeout, which is
	// honoured.
	for _, q := range []string{"", "?timeout=30s"} {
		if r := f.Do("GET", cms+q, nil); r.Code != 200 || len(r.Header.Values("Warning")) != 0 {
			t.Errorf("GET %s = %d, warnings %q", cms+q, r.Code, r.Header.Values("Warning"))
		}
	}
}

func TestRequestTimeout(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", `{"metadata":{"name":"to"}}`)
	cms := "/api/v1/namespaces/to/configmaps"
	f.Status(f.Do("GET", cms+"?timeout=soon", nil), 400, "BadRequest")
	// A timeout that has passed before the write reaches etcd: 504, and
	// nothing stored.
	st := f.Status(f.Do("POST", cms+"?timeout=1ns", `{"metadata":{"name":"late"}}`), 504, "Timeout")
	if st["message"] != "Timeout: request did not complete within requested timeout - context deadline exceeded" {
		t.Errorf("message %v", st["message"])
	}
	f.Status(f.Do("GET", cms+"/late", nil), 404, "NotFound")
	f.Must(201, "POST", cms+"?timeout=30s", `{"metadata":{"name":"in-time"}}`)

	// A resourceVersion etcd has not reached: after a wait, kube's 504
	// (storage.NewTooLargeResourceVersionError), with the cause
	// reflectors look for.
	st = f.Status(f.Do("GET", cms+"?resourceVersion=999999999&resourceVersionMatch=NotOlderThan", nil), 504, "Timeout")
	if msg, _ := st["message"].(string); !strings.HasPrefix(msg, "Timeout: Too large resource version: 999999999, current: ") {
		t.Errorf("message %q", msg)
	}
	if d, _ := st["details"].(map[string]any); d == nil || !jsonEqual(t, d["causes"], `[{"reason":"ResourceVersionTooLarge","message":"Too large resource version"}]`) {
		t.Errorf("details %v", st["details"])
	}
}

// jsonEqual compares a decoded JSON value with JSON text.
func jsonEqual(t *testing.T, got any, want string) bool {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(w)
	return string(a) == string(b)
}
