package fieldmanager

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/miniapi/miniapi/api"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// FuzzApply merges any apply patch (YAML, as a request carries it) into
// a live object of a built-in kind (ConfigMap, Lease) or a custom type
// with a structural schema, as one of two managers, with or without
// force, and into nothing (a create). An error must carry a Status (a
// client's 4xx; anything else a handler answers 500); a merge must leave
// the applier owning fields, and applying the same patch again must
// change nothing but the entries' times.
func FuzzApply(f *testing.F) {
	type target struct {
		m    *Manager
		live *api.Object
	}
	var targets []target
	add := func(gvk schema.GroupVersionKind, tc TypeConverter, hasStatus bool, live string) {
		m, err := New(Config{Kind: gvk, TypeConverter: tc, HasStatus: hasStatus, CustomResource: gvk.Group == "example.com"})
		if err != nil {
			f.Fatal(err)
		}
		var o api.Object
		if err := json.Unmarshal([]byte(live), &o); err != nil {
			f.Fatal(err)
		}
		// The live object is owned by another manager, through an update.
		owned, err := m.Update(nil, &o, "owner", "")
		if err != nil {
			f.Fatal(err)
		}
		targets = append(targets, target{m, owned})
	}
	builtin := builtinForTest(f)
	add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, builtin, false,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fz","labels":{"a":"b"}},"data":{"k":"v"}}`)
	add(schema.GroupVersionKind{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"}, builtin, false,
		`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"fz","finalizers":["a/b"]},"spec":{"holderIdentity":"x"}}`)
	custom, err := ForSchema(schema.GroupKind{Group: "example.com", Kind: "Widget"}, map[string]json.RawMessage{"v1": json.RawMessage(
		`{"type":"object","properties":{"spec":{"type":"object","properties":{
		"items":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],"items":{"type":"object","required":["name"],"properties":{"name":{"type":"string"},"v":{"type":"string"}}}},
		"set":{"type":"array","x-kubernetes-list-type":"set","items":{"type":"string"}},
		"n":{"type":"integer"},
		"free":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}},
		"status":{"type":"object","properties":{"ready":{"type":"boolean"}}}}}`)})
	if err != nil {
		f.Fatal(err)
	}
	add(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, custom, true,
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"fz"},"spec":{"items":[{"name":"a","v":"1"}],"set":["x"],"n":1}}`)

	for _, seed := range []struct {
		target, mode uint8
		patch        string
	}{
		{0, 0, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fz\ndata:\n  k: w\n"},
		{0, 1, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fz, labels: {a: c}}\n"},
		{0, 2, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fz"},"data":{"k":1}}`},
		{1, 0, "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: fz, finalizers: [a/b, c/d]}\nspec: {leaseDurationSeconds: 10}\n"},
		{2, 0, "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: fz}\nspec:\n  items: [{name: a, v: '2'}, {name: b}]\n  set: [x, y]\n  free: {a: [1, {b: 2}]}\n"},
		{2, 1, "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: fz}\nspec:\n  items: [{name: a}, {name: a}]\n  set: [x, x]\n"},
		{2, 3, "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: fz}\nstatus: {ready: true}\n"},
		{2, 0, "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: fz}\nspec: {items: [{v: x}], n: 1.5}\n"},
	} {
		f.Add(seed.target, seed.mode, []byte(seed.patch))
	}
	f.Fuzz(func(t *testing.T, which, mode uint8, data []byte) {
		tg := targets[int(which)%len(targets)]
		var patch map[string]any
		if yaml.Unmarshal(data, &patch) != nil || patch == nil {
			return // refused before the merge (registry.decodeApplyPatch)
		}
		force := mode&1 == 1
		subresource := ""
		if mode&2 == 2 && tg.m.status != nil {
			subresource = SubresourceStatus
		}
		live := tg.live.DeepCopy()
		if mode&4 == 4 {
			live = nil
		}
		manager := "fuzz"
		out, err := tg.m.Apply(live, deepCopyMap(patch), manager, subresource, force)
		if err != nil {
			var se *api.StatusError
			if !errors.As(err, &se) {
				t.Fatalf("Apply(%s) = %v: an error without a Status (a 500)", data, err)
			}
			if c := se.ErrStatus.Code; c < 400 || c > 499 {
				t.Fatalf("Apply(%s) = %d %v", data, c, err)
			}
			return
		}
		if out == nil {
			t.Fatalf("Apply(%s) returned nothing", data)
		}
		again, err := tg.m.Apply(out.DeepCopy(), deepCopyMap(patch), manager, subresource, false)
		if err != nil {
			t.Fatalf("applying %s again to its result: %v", data, err)
		}
		if a, b := withoutTimes(t, out), withoutTimes(t, again); !reflect.DeepEqual(a, b) {
			t.Fatalf("applying %s again changed\n%s\nto\n%s", data, a, b)
		}
	})
}

// deepCopyMap copies a decoded patch, which Apply may modify.
func deepCopyMap(m map[string]any) map[string]any {
	b, _ := json.Marshal(m)
	var out map[string]any
	json.Unmarshal(b, &out)
	return out
}

// withoutTimes is obj's JSON with its managedFields times removed.
func withoutTimes(t *testing.T, obj *api.Object) string {
	t.Helper()
	o := obj.DeepCopy()
	for i := range o.Metadata.ManagedFields {
		o.Metadata.ManagedFields[i].Time = nil
	}
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
