package e2e

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"time"

	"k8s.io/client-go/rest"
)

// maxBody is kube-apiserver's (and miniapi's) request body limit.
const maxBody = 3 << 20

// badInput is one request that must be refused with a Status.
type badInput struct {
	name    string
	method  string
	path    string
	body    any      // as for serverProc.do
	headers []string // name, value pairs
	code    int
	reason  string
	// message, when set, must be contained in the Status message.
	message string
	// causes, when set, are fields that must each have a cause in
	// details.causes.
	causes []string
}

// TestBadInput sends every kind of bad input of issue 2's requirement 6 to
// a running server and checks each gets its 4xx Status, that nothing
// stored changed, and that the server is still healthy afterwards.
func TestBadInput(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	srv := startServer(t, t.TempDir())
	srv.must(t, 201, "POST", "/api/v1/namespaces", namespace("bad"))
	const cms = "/api/v1/namespaces/bad/configmaps"
	srv.must(t, 201, "POST", cms, configMap("existing", map[string]string{"app": "x"}, map[string]string{"k": "v"}))
	srv.must(t, 201, "POST", "/apis/coordination.k8s.io/v1/namespaces/bad/leases",
		map[string]any{"metadata": map[string]any{"name": "lock"}, "spec": map[string]any{"holderIdentity": "a"}})
	before := snapshot(t, srv)

	overLimit := fmt.Sprintf(`{"metadata":{"name":"big"},"data":{"k":"%s"}}`, strings.Repeat("x", maxBody))
	deepJSON := strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000)
	deepYAML := "metadata:\n  name: deep\ndata: " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "\n"
	yaml := []string{"Content-Type", "application/yaml"}
	applyYAML := []string{"Content-Type", "application/apply-patch+yaml"}

	cases := []badInput{
		// Bodies that do not decode.
		{name: "malformed JSON", method: "POST", path: cms, body: `{"metadata": {"name": "x",}}`, code: 400, reason: "BadRequest"},
		{name: "truncated JSON", method: "POST", path: cms, body: `{"metadata":{"name":"t"`, code: 400, reason: "BadRequest"},
		{name: "trailing data after JSON", method: "POST", path: cms, body: `{"metadata":{"name":"x"}} trailing`, code: 400, reason: "BadRequest"},
		{name: "JSON array", method: "POST", path: cms, body: `[1,2]`, code: 400, reason: "BadRequest"},
		// As kube-apiserver: null decodes to an empty ConfigMap, which has no name.
		{name: "JSON null", method: "POST", path: cms, body: `null`, code: 422, reason: "Invalid"},
		{name: "empty body", method: "POST", path: cms, body: ``, code: 400, reason: "BadRequest"},
		{name: "malformed YAML", method: "POST", path: cms, body: "metadata: {name: [x\n", headers: yaml, code: 400, reason: "BadRequest"},
		{name: "truncated YAML", method: "POST", path: cms, body: "metadata:\n  name: \"trunc", headers: yaml, code: 400, reason: "BadRequest"},
		{name: "name is a number", method: "POST", path: cms, body: `{"metadata":{"name":5}}`, code: 400, reason: "BadRequest"},
		{name: "data is a string", method: "POST", path: cms, body: `{"metadata":{"name":"s"},"data":"x"}`, code: 400, reason: "BadRequest"},
		{name: "labels is an array", method: "POST", path: cms, body: `{"metadata":{"name":"l","labels":[]}}`, code: 400, reason: "BadRequest"},
		{name: "update body with wrong types", method: "PUT", path: cms + "/existing", body: `{"metadata":{"name":"existing"},"data":{"k":1}}`, code: 400, reason: "BadRequest"},

		// Bodies too large or too deep. (Over-limit bodies with a declared
		// Content-Length are in TestBadInputBodyLimit.)
		{name: "over 3 MiB chunked", method: "POST", path: cms, body: io.MultiReader(strings.NewReader(overLimit)), code: 413, reason: "RequestEntityTooLarge"},
		{name: "YAML alias bomb", method: "POST", path: cms, body: yamlAliasBomb(), headers: yaml, code: 400, reason: "BadRequest"},
		{name: "JSON nested too deep", method: "POST", path: cms, body: `{"metadata":{"name":"d"},"data":` + deepJSON + `}`, code: 400, reason: "BadRequest"},
		{name: "YAML nested too deep", method: "POST", path: cms, body: deepYAML, headers: yaml, code: 400, reason: "BadRequest"},
		{name: "merge patch nested too deep", method: "PATCH", path: cms + "/existing", body: `{"data":` + deepJSON + `}`,
			headers: []string{"Content-Type", "application/merge-patch+json"}, code: 400, reason: "BadRequest"},

		// URLs that address nothing.
		{name: "unknown resource", method: "GET", path: "/api/v1/namespaces/bad/widgets", code: 404, reason: "NotFound"},
		{name: "unknown resource, object", method: "GET", path: "/api/v1/namespaces/bad/widgets/w", code: 404, reason: "NotFound"},
		{name: "unknown group", method: "GET", path: "/apis/nope.example.com/v1/things", code: 404, reason: "NotFound"},
		{name: "unknown version of a group", method: "GET", path: "/apis/coordination.k8s.io/v9/namespaces/bad/leases", code: 404, reason: "NotFound"},
		{name: "unknown group discovery", method: "GET", path: "/apis/nope.example.com", code: 404, reason: "NotFound"},
		{name: "unknown group version discovery", method: "GET", path: "/apis/nope.example.com/v1", code: 404, reason: "NotFound"},
		{name: "unknown core version", method: "GET", path: "/api/v2/namespaces/bad/configmaps", code: 404, reason: "NotFound"},
		{name: "unknown subresource", method: "GET", path: cms + "/existing/status", code: 404, reason: "NotFound"},
		{name: "namespaced type through a cluster-scoped URL", method: "GET", path: "/api/v1/configmaps/existing", code: 404, reason: "NotFound"},
		{name: "namespaced type written through a cluster-scoped URL", method: "PUT", path: "/api/v1/configmaps/existing",
			body: configMap("existing", nil, map[string]string{"k": "changed"}), code: 404, reason: "NotFound"},
		{name: "cluster-scoped type through a namespaced URL", method: "GET", path: "/api/v1/namespaces/bad/namespaces/bad", code: 404, reason: "NotFound"},
		{name: "cluster-scoped type deleted through a namespaced URL", method: "DELETE", path: "/api/v1/namespaces/bad/namespaces/bad", code: 404, reason: "NotFound"},
		{name: "update of a missing object", method: "PUT", path: cms + "/missing", body: configMap("missing", nil, nil), code: 404, reason: "NotFound"},

		// Verbs and media types.
		{name: "POST to the all-namespaces list", method: "POST", path: "/api/v1/configmaps", body: configMap("a", nil, nil), code: 405, reason: "MethodNotAllowed"},
		{name: "DELETE on the all-namespaces list", method: "DELETE", path: "/api/v1/configmaps", code: 405, reason: "MethodNotAllowed"},
		{name: "unsupported Content-Type", method: "POST", path: cms, body: "x: y", headers: []string{"Content-Type", "text/plain"}, code: 415, reason: "UnsupportedMediaType"},
		{name: "protobuf body that does not decode", method: "POST", path: cms, body: "\x6b\x38\x73\x00", headers: []string{"Content-Type", "application/vnd.kubernetes.protobuf"}, code: 400, reason: "BadRequest"},
		{name: "Accept only HTML", method: "GET", path: cms, headers: []string{"Accept", "text/html"}, code: 406, reason: "NotAcceptable"},
		{name: "Accept only HTML, object", method: "GET", path: cms + "/existing", headers: []string{"Accept", "text/html"}, code: 406, reason: "NotAcceptable"},
		{name: "Accept an unknown conversion", method: "GET", path: cms, headers: []string{"Accept", "application/json;as=Deployment;g=apps;v=v1"}, code: 406, reason: "NotAcceptable"},
		{name: "unknown patch type", method: "PATCH", path: cms + "/existing", body: `{"data":{"k":"p"}}`,
			headers: []string{"Content-Type", "application/x-unknown-patch"}, code: 415, reason: "UnsupportedMediaType"},
		// Server-side apply: the patch is checked before anything merges.
		{name: "apply without fieldManager", method: "PATCH", path: cms + "/existing", body: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: existing\n",
			headers: applyYAML, code: 422, reason: "Invalid", message: "fieldManager: Required value: is required for apply patch", causes: []string{"fieldManager"}},
		{name: "apply patch not YAML", method: "PATCH", path: cms + "/existing?fieldManager=m", body: "a: [\n",
			headers: applyYAML, code: 400, reason: "BadRequest", message: "error decoding patch"},
		{name: "apply patch a list", method: "PATCH", path: cms + "/existing?fieldManager=m", body: "- a\n- b\n",
			headers: applyYAML, code: 400, reason: "BadRequest", message: "error decoding patch"},
		{name: "apply patch of another version", method: "PATCH", path: cms + "/existing?fieldManager=m", body: "apiVersion: v2\nkind: ConfigMap\nmetadata:\n  name: existing\n",
			headers: applyYAML, code: 400, reason: "BadRequest", message: "invalid object type: /v2, Kind=ConfigMap"},
		{name: "apply patch with managedFields", method: "PATCH", path: cms + "/existing?fieldManager=m", body: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: existing\n  managedFields: [{manager: x}]\n",
			headers: applyYAML, code: 400, reason: "BadRequest", message: "metadata.managedFields must be nil"},
		{name: "apply patch with an undeclared field", method: "PATCH", path: cms + "/existing?fieldManager=m", body: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: existing\nbogus: 1\n",
			headers: applyYAML, code: 400, reason: "BadRequest", message: ".bogus: field not declared in schema"},
		{name: "apply patch with a wrong type", method: "PATCH", path: cms + "/existing?fieldManager=m", body: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: existing\ndata:\n  k: [1]\n",
			headers: applyYAML, code: 400, reason: "BadRequest", message: ".data.k: expected string"},
		{name: "apply patch with a duplicate field, strict", method: "PATCH", path: cms + "/existing?fieldManager=m&fieldValidation=Strict", body: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: existing\ndata:\n  k: a\n  k: b\n",
			headers: applyYAML, code: 400, reason: "BadRequest", message: "error strict decoding patch: error converting YAML to JSON: yaml: unmarshal errors:\n  line 7: key \"k\" already set in map"},
		{name: "apply patch naming another object", method: "PATCH", path: cms + "/existing?fieldManager=m", body: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n",
			headers: applyYAML, code: 400, reason: "BadRequest", message: "the name of the object (other) does not match the name on the URL (existing)"},
		{name: "apply patch with an invalid label", method: "PATCH", path: cms + "/existing?fieldManager=m", body: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: existing\n  labels:\n    \"a b\": c\n",
			headers: applyYAML, code: 422, reason: "Invalid", causes: []string{"metadata.labels"}},
		{name: "apply patch with a stale resourceVersion", method: "PATCH", path: cms + "/existing?fieldManager=m", body: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: existing\n  resourceVersion: \"1\"\n",
			headers: applyYAML, code: 409, reason: "Conflict"},
		{name: "apply taking a field another manager owns", method: "PATCH", path: cms + "/existing?fieldManager=m", body: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: existing\ndata:\n  k: changed\n",
			headers: applyYAML, code: 409, reason: "Conflict", message: `Apply failed with 1 conflict: conflict with "Go-http-client" using v1: .data.k`, causes: []string{".data.k"}},
		{name: "malformed JSON patch", method: "PATCH", path: cms + "/existing", body: `[{"op":"add","path":`,
			headers: []string{"Content-Type", "application/json-patch+json"}, code: 400, reason: "BadRequest"},

		// Query parameters.
		{name: "get with resourceVersion abc", method: "GET", path: cms + "/existing?resourceVersion=abc", code: 400, reason: "BadRequest"},
		{name: "get with resourceVersion -1", method: "GET", path: cms + "/existing?resourceVersion=-1", code: 400, reason: "BadRequest"},
		{name: "list with resourceVersion abc", method: "GET", path: cms + "?resourceVersion=abc", code: 400, reason: "BadRequest"},
		{name: "list with resourceVersion -1", method: "GET", path: cms + "?resourceVersion=-1", code: 400, reason: "BadRequest"},
		{name: "resourceVersionMatch without resourceVersion", method: "GET", path: cms + "?resourceVersionMatch=NotOlderThan", code: 422, reason: "Invalid"},
		{name: "resourceVersionMatch=Exact without resourceVersion", method: "GET", path: cms + "?resourceVersionMatch=Exact", code: 422, reason: "Invalid"},
		{name: "resourceVersionMatch=Exact with resourceVersion 0", method: "GET", path: cms + "?resourceVersion=0&resourceVersionMatch=Exact", code: 422, reason: "Invalid"},
		{name: "unknown resourceVersionMatch", method: "GET", path: cms + "?resourceVersion=1&resourceVersionMatch=Newest", code: 422, reason: "Invalid"},
		{name: "invalid label selector", method: "GET", path: cms + "?labelSelector=app%20in%20(x", code: 400, reason: "BadRequest"},
		{name: "invalid label selector value", method: "GET", path: cms + "?labelSelector=app%3D%21%21", code: 400, reason: "BadRequest"},
		{name: "unsupported field selector", method: "GET", path: cms + "?fieldSelector=data.k%3Dv", code: 400, reason: "BadRequest", message: "data.k"},
		{name: "malformed field selector", method: "GET", path: cms + "?fieldSelector=metadata.name", code: 400, reason: "BadRequest"},
		{name: "invalid label selector on delete collection", method: "DELETE", path: cms + "?labelSelector=app%20in%20(x", code: 400, reason: "BadRequest"},
		{name: "dryRun=Bogus on create", method: "POST", path: cms + "?dryRun=Bogus", body: configMap("dry", nil, nil), code: 422, reason: "Invalid", causes: []string{"dryRun"}},
		{name: "dryRun=Bogus on delete", method: "DELETE", path: cms + "/existing?dryRun=Bogus", code: 422, reason: "Invalid", causes: []string{"dryRun"}},

		// Objects that decode but are not acceptable.
		{name: "invalid configmap name", method: "POST", path: cms, body: configMap("Bad_Name", nil, nil), code: 422, reason: "Invalid",
			message: `ConfigMap "Bad_Name" is invalid`, causes: []string{"metadata.name"}},
		{name: "invalid namespace name", method: "POST", path: "/api/v1/namespaces", body: namespace("a.b"), code: 422, reason: "Invalid", causes: []string{"metadata.name"}},
		{name: "invalid label key and value", method: "POST", path: cms, body: configMap("labels", map[string]string{"bad key!": "v", "k": "-bad-"}, nil),
			code: 422, reason: "Invalid", causes: []string{"metadata.labels"}},
		{name: "no name", method: "POST", path: cms, body: `{"metadata":{}}`, code: 422, reason: "Invalid", causes: []string{"metadata.name"}},
		{name: "kind mismatch", method: "POST", path: cms, body: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"k"}}`, code: 400, reason: "BadRequest", message: "converting (v1.Secret) to (core.ConfigMap)"},
		{name: "apiVersion mismatch", method: "POST", path: cms, body: `{"apiVersion":"apps/v1","kind":"ConfigMap","metadata":{"name":"k"}}`, code: 400, reason: "BadRequest", message: `no kind "ConfigMap" is registered for version "apps/v1"`},
		{name: "namespace mismatch", method: "POST", path: cms, body: `{"metadata":{"name":"n","namespace":"other"}}`, code: 400, reason: "BadRequest", message: "namespace"},
		{name: "name mismatch on update", method: "PUT", path: cms + "/existing", body: configMap("other", nil, nil), code: 400, reason: "BadRequest"},
		{name: "resourceVersion on create", method: "POST", path: cms, body: `{"metadata":{"name":"r","resourceVersion":"1"}}`, code: 400, reason: "BadRequest"},
		{name: "create in a missing namespace", method: "POST", path: "/api/v1/namespaces/missing/configmaps", body: configMap("m", nil, nil), code: 404, reason: "NotFound"},
		{name: "create that exists", method: "POST", path: cms, body: configMap("existing", nil, nil), code: 409, reason: "AlreadyExists"},
		{name: "secret data not base64", method: "POST", path: "/api/v1/namespaces/bad/secrets", body: `{"metadata":{"name":"s"},"data":{"k":"not base64!"}}`, code: 400, reason: "BadRequest"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := srv.do(t, tc.method, tc.path, tc.body, tc.headers...)
			st := wantStatus(t, r, tc.code, tc.reason)
			t.Logf("%d %s: %s", r.code, str(st, "reason"), str(st, "message"))
			if tc.message != "" && !strings.Contains(str(st, "message"), tc.message) {
				t.Errorf("message %q does not mention %q", str(st, "message"), tc.message)
			}
			if len(tc.causes) > 0 {
				checkCauses(t, st, tc.causes)
			}
		})
	}

	if after := snapshot(t, srv); !reflect.DeepEqual(after, before) {
		t.Errorf("bad input changed stored data:\nbefore %v\nafter  %v", before, after)
	}
	if r := srv.do(t, "GET", "/healthz", nil); r.code != 200 || string(r.body) != "ok" {
		t.Errorf("/healthz after bad input = %d %q", r.code, r.body)
	}
	if logs := srv.Stderr(); strings.Contains(logs, "panic") || strings.Contains(logs, "level=ERROR") {
		t.Errorf("bad input logged errors or panics:\n%s", logs)
	}
}

// TestBadInputBodyLimit checks a body over 3 MiB with a declared
// Content-Length is refused with 413 before it is sent: the request's
// headers alone get the answer.
func TestBadInputBodyLimit(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	srv := startServer(t, t.TempDir())
	srv.must(t, 201, "POST", "/api/v1/namespaces", namespace("big"))
	const cms = "/api/v1/namespaces/big/configmaps"

	// A raw connection, so the test decides how much body to send: none.
	tlsConfig, err := rest.TLSConfigFor(clientConfig(t, srv))
	if err != nil {
		t.Fatal(err)
	}
	tlsConfig.NextProtos = []string{"http/1.1"}
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: requestTimeout}, "tcp", strings.TrimPrefix(srv.URL, "https://"), tlsConfig)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(requestTimeout))
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: miniapi\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", cms, maxBody+1)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to headers declaring a %d-byte body: %v", maxBody+1, err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, response{code: resp.StatusCode, header: resp.Header, body: body}, 413, "RequestEntityTooLarge")

	// The same through net/http, body and all.
	big := fmt.Sprintf(`{"metadata":{"name":"big"},"data":{"k":"%s"}}`, strings.Repeat("x", maxBody))
	r := srv.do(t, "POST", cms, big, "Expect", "100-continue")
	wantStatus(t, r, 413, "RequestEntityTooLarge")

	// Exactly at the limit is not refused for its size.
	atLimit := `{"metadata":{"name":"at-limit"},"data":{"k":"` + strings.Repeat("x", maxBody-len(`{"metadata":{"name":"at-limit"},"data":{"k":""}}`)) + `"}}`
	if len(atLimit) != maxBody {
		t.Fatalf("test body is %d bytes, want %d", len(atLimit), maxBody)
	}
	if r := srv.do(t, "POST", cms, atLimit); r.code == 413 {
		t.Errorf("a body of exactly %d bytes was refused as too large: %s", maxBody, r.body)
	}
	if n := names(t, srv.must(t, 200, "GET", cms, nil)); len(n) > 1 || (len(n) == 1 && n[0] != "at-limit") {
		t.Errorf("over-limit bodies stored objects: %v", n)
	}
}

// checkCauses fails the test unless the Status has a cause, with a reason
// and a message, for each field.
func checkCauses(t *testing.T, st map[string]any, fields []string) {
	t.Helper()
	raw, _ := get(st, "details.causes").([]any)
	have := map[string]bool{}
	for _, c := range raw {
		cm, _ := c.(map[string]any)
		if str(cm, "reason") == "" || str(cm, "message") == "" {
			t.Errorf("cause without reason or message: %v", cm)
		}
		have[str(cm, "field")] = true
	}
	for _, f := range fields {
		if !have[f] {
			t.Errorf("no cause for field %s in %v", f, raw)
		}
	}
}

// snapshot records what the server stores: every namespace, configmap,
// secret and lease, by kind and name, with its resourceVersion and uid.
func snapshot(t *testing.T, srv *serverProc) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, path := range []string{"/api/v1/namespaces", "/api/v1/configmaps", "/api/v1/secrets", "/apis/coordination.k8s.io/v1/leases"} {
		for _, it := range items(t, srv.must(t, 200, "GET", path, nil)) {
			key := str(it, "kind") + " " + str(it, "metadata.namespace") + "/" + str(it, "metadata.name")
			out[key] = str(it, "metadata.resourceVersion") + " " + str(it, "metadata.uid")
		}
	}
	return out
}

// yamlAliasBomb is a "billion laughs" YAML document: nine levels of
// anchors each referring nine times to the previous, 9^9 strings if
// expanded, in well under a kilobyte.
func yamlAliasBomb() string {
	var b strings.Builder
	b.WriteString("metadata:\n  name: bomb\n")
	b.WriteString(`a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]` + "\n")
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		refs := strings.TrimSuffix(strings.Repeat("*"+prev+",", 9), ",")
		fmt.Fprintf(&b, "%s: &%s [%s]\n", n, n, refs)
		prev = n
	}
	return b.String()
}
