package endpoints

import (
	"reflect"
	"testing"
)

// TestInvalidTimeout answers a malformed ?timeout= with kube-apiserver's
// 400 on every path, discovery, /version, health and paths that do not
// exist included, and lets long-running requests (watches) ignore it as
// kube does.
func TestInvalidTimeout(t *testing.T) {
	f := newFixture(t)
	want := func(value string) map[string]any {
		return map[string]any{
			"apiVersion": "v1", "kind": "Status", "metadata": map[string]any{}, "status": "Failure",
			"message": `invalid timeout specified in the request URL - time: invalid duration "` + value + `"`,
			"reason":  "BadRequest", "code": float64(400),
		}
	}
	for _, p := range []string{
		"/version?timeout=bogus", "/api?timeout=x", "/apis/?timeout=x", "/apis/apps/v1?timeout=x",
		"/api/v1/namespaces?timeout=x", "/api/v1/namespaces/default?timeout=x", "/api/v1/nothings?timeout=x",
		"/healthz?timeout=x", "/livez?timeout=x", "/readyz?timeout=x", "/openapi/v2?timeout=x", "/openapi/v3?timeout=x",
		"/nothing?timeout=x",
	} {
		r := f.Do("GET", p, nil)
		if r.Code != 400 {
			t.Errorf("GET %s = %d, want 400: %.200s", p, r.Code, r.Body)
			continue
		}
		value := "x"
		if p == "/version?timeout=bogus" {
			value = "bogus"
		}
		if got := r.Obj(t); !reflect.DeepEqual(got, want(value)) {
			t.Errorf("GET %s answered\n %v\nwant kube's\n %v", p, got, want(value))
		}
	}
	// Watches are long-running: kube-apiserver does not read ?timeout=.
	if r := f.Do("GET", "/api/v1/namespaces?watch=1&timeoutSeconds=1&timeout=x", nil); r.Code != 200 {
		t.Errorf("watch with timeout=x = %d: %s", r.Code, r.Body)
	}
	// A timeout that is not positive leaves the server's own bound.
	for _, q := range []string{"?timeout=0", "?timeout=-1s", "?timeout="} {
		f.Must(200, "GET", "/api/v1/namespaces"+q, nil)
	}
}
