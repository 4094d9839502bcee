package endpoints

import (
	"net/http/httptest"
	"testing"

	"github.com/miniapi/miniapi/builtin"
	"github.com/miniapi/miniapi/internal/apitest"
	"github.com/miniapi/miniapi/registry"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// cms is the ConfigMap collection of namespace ns1.
const cms = "/api/v1/namespaces/ns1/configmaps"

// fixture is a real registry over a real embedded etcd behind the real
// handler, served by httptest.
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
	srv := httptest.NewServer(New(Config{Registry: reg, OpenAPI: &builtin.OpenAPI{}}))
	t.Cleanup(srv.Close)
	return &fixture{Client: &apitest.Client{T: t, URL: srv.URL}, t: t, url: srv.URL, reg: reg, client: client}
}

// The shared HTTP helpers, under the names these tests use.
type response = apitest.Response

var (
	field = apitest.Field
	ns    = apitest.Namespace
)
