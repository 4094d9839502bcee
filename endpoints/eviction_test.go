package endpoints

import (
	"testing"
)

// TestPodEviction: an eviction answers what kube-apiserver's does, a
// Status with code 201 (kube's create handler fills in the code the
// eviction leaves unset), and a pod not yet on a node goes at once; a
// dry run keeps it.
func TestPodEviction(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", `{"metadata":{"name":"ns"}}`)
	pods := "/api/v1/namespaces/ns/pods"
	f.Must(201, "POST", pods, `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`)
	evict := `{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"p"}}`
	dry := `{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"p"},"deleteOptions":{"dryRun":["All"]}}`
	for _, body := range []string{dry, evict} {
		st := f.Must(201, "POST", pods+"/p/eviction", body)
		if st["kind"] != "Status" || st["status"] != "Success" || st["code"] != float64(201) {
			t.Errorf("eviction answered %v", st)
		}
		if body == dry {
			f.Must(200, "GET", pods+"/p", nil)
		}
	}
	f.Status(f.Do("GET", pods+"/p", nil), 404, "NotFound")
}
