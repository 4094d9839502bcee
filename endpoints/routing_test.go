package endpoints

import (
	"fmt"
	"strings"
	"testing"
)

// TestRouting checks the router's own paths answer beside the
// resources.
func TestRouting(t *testing.T) {
	f := newFixture(t)
	if r := f.Do("GET", "/healthz", nil); r.Code != 200 || string(r.Body) != "ok" {
		t.Fatalf("healthz: %d %s", r.Code, r.Body)
	}
	v := f.Must(200, "GET", "/version", nil)
	if v["major"] != "1" || !strings.HasPrefix(v["gitVersion"].(string), "v1.") {
		t.Fatalf("version: %v", v)
	}
	rl := f.Must(200, "GET", "/api/v1", nil)
	if rl["kind"] != "APIResourceList" || rl["groupVersion"] != "v1" {
		t.Fatalf("discovery: %v", rl)
	}
	gl := f.Must(200, "GET", "/apis", nil)
	if !strings.Contains(fmt.Sprint(gl), "coordination.k8s.io") || !strings.Contains(fmt.Sprint(gl), "example.com") {
		t.Fatalf("group list: %v", gl)
	}
}
