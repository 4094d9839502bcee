package endpoints

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	openapiv3 "github.com/google/gnostic-models/openapiv3"
	"github.com/miniapi/miniapi/registry"
	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/openapi3"
	"k8s.io/client-go/rest"
	"k8s.io/kube-openapi/pkg/spec3"
	openapiproto "k8s.io/kube-openapi/pkg/util/proto"
	"k8s.io/kube-openapi/pkg/util/proto/validation"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// v3Index fetches /openapi/v3 and returns the serverRelativeURL of each
// group version.
func (f *fixture) v3Index() map[string]string {
	f.t.Helper()
	idx := f.Must(200, "GET", "/openapi/v3", nil)
	out := map[string]string{}
	for k, v := range idx["paths"].(map[string]any) {
		out[k] = v.(map[string]any)["serverRelativeURL"].(string)
	}
	return out
}

func TestOpenAPIV3Endpoints(t *testing.T) {
	f := newFixture(t)
	idx := f.v3Index()
	var keys []string
	for k := range idx {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !containsAll(keys, "api/v1", "apis/apps/v1", "apis/autoscaling/v1", "apis/autoscaling/v2", "apis/coordination.k8s.io/v1", "apis/example.com/v1") {
		t.Fatalf("index keys = %v", keys)
	}
	url := idx["api/v1"]
	path, hash, ok := strings.Cut(url, "?hash=")
	if !ok || path != "/openapi/v3/api/v1" || len(hash) != 128 {
		t.Fatalf("serverRelativeURL = %q", url)
	}

	t.Run("hashed URL is cacheable for good", func(t *testing.T) {
		r := f.Do("GET", url, nil)
		if r.Code != 200 || r.Header.Get("Content-Type") != "application/json" || r.Header.Get("ETag") != `"`+hash+`"` ||
			r.Header.Get("Cache-Control") != "public, immutable" || r.Header.Get("Expires") == "" || r.Header.Get("Vary") != "Accept" {
			t.Fatalf("code %d headers %v", r.Code, r.Header)
		}
		if nm := f.Do("GET", url, nil, "If-None-Match", `"`+hash+`"`); nm.Code != http.StatusNotModified {
			t.Errorf("If-None-Match: code %d", nm.Code)
		}
	})
	t.Run("unhashed URL is not marked immutable", func(t *testing.T) {
		r := f.Do("GET", path, nil)
		if r.Code != 200 || r.Header.Get("Cache-Control") != "" || r.Header.Get("ETag") != `"`+hash+`"` {
			t.Fatalf("code %d headers %v", r.Code, r.Header)
		}
	})
	t.Run("stale hash redirects to the current document", func(t *testing.T) {
		req, _ := http.NewRequest("GET", f.url+path+"?hash=0123", nil)
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != url {
			t.Fatalf("code %d Location %q, want 301 to %q", resp.StatusCode, resp.Header.Get("Location"), url)
		}
	})
	t.Run("protobuf", func(t *testing.T) {
		for _, accept := range []string{"application/com.github.proto-openapi.spec.v3.v1.0+protobuf", "application/com.github.proto-openapi.spec.v3@v1.0+protobuf"} {
			r := f.Do("GET", url, nil, "Accept", accept)
			if r.Code != 200 || r.Header.Get("Content-Type") != "application/com.github.proto-openapi.spec.v3.v1.0+protobuf" {
				t.Fatalf("%s: code %d Content-Type %q", accept, r.Code, r.Header.Get("Content-Type"))
			}
			var doc openapiv3.Document
			if err := proto.Unmarshal(r.Body, &doc); err != nil {
				t.Fatal(err)
			}
			if doc.GetOpenapi() != "3.0.0" || len(doc.GetPaths().GetPath()) == 0 {
				t.Fatalf("protobuf document: openapi %q, %d paths", doc.GetOpenapi(), len(doc.GetPaths().GetPath()))
			}
		}
	})
	t.Run("errors", func(t *testing.T) {
		// kube-openapi answers these with the code alone.
		for _, tc := range []struct {
			path, accept string
			code         int
		}{
			{"/openapi/v3/apis/nope.example.com/v1", "", 404},
			{path, "text/html", 406},
			{"/openapi/v2", "text/html", 406},
			{"/openapi/v2", "application/xml, text/*", 406},
		} {
			r := f.Do("GET", tc.path, nil, "Accept", tc.accept)
			if r.Code != tc.code || len(r.Body) != 0 {
				t.Errorf("%s with Accept %q: %d %q, want %d and no body", tc.path, tc.accept, r.Code, r.Body, tc.code)
			}
		}
	})
}

// v3Spec fetches one group version's document with client-go's OpenAPI
// v3 client, as kubectl does, and parses it with kube-openapi's types.
func v3Spec(t *testing.T, f *fixture, gv schema.GroupVersion) (*spec3.OpenAPI, map[string]any) {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: f.url})
	if err != nil {
		t.Fatal(err)
	}
	root := openapi3.NewRoot(dc.OpenAPIV3())
	doc, err := root.GVSpec(gv)
	if err != nil {
		t.Fatalf("GVSpec(%s): %v", gv, err)
	}
	raw, err := root.GVSpecAsMap(gv)
	if err != nil {
		t.Fatal(err)
	}
	return doc, raw
}

// hasGVK reports whether an extension value names gvk: one object (on
// operations) or a list of them (on definitions).
func hasGVK(ext any, gvk schema.GroupVersionKind) bool {
	match := func(v any) bool {
		m, _ := v.(map[string]any)
		return m != nil && m["group"] == gvk.Group && m["version"] == gvk.Version && m["kind"] == gvk.Kind
	}
	if list, ok := ext.([]any); ok {
		return slices.ContainsFunc(list, match)
	}
	return match(ext)
}

// patchSupport finds the PATCH operation of gvk as kubectl does (the first
// path whose patch carries the kind's extension) and reports whether it
// takes fieldValidation and which patch types it accepts.
func patchSupport(doc *spec3.OpenAPI, gvk schema.GroupVersionKind) (fieldValidation bool, patchTypes []string, found bool) {
	for _, p := range doc.Paths.Paths {
		op := p.Patch
		if op == nil || !hasGVK(op.Extensions[gvkExtension], gvk) {
			continue
		}
		for _, param := range op.Parameters {
			if param.Name == "fieldValidation" {
				fieldValidation = true
			}
		}
		for mt := range op.RequestBody.Content {
			patchTypes = append(patchTypes, mt)
		}
		slices.Sort(patchTypes)
		return fieldValidation, patchTypes, true
	}
	return false, nil, false
}

func TestOpenAPIV3ClientGo(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		gvk     schema.GroupVersionKind
		def     string
		builtin bool
		field   string // a field the kind's schema declares
	}{
		{schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, "io.k8s.api.core.v1.ConfigMap", true, "data"},
		{schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, "io.k8s.api.core.v1.Namespace", true, "status"},
		{schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, "io.k8s.api.core.v1.Secret", true, "stringData"},
		{schema.GroupVersionKind{Version: "v1", Kind: "Event"}, "io.k8s.api.core.v1.Event", true, "involvedObject"},
		{schema.GroupVersionKind{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"}, "io.k8s.api.coordination.v1.Lease", true, "spec"},
		{schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, "com.example.v1.Widget", false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.gvk.Kind, func(t *testing.T) {
			doc, raw := v3Spec(t, f, tc.gvk.GroupVersion())
			def, ok := doc.Components.Schemas[tc.def]
			if !ok {
				t.Fatalf("no definition %s", tc.def)
			}
			if !hasGVK(toJSONValue(t, def.Extensions[gvkExtension]), tc.gvk) {
				t.Errorf("%s: extension %v does not name %v", tc.def, def.Extensions[gvkExtension], tc.gvk)
			}
			if def.Description == "" {
				t.Errorf("%s has no description", tc.def)
			}
			for _, p := range []string{"apiVersion", "kind", "metadata"} {
				if _, ok := def.Properties[p]; !ok {
					t.Errorf("%s lacks %s", tc.def, p)
				}
			}
			if md := def.Properties["metadata"]; refOf(md) != v3RefPrefix+defObjectMeta {
				t.Errorf("metadata refers to %q", refOf(md))
			}
			if list, ok := doc.Components.Schemas[tc.def+"List"]; !ok || refOf(*list.Properties["items"].Items.Schema) != v3RefPrefix+tc.def {
				t.Errorf("list definition missing or wrong: %+v", list)
			}
			if tc.builtin {
				if d := def.Properties[tc.field].Description; d == "" {
					t.Errorf("%s.%s has no description", tc.def, tc.field)
				}
			} else if def.Extensions["x-kubernetes-preserve-unknown-fields"] != true {
				t.Errorf("a kind without a schema must preserve unknown fields: %v", def.Extensions)
			}

			// kubectl uses server-side field validation when the kind's
			// PATCH takes fieldValidation, and strategic merge patch when
			// it accepts one.
			fv, types, found := patchSupport(doc, tc.gvk)
			if !found || !fv {
				t.Errorf("PATCH found %v, takes fieldValidation %v", found, fv)
			}
			if smp := slices.Contains(types, "application/strategic-merge-patch+json"); smp != tc.builtin {
				t.Errorf("patch types %v: strategic merge %v, want %v", types, smp, tc.builtin)
			}
			if !slices.Contains(types, "application/apply-patch+yaml") {
				t.Errorf("patch types %v do not include server-side apply", types)
			}
			for path, item := range doc.Paths.Paths {
				for method, op := range map[string]*spec3.Operation{"post": item.Post, "put": item.Put, "patch": item.Patch} {
					// Connections (exec, proxy) write no object, as kube's.
					if op != nil && op.Extensions["x-kubernetes-action"] != "connect" && !slices.ContainsFunc(op.Parameters, func(p *spec3.Parameter) bool { return p.Name == "fieldValidation" }) {
						t.Errorf("%s %s does not advertise fieldValidation", method, path)
					}
				}
			}
			reads := 0
			for path, item := range doc.Paths.Paths {
				if get := item.Get; get != nil && get.Extensions["x-kubernetes-action"] == "get" {
					reads++
					_, pb := get.Responses.StatusCodeResponses[200].Content["application/vnd.kubernetes.protobuf"]
					if pb != tc.builtin {
						t.Errorf("GET %s: protobuf answer advertised %v, want %v", path, pb, tc.builtin)
					}
				}
			}
			if reads == 0 {
				t.Error("no read operation found")
			}
			if tc.builtin {
				checkExplain(t, raw, tc.gvk, tc.field)
			}
		})
	}
}

// refOf is where a schema refers to: its $ref, or, as kube-openapi
// writes a reference with a description or a default in v3, the $ref of
// its one allOf branch.
func refOf(s spec.Schema) string {
	if r := s.Ref.String(); r != "" {
		return r
	}
	if len(s.AllOf) == 1 {
		return s.AllOf[0].Ref.String()
	}
	return ""
}

// toJSONValue round-trips v through JSON, so that extension values read
// by kube-openapi compare like decoded JSON.
func toJSONValue(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkExplain walks a document as `kubectl explain` does: the kind's
// operations give its GVK, the GVK its definition, and the field path
// (following references) the field's description.
func checkExplain(t *testing.T, doc map[string]any, gvk schema.GroupVersionKind, fieldName string) {
	t.Helper()
	paths := doc["paths"].(map[string]any)
	var opGVK any
	for p, item := range paths {
		if get, ok := item.(map[string]any)["get"].(map[string]any); ok && !strings.Contains(p, "/watch/") && hasGVK(get[gvkExtension], gvk) {
			opGVK = get[gvkExtension]
			break
		}
	}
	if opGVK == nil {
		t.Fatalf("no operation names %v", gvk)
	}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	var def map[string]any
	for _, s := range schemas {
		sm := s.(map[string]any)
		if list, ok := sm[gvkExtension].([]any); ok && slices.ContainsFunc(list, func(v any) bool { return fmt.Sprint(v) == fmt.Sprint(opGVK) }) {
			def = sm
		}
	}
	if def == nil {
		t.Fatalf("no definition carries the operation's GVK %v", opGVK)
	}
	fieldSchema, _ := def["properties"].(map[string]any)[fieldName].(map[string]any)
	if desc, _ := fieldSchema["description"].(string); desc == "" {
		t.Errorf("explain %s.%s: no description", gvk.Kind, fieldName)
	}
	meta := def["properties"].(map[string]any)["metadata"].(map[string]any)
	if allOf, ok := meta["allOf"].([]any); ok && len(allOf) == 1 {
		meta = allOf[0].(map[string]any)
	}
	ref := strings.TrimPrefix(meta["$ref"].(string), v3RefPrefix)
	labels, _ := schemas[ref].(map[string]any)["properties"].(map[string]any)["labels"].(map[string]any)
	if desc, _ := labels["description"].(string); desc == "" {
		t.Errorf("explain %s.metadata.labels: no description", gvk.Kind)
	}
}

// TestOpenAPIV3StrategicMerge computes an apply patch from the served
// ConfigMap schema as kubectl apply does, and checks it is the patch the
// Go type's own patch strategies give: the served schema carries kube's
// merge keys and strategies (finalizers merge, with their order kept).
func TestOpenAPIV3StrategicMerge(t *testing.T) {
	f := newFixture(t)
	doc, _ := v3Spec(t, f, schema.GroupVersion{Version: "v1"})
	meta := strategicpatch.PatchMetaFromOpenAPIV3{Schema: doc.Components.Schemas["io.k8s.api.core.v1.ConfigMap"], SchemaList: doc.Components.Schemas}
	original := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"x":"1"},"finalizers":["a/b"]},"data":{"k":"v"}}`)
	modified := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"x":"2"},"finalizers":["a/b","c/d"]},"data":{"k":"w","n":"m"}}`)
	patch, err := strategicpatch.CreateThreeWayMergePatch(original, modified, original, meta, false)
	if err != nil {
		t.Fatal(err)
	}
	goMeta, err := strategicpatch.NewPatchMetaFromStruct(corev1.ConfigMap{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := strategicpatch.CreateThreeWayMergePatch(original, modified, original, goMeta, false)
	if err != nil {
		t.Fatal(err)
	}
	if string(patch) != string(want) {
		t.Errorf("patch from the served schema:\n %s\nfrom the Go type:\n %s", patch, want)
	}
	if !strings.Contains(string(patch), "$setElementOrder/finalizers") {
		t.Errorf("patch %s keeps no finalizer order: the schema lost finalizers' merge strategy", patch)
	}
}

func TestOpenAPIV2(t *testing.T) {
	f := newFixture(t)
	r := f.Do("GET", "/openapi/v2", nil)
	if r.Code != 200 || r.Header.Get("Content-Type") != "application/json" || r.Header.Get("ETag") == "" {
		t.Fatalf("code %d headers %v", r.Code, r.Header)
	}
	var sw spec.Swagger
	if err := json.Unmarshal(r.Body, &sw); err != nil {
		t.Fatal(err)
	}
	if sw.Swagger != "2.0" || len(sw.Paths.Paths) == 0 {
		t.Fatalf("swagger %q, %d paths", sw.Swagger, len(sw.Paths.Paths))
	}
	cm, ok := sw.Definitions["io.k8s.api.core.v1.ConfigMap"]
	md := cm.Properties["metadata"]
	if !ok || md.Ref.String() != "#/definitions/"+defObjectMeta {
		t.Fatalf("ConfigMap definition: %+v", cm)
	}
	if nm := f.Do("GET", "/openapi/v2", nil, "If-None-Match", r.Header.Get("ETag")); nm.Code != http.StatusNotModified {
		t.Errorf("If-None-Match: code %d", nm.Code)
	}

	// kubectl reads v2 as protobuf through the discovery client.
	dc, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: f.url})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := dc.OpenAPISchema()
	if err != nil {
		t.Fatal(err)
	}
	models, err := openapiproto.NewOpenAPIData(doc)
	if err != nil {
		t.Fatalf("kubectl's v2 parser refuses the document: %v", err)
	}
	for _, gvk := range []schema.GroupVersionKind{{Version: "v1", Kind: "ConfigMap"}, {Group: "example.com", Version: "v1", Kind: "Widget"}} {
		if !v2PatchTakesFieldValidation(doc, gvk) {
			t.Errorf("%v: v2 PATCH does not take fieldValidation", gvk)
		}
	}

	// kubectl's client-side validation, for servers without
	// fieldValidation.
	tests := []struct {
		name, model, object string
		valid               bool
	}{
		{"valid configmap", "io.k8s.api.core.v1.ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"x":"y"}},"data":{"k":"v"}}`, true},
		{"unknown field", "io.k8s.api.core.v1.ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"datta":{"k":"v"}}`, false},
		{"unknown metadata field", "io.k8s.api.core.v1.ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","lables":{}}}`, false},
		{"wrong type", "io.k8s.api.core.v1.ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":["k"]}`, false},
		{"valid lease", "io.k8s.api.coordination.v1.Lease", `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"a"},"spec":{"holderIdentity":"me","leaseDurationSeconds":15,"renewTime":"2024-01-01T00:00:00.000000Z"}}`, true},
		{"valid event", "io.k8s.api.core.v1.Event", `{"apiVersion":"v1","kind":"Event","metadata":{"name":"a"},"involvedObject":{"kind":"Pod","name":"p"},"reason":"Started","count":2}`, true},
		{"namespace status", "io.k8s.api.core.v1.Namespace", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"a"},"status":{"phase":"Active","conditions":[{"type":"X","status":"True"}]}}`, true},
		{"widget takes anything", "com.example.v1.Widget", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a"},"spec":{"color":"red"},"anything":[1]}`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			model := models.LookupModel(tc.model)
			if model == nil {
				t.Fatalf("no model %s", tc.model)
			}
			var obj any
			if err := json.Unmarshal([]byte(tc.object), &obj); err != nil {
				t.Fatal(err)
			}
			errs := validation.ValidateModel(obj, model, tc.model)
			if (len(errs) == 0) != tc.valid {
				t.Errorf("errors %v, want valid %v", errs, tc.valid)
			}
		})
	}
}

// v2PatchTakesFieldValidation looks for fieldValidation on the kind's
// PATCH as kubectl's v2 query parameter check does.
func v2PatchTakesFieldValidation(doc *openapiv2.Document, gvk schema.GroupVersionKind) bool {
	for _, p := range doc.GetPaths().GetPath() {
		patch := p.GetValue().GetPatch()
		if patch == nil {
			continue
		}
		ext := openapiproto.VendorExtensionToMap(patch.GetVendorExtension())
		g, _ := ext[gvkExtension].(map[any]any)
		if g["group"] != gvk.Group || g["version"] != gvk.Version || g["kind"] != gvk.Kind {
			continue
		}
		for _, param := range patch.GetParameters() {
			if param.GetParameter().GetNonBodyParameter().GetQueryParameterSubSchema().GetName() == "fieldValidation" {
				return true
			}
		}
		return false
	}
	return false
}

// TestOpenAPIFollowsRegistry adds and removes a type with a schema while
// serving: the index, the group version's document and its hash follow.
func TestOpenAPIFollowsRegistry(t *testing.T) {
	f := newFixture(t)
	before := f.v3Index()
	gadget := registry.Type{Group: "toys.example.org", Version: "v1", Kind: "Gadget", Plural: "gadgets",
		Description: "A toy.",
		Schema: json.RawMessage(`{"type":"object","properties":{"spec":{"type":"object","description":"What the gadget does.",` +
			`"properties":{"size":{"type":"integer","nullable":true},"mode":{"oneOf":[{"type":"string"},{"type":"integer"}]}}}}}`)}
	if err := f.reg.Add(gadget); err != nil {
		t.Fatal(err)
	}
	after := f.v3Index()
	url, ok := after["apis/toys.example.org/v1"]
	if !ok {
		t.Fatalf("index lacks the new group version: %v", after)
	}
	if after["api/v1"] != before["api/v1"] {
		t.Error("an unrelated group version's hash changed")
	}
	doc := f.Must(200, "GET", url, nil)
	def := field(doc, "components.schemas").(map[string]any)["org.example.toys.v1.Gadget"].(map[string]any)
	if def["description"] != "A toy." || field(def, "properties.spec.description") != "What the gadget does." {
		t.Errorf("Gadget definition = %v", def)
	}
	if _, ok := field(doc, "paths").(map[string]any)["/apis/toys.example.org/v1/gadgets/{name}"]; !ok {
		t.Error("no path for a named gadget")
	}
	// v2 drops what Swagger 2.0 cannot say, and still parses.
	v2 := f.Must(200, "GET", "/openapi/v2", nil)
	spec := field(v2, "definitions").(map[string]any)["org.example.toys.v1.Gadget"].(map[string]any)
	if size := field(spec, "properties.spec.properties.size").(map[string]any); size["type"] != nil || size["nullable"] != nil {
		t.Errorf("v2 nullable field = %v", size)
	}
	if mode := field(spec, "properties.spec.properties.mode").(map[string]any); mode["oneOf"] != nil {
		t.Errorf("v2 oneOf field = %v", mode)
	}
	pb := f.Do("GET", "/openapi/v2", nil, "Accept", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf")
	var pdoc openapiv2.Document
	if err := proto.Unmarshal(pb.Body, &pdoc); err != nil || pb.Code != 200 {
		t.Fatalf("protobuf v2: code %d, %v", pb.Code, err)
	}
	if _, err := openapiproto.NewOpenAPIData(&pdoc); err != nil {
		t.Fatalf("v2 with the new type does not parse: %v", err)
	}

	if err := f.reg.Remove(registry.GVR{Group: "toys.example.org", Version: "v1", Resource: "gadgets"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.v3Index()["apis/toys.example.org/v1"]; ok {
		t.Error("index still lists the removed group version")
	}
	path, _, _ := strings.Cut(url, "?")
	if r := f.Do("GET", path, nil); r.Code != 404 {
		t.Errorf("removed group version's document: %d, want 404", r.Code)
	}
}

// TestOpenAPIMetaDefinitionsMatchGoTypes checks the shared definitions
// have exactly the fields of apimachinery's Go types, as kube-apiserver
// publishes them.
