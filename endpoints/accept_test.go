package endpoints

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"sigs.k8s.io/yaml"
)

// TestAcceptAsKube: which Accept headers get an answer, and in what, is
// kube-apiserver's, each case read from kube-apiserver 1.37.1 for the
// same request. Its router (go-restful) refuses, before any handler, an
// Accept naming neither "*/*" nor exactly a type the route declares (so
// "application/*" and "text/yaml" too) on the paths it routes: built-in
// kinds, /api, /api/v1, built-in group versions and /version; the
// handlers then negotiate as kube's negotiation package does, discovery
// documents included, which come in JSON, YAML or protobuf.
func TestAcceptAsKube(t *testing.T) {
	f := newScaleFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces/ns1/configmaps", `{"metadata":{"name":"a"}}`)
	const (
		routed     = "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/vnd.kubernetes.protobuf"
		routedList = routed + ", application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"
		negotiated = "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
		streams    = "only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"
	)
	refused := []struct{ path, accept, message string }{
		{"/api/v1/namespaces/ns1/configmaps/a", "application/*", routed},
		{"/api/v1/namespaces/ns1/configmaps/missing", "text/plain", routed}, // before the lookup
		{"/api/v1/namespaces/ns1/configmaps", "text/yaml", routedList},
		{"/api/v1/namespaces/ns1/configmaps?watch=1", "application/xml", routedList},
		{"/api/v1/namespaces/ns1/pods/p/log", "application/xml", "406: Not Acceptable\n\nAvailable representations: text/plain, application/json, application/yaml, application/vnd.kubernetes.protobuf"},
		{"/api/v1/namespaces/ns1/configmaps?watch=1", "application/yaml", streams},
		{"/api/v1/namespaces/ns1/configmaps?watch=1", "*/*, application/yaml", streams},
		{doohickeys, "text/yaml", negotiated}, // a custom resource: no router check
		{"/api/v1", "application/*", routed},
		{"/api", "text/plain", routed},
		{"/api", "application/json;as=Table;v=v1;g=meta.k8s.io", negotiated},
		{"/apis", "text/plain", negotiated},
		{"/apis/apps", "application/json-seq", negotiated},
		{"/apis/apps/v1", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", negotiated},
		{"/apis/example.com/v1", "text/plain", negotiated},
		{"/version", "application/yaml", "406: Not Acceptable\n\nAvailable representations: application/json"},
	}
	for _, tc := range refused {
		r := f.Do("GET", tc.path, nil, "Accept", tc.accept)
		// The Status comes in the format asked for where it can: YAML
		// for the YAML refusals.
		var st map[string]any
		if err := yaml.Unmarshal(r.Body, &st); err != nil || r.Code != http.StatusNotAcceptable || st["reason"] != "NotAcceptable" {
			t.Errorf("%s with Accept %q: %d %v: %s", tc.path, tc.accept, r.Code, err, r.Body)
			continue
		}
		if st["message"] != tc.message {
			t.Errorf("%s with Accept %q: message %q, want %q", tc.path, tc.accept, st["message"], tc.message)
		}
		_, hasDetails := st["details"]
		if routedRefusal := tc.message[:4] == "406:"; hasDetails != routedRefusal {
			t.Errorf("%s with Accept %q: details present %v, want %v (the router's Status has empty details)", tc.path, tc.accept, hasDetails, routedRefusal)
		}
	}

	served := []struct{ path, accept, contentType string }{
		{"/api/v1/namespaces/ns1/configmaps/a", "application/json;q=0", "application/json"},
		{"/api/v1/namespaces/ns1/configmaps", "*/*, application/yaml", "application/yaml"},
		{doohickeys, "application/*", "application/json"},
		{"/api/v1", "application/yaml", "application/yaml"},
		{"/apis", "*/*;q=0.5, application/yaml;q=0.1", "application/yaml"},
		{"/api/v1", "application/vnd.kubernetes.protobuf", "application/vnd.kubernetes.protobuf"},
		{"/version", "application/json;as=Foo", "application/json"},
	}
	for _, tc := range served {
		r := f.Do("GET", tc.path, nil, "Accept", tc.accept)
		if r.Code != 200 || r.Header.Get("Content-Type") != tc.contentType {
			t.Errorf("%s with Accept %q: %d %s, want 200 %s: %s", tc.path, tc.accept, r.Code, r.Header.Get("Content-Type"), tc.contentType, r.Body)
		}
	}

	// Request bodies likewise: only the types kube reads.
	for _, ct := range []string{"text/yaml", "application/x-yaml"} {
		r := f.Do("POST", "/api/v1/namespaces/ns1/configmaps", "metadata:\n  name: y\n", "Content-Type", ct)
		st := f.Status(r, http.StatusUnsupportedMediaType, "UnsupportedMediaType")
		if want := "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf"; st["message"] != want {
			t.Errorf("POST as %s: message %q", ct, st["message"])
		}
	}

	// The discovery documents in YAML and protobuf say what the JSON says.
	want := f.Do("GET", "/api/v1", nil)
	var fromJSON, fromYAML metav1.APIResourceList
	if err := yaml.Unmarshal(want.Body, &fromJSON); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(f.Do("GET", "/api/v1", nil, "Accept", "application/yaml").Body, &fromYAML); err != nil {
		t.Fatal(err)
	}
	s := runtime.NewScheme()
	// The envelope carries the document's own apiVersion, v1.
	s.AddKnownTypeWithName(schema.GroupVersion{Version: "v1"}.WithKind("APIResourceList"), &metav1.APIResourceList{})
	obj, _, err := protobuf.NewSerializer(s, s).Decode(f.Do("GET", "/apis/example.com/v1", nil, "Accept", "application/vnd.kubernetes.protobuf").Body, nil, &metav1.APIResourceList{})
	if err != nil {
		t.Fatal(err)
	}
	var crdJSON metav1.APIResourceList
	if err := yaml.Unmarshal(f.Do("GET", "/apis/example.com/v1", nil).Body, &crdJSON); err != nil {
		t.Fatal(err)
	}
	fromProto := obj.(*metav1.APIResourceList)
	if len(fromJSON.APIResources) == 0 || !equalJSON(t, fromJSON, fromYAML) || !equalJSON(t, crdJSON.APIResources, fromProto.APIResources) || fromProto.GroupVersion != "example.com/v1" {
		t.Errorf("discovery differs by format: JSON %d resources, YAML %d; protobuf %+v", len(fromJSON.APIResources), len(fromYAML.APIResources), fromProto)
	}
}

// equalJSON reports whether a and b marshal to the same JSON.
func equalJSON(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err := yaml.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := yaml.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(ja, jb)
}

// TestDiscoveryBytesAsKube: the discovery documents are laid out as
// kube-apiserver 1.37.1 writes them (compared byte for byte): compact
// JSON ends in a newline, JSON indented for curl does not, /version is
// always indented and says which version it emulates, and the
// aggregated document's entity tag is the hash kube computes, of the
// list without its kind and apiVersion.
func TestDiscoveryBytesAsKube(t *testing.T) {
	f := newFixture(t)
	compact := f.Do("GET", "/apis", nil, "User-Agent", "kubectl")
	if b := compact.Body; len(b) == 0 || b[len(b)-1] != '\n' || bytes.Contains(b, []byte("\n  ")) {
		t.Errorf("compact /apis: %q", b)
	}
	indented := f.Do("GET", "/apis", nil, "User-Agent", "curl/8.5.0")
	if b := indented.Body; len(b) == 0 || b[len(b)-1] != '}' || !bytes.Contains(b, []byte("\n  \"kind\": \"APIGroupList\"")) {
		t.Errorf("indented /apis: %q", b)
	}
	var v map[string]any
	r := f.Do("GET", "/version", nil, "User-Agent", "kubectl")
	if err := yaml.Unmarshal(r.Body, &v); err != nil || r.Body[len(r.Body)-1] != '}' ||
		v["emulationMajor"] != "1" || v["emulationMinor"] != "37" || v["minCompatibilityMajor"] != "1" || v["minCompatibilityMinor"] != "36" {
		t.Errorf("/version: %v: %s", err, r.Body)
	}

	agg := f.Do("GET", "/apis", nil, "Accept", acceptAggregated, "User-Agent", "kubectl")
	var list struct {
		Items json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(agg.Body, &list); err != nil {
		t.Fatal(err)
	}
	items := list.Items // as written, byte for byte
	untyped := append(append([]byte(`{"metadata":{},"items":`), items...), '}')
	if want := etagOf(untyped); agg.Header.Get("ETag") != want {
		t.Errorf("aggregated ETag %s, want %s", agg.Header.Get("ETag"), want)
	}
}

// TestDiscoveryMethodsAsKube: the documents kube-apiserver serves outside
// its router (/apis, a group, a custom resource group's version, the
// OpenAPI documents) answer any method as a GET; those its router serves
// (/api, /api/v1, a built-in group version, /version) GET only, 405
// otherwise. Each answer read from kube-apiserver 1.37.1.
func TestDiscoveryMethodsAsKube(t *testing.T) {
	f := newScaleFixture(t)
	for _, method := range []string{"HEAD", "POST", "DELETE"} {
		for _, path := range []string{"/apis", "/apis/apps", "/apis/example.com/v1", "/openapi/v2", "/openapi/v3", "/openapi/v3/api/v1"} {
			if r := f.Do(method, path, nil); r.Code != 200 {
				t.Errorf("%s %s = %d, want 200", method, path, r.Code)
			}
		}
		for _, path := range []string{"/api", "/api/v1", "/apis/apps/v1", "/version"} {
			if r := f.Do(method, path, nil); r.Code != 405 {
				t.Errorf("%s %s = %d, want 405", method, path, r.Code)
			}
		}
	}
}

// TestDocumentLeavesSharedBytes: a discovery document's bytes are shared
// by every request (and every server of the process), so writing them
// must never write into them, not even into their spare capacity: two
// requests at once did (the race detector caught it in CI).
func TestDocumentLeavesSharedBytes(t *testing.T) {
	doc := `{"kind":"APIGroupDiscoveryList"}`
	shared := make([]byte, len(doc), len(doc)+8)
	copy(shared, doc)
	for _, pretty := range []bool{false, true} {
		w := httptest.NewRecorder()
		writeDocument(w, httptest.NewRequest("GET", "/apis", nil), shared, "application/json", "application/json", pretty, nil)
		if spare := shared[:cap(shared)][len(doc):]; !bytes.Equal(spare, make([]byte, len(spare))) {
			t.Fatalf("pretty %v: the shared bytes' spare capacity was written: %q", pretty, spare)
		}
		if got := w.Body.String(); (!pretty && got != doc+"\n") || (pretty && got[len(got)-1] != '}') {
			t.Errorf("pretty %v: wrote %q", pretty, got)
		}
	}
}
