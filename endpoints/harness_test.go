package endpoints

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/miniapi/miniapi/builtin"
	"github.com/miniapi/miniapi/registry"
	"github.com/miniapi/miniapi/storage"
	"github.com/miniapi/miniapi/storage/etcd3"
	"github.com/miniapi/miniapi/storage/etcd3/etcd3test"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// cms is the ConfigMap collection of namespace ns1.
const cms = "/api/v1/namespaces/ns1/configmaps"

// widgetType is a resources-file style type with a status subresource and
// a selectable field, served beside the built-ins in these tests.
var widgetType = registry.Type{
	Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets",
	Namespaced: true, ShortNames: []string{"wd"}, SelectableFields: []string{"spec.color"},
	Strategy: registry.GenericStrategy{Status: true},
}

// fixture is a real registry over a real embedded etcd behind the real
// handler, served by httptest.
type fixture struct {
	t      *testing.T
	url    string
	reg    *registry.Registry
	client *clientv3.Client
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	client := etcd3test.Start(t)
	reg := registry.New(registry.Config{Storage: func(*registry.Type, storage.ResourceKeys, storage.AttrFunc) (storage.Interface, func() error, error) {
		return etcd3.New(etcd3.Config{Client: client}), nil, nil
	}})
	for _, typ := range append(builtin.Types(builtin.Config{}), widgetType) {
		if err := reg.Add(typ); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(New(Config{Registry: reg, OpenAPI: &builtin.OpenAPI{}}))
	t.Cleanup(func() {
		srv.Close()
		reg.Close()
	})
	return &fixture{t: t, url: srv.URL, reg: reg, client: client}
}

// response is a decoded HTTP answer.
type response struct {
	code   int
	header http.Header
	body   []byte
}

// obj decodes the body as a JSON object.
func (r response) obj(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, r.body)
	}
	return m
}

// do sends a request; body may be nil, a string or []byte (sent as is) or
// any other value (sent as JSON). headers are name, value pairs.
func (f *fixture) do(method, path string, body any, headers ...string) response {
	f.t.Helper()
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
			f.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, f.url+path, rd)
	if err != nil {
		f.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	return response{code: resp.StatusCode, header: resp.Header, body: data}
}

// must sends a request and fails the test unless the code matches.
func (f *fixture) must(code int, method, path string, body any, headers ...string) map[string]any {
	f.t.Helper()
	r := f.do(method, path, body, headers...)
	if r.code != code {
		f.t.Fatalf("%s %s = %d, want %d: %s", method, path, r.code, code, r.body)
	}
	if len(r.body) == 0 {
		return nil
	}
	return r.obj(f.t)
}

// status checks a failure answer is a Status with the code and reason.
func (f *fixture) status(r response, code int, reason string) map[string]any {
	f.t.Helper()
	if r.code != code {
		f.t.Fatalf("code = %d, want %d: %s", r.code, code, r.body)
	}
	st := r.obj(f.t)
	if st["kind"] != "Status" || st["apiVersion"] != "v1" || st["status"] != "Failure" {
		f.t.Fatalf("not a failure Status: %s", r.body)
	}
	if st["reason"] != reason || int(st["code"].(float64)) != code {
		f.t.Fatalf("reason/code = %v/%v, want %s/%d: %s", st["reason"], st["code"], reason, code, r.body)
	}
	if msg, _ := st["message"].(string); msg == "" {
		f.t.Fatalf("Status has no message: %s", r.body)
	}
	return st
}

// field reads a dotted path from a decoded object.
func field(m map[string]any, path string) any {
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

func ns(name string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}
}
