package fieldmanager

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/miniapi/miniapi/api"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
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

// fieldsOf returns the fieldsV1 of manager's entry in obj, decoded.
func fieldsOf(t *testing.T, obj *api.Object, manager string) any {
	t.Helper()
	for _, e := range obj.Metadata.ManagedFields {
		if e.Manager == manager {
			var v any
			if err := json.Unmarshal(e.FieldsV1, &v); err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	t.Fatalf("no entry for %s in %+v", manager, obj.Metadata.ManagedFields)
	return nil
}

func wantFields(t *testing.T, obj *api.Object, manager, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if got := fieldsOf(t, obj, manager); !reflect.DeepEqual(got, w) {
		g, _ := json.Marshal(got)
		t.Errorf("%s owns %s, want %s", manager, g, want)
	}
}

func TestManagerName(t *testing.T) {
	tests := []struct{ fieldManager, userAgent, want string }{
		{"kubectl-create", "kubectl/v1.37.2 (linux/amd64) kubernetes/abc", "kubectl-create"},
		{"", "kubectl/v1.37.2 (linux/amd64) kubernetes/abc", "kubectl"},
		{"", "curl/8.5.0", "curl"},
		{"", "no-slash", "no-slash"},
		{"", "", ""},
		{"", "bad\x07agent/1", "badagent"},
		{"", strings.Repeat("é", 100) + "/1", strings.Repeat("é", 64)},
	}
	for _, tc := range tests {
		if got := ManagerName(tc.fieldManager, tc.userAgent); got != tc.want {
			t.Errorf("ManagerName(%q, %q) = %q, want %q", tc.fieldManager, tc.userAgent, got, tc.want)
		}
	}
}

func TestBuiltinSchemas(t *testing.T) {
	tc := builtinForTest(t)
	crd := schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
	m, err := New(Config{Kind: crd, TypeConverter: tc, HasStatus: true})
	if err != nil {
		t.Fatal(err)
	}
	// A CRD's versions list is atomic in Kubernetes' schema: kubectl
	// applying a CRD owns it whole.
	out, err := m.Apply(nil, mustMap(t, `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},
		"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"widgets","kind":"Widget"},
		"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}}]}}`), "kubectl", "", false)
	if err != nil {
		t.Fatal(err)
	}
	wantFields(t, out, "kubectl", `{"f:spec":{"f:group":{},"f:names":{"f:kind":{},"f:plural":{}},"f:scope":{},
		"f:versions":{}}}`)

	// A Lease's spec is granular; core types use their list types.
	lease := schema.GroupVersionKind{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"}
	m, err = New(Config{Kind: lease, TypeConverter: tc})
	if err != nil {
		t.Fatal(err)
	}
	out, err = m.Update(nil, mustObject(t, `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"l","ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"c","uid":"u1"}],"finalizers":["a/b"]},"spec":{"holderIdentity":"x"}}`), "ctrl", "")
	if err != nil {
		t.Fatal(err)
	}
	// The empty Lease a create is compared with has a spec, as the Go
	// type's zero value does in kube-apiserver: spec itself is not owned.
	wantFields(t, out, "ctrl", `{"f:metadata":{"f:finalizers":{".":{},"v:\"a/b\"":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"u1\"}":{}}},"f:spec":{"f:holderIdentity":{}}}`)
}

func TestCustomSchemas(t *testing.T) {
	gk := schema.GroupKind{Group: "example.com", Kind: "Widget"}
	v1 := json.RawMessage(`{"type":"object","properties":{"spec":{"type":"object","properties":{
		"items":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],"items":{"type":"object","properties":{"name":{"type":"string"},"v":{"type":"string"}}}},
		"plain":{"type":"array","items":{"type":"string"}},
		"free":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}}}`)
	tc, err := ForSchema(gk, map[string]json.RawMessage{"v1": v1, "v2": nil})
	if err != nil {
		t.Fatal(err)
	}
	m1, err := New(Config{Kind: gk.WithVersion("v1"), TypeConverter: tc, CustomResource: true})
	if err != nil {
		t.Fatal(err)
	}
	out, err := m1.Apply(nil, mustMap(t, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},
		"spec":{"items":[{"name":"a","v":"1"}],"plain":["x"],"free":{"deep":{"k":"v"},"list":[1]}}}`), "alice", "", false)
	if err != nil {
		t.Fatal(err)
	}
	// Map-lists are keyed, plain lists atomic, and fields the schema
	// leaves unknown merge as maps (granular) and lists (atomic).
	const applied = `{"f:spec":{"f:free":{"f:deep":{".":{},"f:k":{}},"f:list":{}},"f:items":{"k:{\"name\":\"a\"}":{".":{},"f:name":{},"f:v":{}}},"f:plain":{}}}`
	wantFields(t, out, "alice", applied)

	t.Run("an entry recorded through another version survives", func(t *testing.T) {
		m2, err := New(Config{Kind: gk.WithVersion("v2"), TypeConverter: tc, CustomResource: true})
		if err != nil {
			t.Fatal(err)
		}
		live := out.DeepCopy()
		live.APIVersion = "example.com/v2"
		next := live.DeepCopy()
		next.Fields["spec"] = json.RawMessage(`{"items":[{"name":"a","v":"1"}],"plain":["y"],"free":{"deep":{"k":"v"},"list":[1]}}`)
		got, err := m2.Update(live, next, "bob", "")
		if err != nil {
			t.Fatal(err)
		}
		// The update through v2 takes spec.plain from alice's v1 entry.
		wantFields(t, got, "alice", `{"f:spec":{"f:free":{"f:deep":{".":{},"f:k":{}},"f:list":{}},"f:items":{"k:{\"name\":\"a\"}":{".":{},"f:name":{},"f:v":{}}}}}`)
		wantFields(t, got, "bob", `{"f:spec":{"f:plain":{}}}`)
	})

	t.Run("a type without a schema merges maps granularly", func(t *testing.T) {
		tc, err := ForSchema(gk, map[string]json.RawMessage{"v1": nil})
		if err != nil {
			t.Fatal(err)
		}
		m, err := New(Config{Kind: gk.WithVersion("v1"), TypeConverter: tc, CustomResource: true})
		if err != nil {
			t.Fatal(err)
		}
		out, err := m.Apply(nil, mustMap(t, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","labels":{"a":"b"}},"spec":{"x":{"y":1},"l":[1,2]}}`), "alice", "", false)
		if err != nil {
			t.Fatal(err)
		}
		wantFields(t, out, "alice", `{"f:metadata":{"f:labels":{"f:a":{}}},"f:spec":{".":{},"f:l":{},"f:x":{".":{},"f:y":{}}}}`)
	})
}

// TestEntriesSerializeAsFieldSets checks the fieldsV1 read back from the
// field manager's unstructured result are byte for byte what
// structured-merge-diff writes for the same field set, as kube-apiserver
// stores them for built-in types: key order with fields, keys, set values
// and subresources.
func TestEntriesSerializeAsFieldSets(t *testing.T) {
	gk := schema.GroupKind{Group: "example.com", Kind: "Widget"}
	tc, err := ForSchema(gk, map[string]json.RawMessage{"v1": json.RawMessage(`{"type":"object","properties":{"spec":{"type":"object","properties":{
		"items":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name","port"],"items":{"type":"object","properties":{"name":{"type":"string"},"port":{"type":"integer"}}}},
		"tags":{"type":"array","x-kubernetes-list-type":"set","items":{"type":"string"}}}},
		"status":{"type":"object","properties":{"ok":{"type":"boolean"}}}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(Config{Kind: gk.WithVersion("v1"), TypeConverter: tc, HasStatus: true, CustomResource: true})
	if err != nil {
		t.Fatal(err)
	}
	obj, err := m.Update(nil, mustObject(t, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","labels":{"b":"1","a":"2"},"annotations":{"x/y":"z"}},
		"spec":{"items":[{"name":"z","port":2},{"name":"a","port":1}],"tags":["q","b"]}}`), "alice", "")
	if err != nil {
		t.Fatal(err)
	}
	next := obj.DeepCopy()
	next.Fields["status"] = json.RawMessage(`{"ok":true}`)
	if obj, err = m.Update(obj, next, "ctrl", SubresourceStatus); err != nil {
		t.Fatal(err)
	}
	if len(obj.Metadata.ManagedFields) != 2 {
		t.Fatalf("%d entries, want alice's and ctrl's", len(obj.Metadata.ManagedFields))
	}
	for _, e := range obj.Metadata.ManagedFields {
		var set fieldpath.Set
		if err := set.FromJSON(bytes.NewReader(e.FieldsV1)); err != nil {
			t.Fatal(err)
		}
		want, err := set.ToJSON()
		if err != nil {
			t.Fatal(err)
		}
		if string(e.FieldsV1) != string(want) {
			t.Errorf("%s: fieldsV1\n %s\nstructured-merge-diff writes\n %s", e.Manager, e.FieldsV1, want)
		}
	}
}
