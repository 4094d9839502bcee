package handlers

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/miniapi/miniapi/internal/apitest"
	"github.com/miniapi/miniapi/registry"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// fixture is a real registry over a real embedded etcd behind the
// resource handler alone (no discovery, OpenAPI or health endpoints),
// served by httptest.
type fixture struct {
	*apitest.Client
	t      *testing.T
	url    string
	reg    *registry.Registry
	client *clientv3.Client
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	reg, client := apitest.Registry(t)
	h := New(Config{Registry: reg})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, ok := resourcePath(r.URL.Path)
		if !ok {
			http.NotFound(w, r)
			return
		}
		h.ServeResource(w, r, info)
	}))
	t.Cleanup(srv.Close)
	return &fixture{Client: &apitest.Client{T: t, URL: srv.URL}, t: t, url: srv.URL, reg: reg, client: client}
}

// The shared HTTP helpers, under the names these tests use.

var (
	fieldAt   = apitest.Field
	ns        = apitest.Namespace
	configMap = apitest.ConfigMap
)

// resourcePath is the router's split of a resource URL, for the
// handler alone: /api/v1/... and /apis/<group>/<version>/....
func resourcePath(path string) (RequestInfo, bool) {
	if rest, ok := strings.CutPrefix(path, "/api/v1/"); ok {
		return ParseResourcePath("", "v1", rest)
	}
	rest, ok := strings.CutPrefix(path, "/apis/")
	if !ok {
		return RequestInfo{}, false
	}
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) < 3 {
		return RequestInfo{}, false
	}
	return ParseResourcePath(parts[0], parts[1], parts[2])
}
