// Package apitest holds what the endpoints and handlers tests share to
// talk to a server under test over HTTP: a client whose failures fail
// the test, Status checks, and the objects and types the tests serve.
// It is for tests only.
package apitest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapi/miniapi/builtin"
	"github.com/miniapi/miniapi/registry"
	"github.com/miniapi/miniapi/storage"
	"github.com/miniapi/miniapi/storage/cacher"
	"github.com/miniapi/miniapi/storage/etcd3"
	"github.com/miniapi/miniapi/storage/etcd3/etcd3test"
)

// WidgetType is a resources-file style type with a status subresource
// and a selectable field, served beside the built-ins in tests.
var WidgetType = registry.Type{
	Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets",
	Namespaced: true, ShortNames: []string{"wd"}, SelectableFields: []string{"spec.color"},
	Strategy: registry.GenericStrategy{Status: true},
}

// Response is a decoded HTTP answer.
type Response struct {
	Code   int
	Header http.Header
	Body   []byte
}

// Obj decodes the body as a JSON object.
func (r Response) Obj(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, r.Body)
	}
	return m
}

// Client sends requests to the server at URL on behalf of test T.
type Client struct {
	T   testing.TB
	URL string
}

// Do sends a request; body may be nil, a string or []byte (sent as is)
// or any other value (sent as JSON). headers are name, value pairs.
func (c *Client) Do(method, path string, body any, headers ...string) Response {
	c.T.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			c.T.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, c.URL+path, rd)
	if err != nil {
		c.T.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.T.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		c.T.Fatal(err)
	}
	return Response{Code: resp.StatusCode, Header: resp.Header, Body: data}
}

// Must sends a request and fails the test unless the code matches; it
// returns the body decoded, or nil when there is none.
func (c *Client) Must(code int, method, path string, body any, headers ...string) map[string]any {
	c.T.Helper()
	r := c.Do(method, path, body, headers...)
	if r.Code != code {
		c.T.Fatalf("%s %s = %d, want %d: %s", method, path, r.Code, code, r.Body)
	}
	if len(r.Body) == 0 {
		return nil
	}
	return r.Obj(c.T)
}

// Status checks a failure answer is a Status with the code and reason,
// and a message.
func (c *Client) Status(r Response, code int, reason string) map[string]any {
	c.T.Helper()
	if r.Code != code {
		c.T.Fatalf("code = %d, want %d: %s", r.Code, code, r.Body)
	}
	st := r.Obj(c.T)
	if st["kind"] != "Status" || st["apiVersion"] != "v1" || st["status"] != "Failure" {
		c.T.Fatalf("not a failure Status: %s", r.Body)
	}
	if st["reason"] != reason || int(st["code"].(float64)) != code {
		c.T.Fatalf("reason/code = %v/%v, want %s/%d: %s", st["reason"], st["code"], reason, code, r.Body)
	}
	if msg, _ := st["message"].(string); msg == "" {
		c.T.Fatalf("Status has no message: %s", r.Body)
	}
	return st
}

// Field reads a dotted path from a decoded object.
func Field(m map[string]any, path string) any {
	var cur any = m
	for _, p := range strings.Split(path, ".") {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[p]
	}
	return cur
}

// Namespace is a Namespace named name.
func Namespace(name string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}
}

// ConfigMap is a ConfigMap with labels (nil for none) and data.
func ConfigMap(name string, labels map[string]string, data map[string]string) map[string]any {
	meta := map[string]any{"name": name}
	if labels != nil {
		meta["labels"] = labels
	}
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}
}

// Registry returns a registry serving every built-in kind and
// WidgetType over a fresh embedded etcd (without caches: reads go to
// etcd), closed when the test ends, and the etcd client.
func Registry(t testing.TB) (*registry.Registry, *clientv3.Client) {
	t.Helper()
	client := etcd3test.Start(t)
	return newRegistry(t, func(t *registry.Type, _ storage.ResourceKeys, _ storage.AttrFunc) (storage.Interface, func() error, error) {
		return etcd3.New(etcd3.Config{Client: client, Resource: groupResource(t)}), nil, nil
	}), client
}

// CachedRegistry is Registry with each type's store behind its own
// cacher, as the server wires them, so lists and watches come from
// memory and the watch cache's metrics are recorded.
func CachedRegistry(t testing.TB) (*registry.Registry, *clientv3.Client) {
	t.Helper()
	client := etcd3test.Start(t)
	return newRegistry(t, func(t *registry.Type, keys storage.ResourceKeys, attrs storage.AttrFunc) (storage.Interface, func() error, error) {
		gr := groupResource(t)
		c, err := cacher.New(etcd3.New(etcd3.Config{Client: client, Resource: gr}),
			cacher.Config{Resource: gr, Prefix: keys.Prefix(), Attrs: attrs})
		if err != nil {
			return nil, nil, err
		}
		return c, c.Close, nil
	}), client
}

func groupResource(t *registry.Type) schema.GroupResource {
	return schema.GroupResource{Group: t.Group, Resource: t.Plural}
}

// newRegistry adds the built-in kinds and WidgetType to a registry over
// storage, closed when the test ends.
func newRegistry(t testing.TB, storage registry.StorageFactory) *registry.Registry {
	t.Helper()
	reg := registry.New(registry.Config{Storage: storage})
	for _, typ := range append(builtin.Types(builtin.Config{}), WidgetType) {
		if err := reg.Add(typ); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { reg.Close() })
	return reg
}
