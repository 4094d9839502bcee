package apiextensions_test

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// request sends body with contentType and returns the status code, the
// Status message (empty for an object) and the Warning headers.
func request(t *testing.T, method, url, contentType, body string) (int, string, []string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var st struct{ Kind, Message string }
	json.Unmarshal(data, &st)
	if st.Kind != "Status" {
		st.Message = ""
	}
	return resp.StatusCode, st.Message, resp.Header.Values("Warning")
}

// TestCustomResourceRulesAsKube sends the requests whose answers kube's
// strategy for custom resources and its decoder of them decide, and
// checks kube-apiserver 1.37's answers (taken from it for the same
// requests): another kind is 422 naming the object's own kind, a body
// without kind or apiVersion is 400 as the decoder words it, a JSON
// patch that removes one is 422 naming the patched object, updates must
// name a resourceVersion, and finalizer names get kube's warnings.
func TestCustomResourceRulesAsKube(t *testing.T) {
	srv, _ := start(t, "")
	base := srv.URL()
	createCRD(t, base, widgetCRD("v1"))
	widgets := base + "/apis/example.com/v1/namespaces/default/widgets"
	eventually(t, 5*time.Second, func() error { c, b := do(t, "GET", widgets, nil); return wantStatus(c, b, 200) })

	const (
		jsonType  = "application/json"
		mergeType = "application/merge-patch+json"
		patchType = "application/json-patch+json"
	)
	noKind := `{"apiVersion":"example.com/v1","metadata":{"name":"w"}}`
	for _, tc := range []struct {
		name, method, url, contentType, body string
		code                                 int
		message                              string
	}{
		{"create of another kind", "POST", widgets, jsonType, `{"apiVersion":"example.com/v1","kind":"Bogus","metadata":{"name":"w"}}`,
			422, `Bogus.example.com "w" is invalid: kind: Invalid value: "Bogus": must be Widget`},
		{"create of another version", "POST", widgets, jsonType, `{"apiVersion":"example.com/v2","kind":"Widget","metadata":{"name":"w"}}`,
			400, `the API version in the data (example.com/v2) does not match the expected API version (example.com/v1)`},
		{"create without kind", "POST", widgets, jsonType, noKind,
			400, `the object provided is unrecognized (must be of type Widget): Object 'Kind' is missing in '` + noKind + `' ({"apiVersion":"example.com/v1" ...)`},
		{"create without apiVersion", "POST", widgets, jsonType, `{"kind":"Widget","metadata":{"name":"w"}}`,
			400, `the API version in the data () does not match the expected API version (example.com/v1)`},
		{"create", "POST", widgets, jsonType, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"color":"red"}}`,
			201, ""},
		{"update without resourceVersion", "PUT", widgets + "/w", jsonType, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"color":"blue"}}`,
			422, `widgets.example.com "w" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`},
		{"merge patch to another kind", "PATCH", widgets + "/w", mergeType, `{"kind":"Bogus"}`,
			422, `Bogus.example.com "w" is invalid: kind: Invalid value: "Bogus": must be Widget`},
		{"merge patch to another version", "PATCH", widgets + "/w", mergeType, `{"apiVersion":"example.com/v2"}`,
			422, `Widget.example.com "w" is invalid: apiVersion: Invalid value: "example.com/v2": must be example.com/v1`},
	} {
		code, msg, _ := request(t, tc.method, tc.url, tc.contentType, tc.body)
		if code != tc.code || msg != tc.message {
			t.Errorf("%s: %d %q\nwant %d %q", tc.name, code, msg, tc.code, tc.message)
		}
	}

	// A JSON patch that removes kind: the decoder's error on the patched
	// object (kube-apiserver answers the same patch removing apiVersion
	// 500; miniapi answers it as this one).
	for _, tc := range []struct{ patch, missing string }{
		{`[{"op":"remove","path":"/kind"}]`, `Object 'Kind' is missing in '{"apiVersion":"example.com/v1","metadata":{`},
		{`[{"op":"remove","path":"/apiVersion"}]`, `Object 'apiVersion' is missing in 'object has no apiVersion field'`},
	} {
		code, msg, _ := request(t, "PATCH", widgets+"/w", patchType, tc.patch)
		if code != 422 || !strings.HasPrefix(msg, ` "" is invalid: patch: Invalid value: "{`) || !strings.Contains(msg, tc.missing) {
			t.Errorf("JSON patch %s: %d %q, want 422 with %q", tc.patch, code, msg, tc.missing)
		}
	}

	code, _, warnings := request(t, "PATCH", widgets+"/w", mergeType, `{"metadata":{"finalizers":["foo","a.b","example.com/ok"]}}`)
	want := []string{
		`299 - "metadata.finalizers: \"a.b\": prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers"`,
		`299 - "metadata.finalizers: \"foo\": prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers"`,
	}
	if code != 200 || !slices.Equal(warnings, want) {
		t.Errorf("finalizers: %d, warnings %q\nwant %q", code, warnings, want)
	}
}
