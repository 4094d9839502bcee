package handlers

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/net/websocket"
)

// TestWebSocketWatchOrigin upgrades a WebSocket watch as kube-apiserver
// does: refused (403) without an Origin or with one that is not a URL
// ("null": sandboxed and file:// pages), accepted from any other origin,
// which kube does not check either.
func TestWebSocketWatchOrigin(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	path := cms + "?watch=1"
	upgrade := func(origin string) int {
		req, err := http.NewRequest("GET", f.url+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Upgrade", "websocket")
		req.Header.Set("Sec-WebSocket-Version", "13")
		req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, origin := range []string{"", "null", "::bad"} {
		if code := upgrade(origin); code != http.StatusForbidden {
			t.Errorf("Origin %q: %d, want 403", origin, code)
		}
	}
	ws, err := websocket.Dial("ws"+strings.TrimPrefix(f.url, "http")+path, "", "http://elsewhere.example.com")
	if err != nil {
		t.Fatalf("a foreign origin, which kube-apiserver accepts: %v", err)
	}
	ws.Close()
}

// TestNoCORS answers a cross-origin request, and its preflight, without
// any Access-Control header, as kube-apiserver does when no
// --cors-allowed-origins are given (its default): a browser lets no
// other origin read an answer or send a non-simple request.
func TestNoCORS(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	for _, method := range []string{"GET", "OPTIONS"} {
		r := f.Do(method, cms, nil, "Origin", "http://elsewhere.example.com", "Access-Control-Request-Method", "POST")
		for name := range r.Header {
			if strings.HasPrefix(name, "Access-Control-") {
				t.Errorf("%s answered %s: %q", method, name, r.Header.Values(name))
			}
		}
		if method == "OPTIONS" && r.Code != http.StatusMethodNotAllowed {
			t.Errorf("preflight = %d, want kube's 405", r.Code)
		}
	}
}

// TestUnsupportedMediaType refuses a body a browser form or a text/plain
// fetch would send with kube-apiserver's 415 and words, and reads a body
// without a Content-Type as JSON, as kube does.
func TestUnsupportedMediaType(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	status := func(msg string, details bool) map[string]any {
		st := map[string]any{
			"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{}, "status": "Failure",
			"message": msg, "reason": "UnsupportedMediaType", "code": float64(415),
		}
		if details {
			st["details"] = map[string]any{}
		}
		return st
	}
	body := status("the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf", false)
	for _, tc := range []struct {
		method, path, ct string
		want             map[string]any
	}{
		{"POST", cms, "text/plain", body},
		{"POST", cms, "application/x-www-form-urlencoded", body},
		{"POST", cms, "multipart/form-data; boundary=x", body},
		{"POST", widgets, "text/plain;charset=UTF-8", body},
		{"PUT", cms + "/a", "text/plain", body},
		// kube's router answers an unknown patch type for a built-in
		// kind, its patch handler for other types.
		{"PATCH", cms + "/a", "text/plain", status("415: Unsupported Media Type", true)},
		{"PATCH", cms + "/a", "", status("415: Unsupported Media Type", true)},
		{"PATCH", widgets + "/w", "text/plain", status("the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml", false)},
		{"PATCH", widgets + "/w", "application/strategic-merge-patch+json", status("the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml", false)},
	} {
		r := f.Do(tc.method, tc.path, `{"metadata":{"name":"a"}}`, "Content-Type", tc.ct)
		if got := r.Obj(t); r.Code != 415 || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %s with %q = %d %s, want kube's %v", tc.method, tc.path, tc.ct, r.Code, r.Body, tc.want)
		}
	}
	// No Content-Type at all is JSON to kube-apiserver.
	req, err := http.NewRequest("POST", f.url+cms, strings.NewReader(`{"metadata":{"name":"untyped"}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Errorf("POST without Content-Type = %d, want 201 as kube-apiserver", resp.StatusCode)
	}
}
