package fieldmanager

import (
	"encoding/json"
	"testing"

	"github.com/miniapi/miniapi/api"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func mustObject(t *testing.T, s string) *api.Object {
	t.Helper()
	var o api.Object
	if err := json.Unmarshal([]byte(s), &o); err != nil {
		t.Fatal(err)
	}
	return &o
}

func mustMap(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSmoke(t *testing.T) {
	tc, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(Config{Kind: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, TypeConverter: tc})
	if err != nil {
		t.Fatal(err)
	}
	obj := mustObject(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default","labels":{"x":"y"}},"data":{"k":"v"}}`)
	out, err := m.Update(nil, obj, "curl", "")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(out)
	t.Logf("%s", b)
	ap, err := m.Apply(out, mustMap(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default"},"data":{"k":"w","j":"1"}}`), "kubectl", "", false)
	t.Logf("%v", err)
	if se, ok := err.(*api.StatusError); ok {
		b, _ := json.Marshal(se.ErrStatus)
		t.Logf("%s", b)
	}
	ap, err = m.Apply(out, mustMap(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default"},"data":{"k":"w","j":"1"}}`), "kubectl", "", true)
	b, _ = json.Marshal(ap)
	t.Logf("%s %v", b, err)
}
