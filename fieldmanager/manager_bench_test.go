package fieldmanager

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/miniapi/miniapi/api"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// benchConfigMap is a ~1 KiB ConfigMap, the object the create benchmark
// of test/bench writes.
func benchConfigMap(b *testing.B, value string) *api.Object {
	b.Helper()
	data := map[string]string{}
	for i := range 8 {
		data[fmt.Sprintf("key-%d", i)] = strings.Repeat(value, 100)
	}
	raw, err := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "bench", "namespace": "default", "labels": map[string]string{"app": "bench"}},
		"data":     data,
	})
	if err != nil {
		b.Fatal(err)
	}
	var obj api.Object
	if err := json.Unmarshal(raw, &obj); err != nil {
		b.Fatal(err)
	}
	return &obj
}

func benchManager(b *testing.B) *Manager {
	b.Helper()
	tc := builtinForTest(b)
	m, err := New(Config{Kind: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, TypeConverter: tc})
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkManagedFields measures what recording ownership adds to a
// write, against the baseline every write already pays: decoding the
// request body and encoding the object for storage.
func BenchmarkManagedFields(b *testing.B) {
	m := benchManager(b)
	obj := benchConfigMap(b, "a")
	created, err := m.Update(nil, obj, "bench", "")
	if err != nil {
		b.Fatal(err)
	}
	changed := benchConfigMap(b, "b")
	changed.Metadata.ManagedFields = created.Metadata.ManagedFields
	body, err := json.Marshal(obj)
	if err != nil {
		b.Fatal(err)
	}

	b.Run("baseline=decode+encode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var o api.Object
			if err := json.Unmarshal(body, &o); err != nil {
				b.Fatal(err)
			}
			if _, err := json.Marshal(&o); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("create", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := m.Update(nil, obj, "bench", ""); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("update", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := m.Update(created, changed, "bench", ""); err != nil {
				b.Fatal(err)
			}
		}
	})
	patch := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "bench", "namespace": "default"},
		"data": map[string]any{"key-0": "x"}}
	b.Run("apply", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := m.Apply(created, patch, "applier", "", true); err != nil {
				b.Fatal(err)
			}
		}
	})
}
