package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/miniapi/miniapi/api"
)

// entry is what a test expects of one managedFields entry; fields is
// the fieldsV1 JSON.
type entry struct {
	manager, operation, apiVersion, subresource, fields string
}

// wantEntries compares obj's managedFields with want, in order, fieldsV1
// as decoded JSON; every entry must carry a time and FieldsV1.
func wantEntries(t *testing.T, obj *api.Object, want ...entry) {
	t.Helper()
	got := obj.Metadata.ManagedFields
	if len(got) != len(want) {
		t.Fatalf("%d managedFields entries, want %d: %s", len(got), len(want), mustJSONString(t, got))
	}
	for i, w := range want {
		g := got[i]
		if g.Manager != w.manager || g.Operation != w.operation || g.APIVersion != w.apiVersion || g.Subresource != w.subresource {
			t.Errorf("entry %d = %s %s %s %q, want %s %s %s %q", i, g.Manager, g.Operation, g.APIVersion, g.Subresource,
				w.manager, w.operation, w.apiVersion, w.subresource)
		}
		if g.FieldsType != "FieldsV1" || g.Time == nil {
			t.Errorf("entry %d: fieldsType %q, time %v", i, g.FieldsType, g.Time)
		}
		var gf, wf any
		if err := json.Unmarshal(g.FieldsV1, &gf); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(w.fields), &wf); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(gf, wf) {
			t.Errorf("entry %d (%s) fieldsV1 = %s, want %s", i, g.Manager, g.FieldsV1, w.fields)
		}
	}
}

func mustJSONString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// apply applies patch to ns/name as manager and returns the stored
// object and whether the apply created it.
func apply(t *testing.T, s *Store, ns, name, manager, patch string, opts ApplyOptions) (*api.Object, bool, error) {
	t.Helper()
	opts.FieldManager = manager
	out, created, err := s.Apply(context.Background(), ns, name, []byte(patch), opts)
	if err != nil {
		return nil, false, err
	}
	return mustDecode(t, out), created, nil
}

func mustApply(t *testing.T, s *Store, ns, name, manager, patch string, opts ApplyOptions) (*api.Object, bool) {
	t.Helper()
	obj, created, err := apply(t, s, ns, name, manager, patch, opts)
	if err != nil {
		t.Fatalf("apply by %s: %v", manager, err)
	}
	return obj, created
}

func TestApplyConfigMap(t *testing.T) {
	reg := newEtcdRegistry(t, Config{})
	mustCreate(t, storeOf(t, reg, "namespaces"), "", `{"metadata":{"name":"ns1"}}`)
	cms := storeOf(t, reg, "configmaps")
	const first = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  labels:\n    app: web\ndata:\n  a: \"1\"\n  b: \"2\"\n"

	obj, created := mustApply(t, cms, "ns1", "cm", "alice", first, ApplyOptions{})
	if !created {
		t.Error("first apply did not report a create")
	}
	wantEntries(t, obj, entry{"alice", "Apply", "v1", "", `{"f:data":{"f:a":{},"f:b":{}},"f:metadata":{"f:labels":{"f:app":{}}}}`})
	rv := obj.Metadata.ResourceVersion

	t.Run("an apply that changes nothing writes nothing", func(t *testing.T) {
		again, created := mustApply(t, cms, "ns1", "cm", "alice", first, ApplyOptions{})
		if created || again.Metadata.ResourceVersion != rv {
			t.Errorf("created %v, resourceVersion %s -> %s", created, rv, again.Metadata.ResourceVersion)
		}
	})

	t.Run("an update by another manager is recorded beside", func(t *testing.T) {
		cur := obj.DeepCopy()
		cur.Fields["data"] = json.RawMessage(`{"a":"1","b":"2","c":"3"}`)
		out, err := cms.UpdateObject(context.Background(), "ns1", "cm", cur, UpdateOptions{FieldManager: "bob"})
		if err != nil {
			t.Fatal(err)
		}
		wantEntries(t, mustDecode(t, out),
			entry{"alice", "Apply", "v1", "", `{"f:data":{"f:a":{},"f:b":{}},"f:metadata":{"f:labels":{"f:app":{}}}}`},
			entry{"bob", "Update", "v1", "", `{"f:data":{"f:c":{}}}`})
	})

	t.Run("a conflicting apply is refused with one cause per field", func(t *testing.T) {
		_, _, err := apply(t, cms, "ns1", "cm", "carol", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: x\n  c: yy\n", ApplyOptions{})
		wantStatus(t, err, 409, `Apply failed with 2 conflicts: conflicts with "alice":`)
		se := err.(*api.StatusError)
		want := []api.StatusCause{
			{Type: "FieldManagerConflict", Message: `conflict with "alice"`, Field: ".data.a"},
			{Type: "FieldManagerConflict", Message: `conflict with "bob" using v1`, Field: ".data.c"},
		}
		// kube-apiserver lists causes in the merge's (map) order.
		got := slices.SortedFunc(slices.Values(se.ErrStatus.Details.Causes), func(a, b api.StatusCause) int { return strings.Compare(a.Field, b.Field) })
		if se.ErrStatus.Reason != api.ReasonConflict || !reflect.DeepEqual(got, want) {
			t.Errorf("status %s, want causes %+v", mustJSONString(t, se.ErrStatus), want)
		}
		if se.ErrStatus.Message != "Apply failed with 2 conflicts: conflicts with \"alice\":\n- .data.a\nconflicts with \"bob\" using v1:\n- .data.c" {
			t.Errorf("message %q", se.ErrStatus.Message)
		}
	})

	t.Run("force takes ownership", func(t *testing.T) {
		obj, _ := mustApply(t, cms, "ns1", "cm", "carol", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: x\n", ApplyOptions{Force: true})
		if got := string(obj.Fields["data"]); got != `{"a":"x","b":"2","c":"3"}` {
			t.Errorf("data %s", got)
		}
		wantEntries(t, obj,
			entry{"alice", "Apply", "v1", "", `{"f:data":{"f:b":{}},"f:metadata":{"f:labels":{"f:app":{}}}}`},
			entry{"carol", "Apply", "v1", "", `{"f:data":{"f:a":{}}}`},
			entry{"bob", "Update", "v1", "", `{"f:data":{"f:c":{}}}`})
	})

	t.Run("fields a manager stops applying are removed unless someone else owns them", func(t *testing.T) {
		obj, _ := mustApply(t, cms, "ns1", "cm", "alice", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n", ApplyOptions{})
		if got := string(obj.Fields["data"]); got != `{"a":"x","c":"3"}` {
			t.Errorf("data %s, want b removed and a, c kept", got)
		}
		if len(obj.Metadata.Labels) != 0 {
			t.Errorf("labels %v, want none", obj.Metadata.Labels)
		}
	})

	t.Run("dry run writes nothing", func(t *testing.T) {
		before, err := cms.Get(context.Background(), "ns1", "cm", "")
		if err != nil {
			t.Fatal(err)
		}
		obj, _ := mustApply(t, cms, "ns1", "cm", "dave", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  d: \"4\"\n", ApplyOptions{DryRun: true})
		if got := string(obj.Fields["data"]); got != `{"a":"x","c":"3","d":"4"}` {
			t.Errorf("dry-run answer data %s", got)
		}
		after, err := cms.Get(context.Background(), "ns1", "cm", "")
		if err != nil {
			t.Fatal(err)
		}
		if after.Revision != before.Revision {
			t.Errorf("dry run wrote: revision %d -> %d", before.Revision, after.Revision)
		}
		if _, created := mustApply(t, cms, "ns1", "new", "dave", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: new\n", ApplyOptions{DryRun: true}); !created {
			t.Error("dry-run create not reported as a create")
		}
		if _, err := cms.Get(context.Background(), "ns1", "new", ""); !api.IsNotFound(err) {
			t.Errorf("dry-run create stored the object: %v", err)
		}
	})
}

func TestManagedFieldsOnWrites(t *testing.T) {
	reg := newEtcdRegistry(t, Config{})
	mustCreate(t, storeOf(t, reg, "namespaces"), "", `{"metadata":{"name":"ns1"}}`)
	cms := storeOf(t, reg, "configmaps")
	ctx := context.Background()
	var obj api.Object
	if err := json.Unmarshal([]byte(`{"metadata":{"name":"cm","labels":{"a":"b"}},"data":{"k":"v"}}`), &obj); err != nil {
		t.Fatal(err)
	}
	out, err := cms.CreateObject(ctx, "ns1", &obj, CreateOptions{FieldManager: "kubectl-create"})
	if err != nil {
		t.Fatal(err)
	}
	created := mustDecode(t, out)
	wantEntries(t, created, entry{"kubectl-create", "Update", "v1", "", `{"f:data":{".":{},"f:k":{}},"f:metadata":{"f:labels":{".":{},"f:a":{}}}}`})

	t.Run("a patch by the same manager and operation merges into its entry", func(t *testing.T) {
		out, err := cms.Patch(ctx, "ns1", "cm", PatchMerge, []byte(`{"data":{"j":"w"}}`), UpdateOptions{FieldManager: "kubectl-create"})
		if err != nil {
			t.Fatal(err)
		}
		wantEntries(t, mustDecode(t, out), entry{"kubectl-create", "Update", "v1", "", `{"f:data":{".":{},"f:j":{},"f:k":{}},"f:metadata":{"f:labels":{".":{},"f:a":{}}}}`})
	})

	t.Run("clients may reset managedFields with an empty list", func(t *testing.T) {
		out, err := cms.Patch(ctx, "ns1", "cm", PatchMerge, []byte(`{"metadata":{"managedFields":[{}]}}`), UpdateOptions{FieldManager: "reset"})
		if err != nil {
			t.Fatal(err)
		}
		if got := mustDecode(t, out).Metadata.ManagedFields; len(got) != 0 {
			t.Errorf("managedFields after reset: %s", mustJSONString(t, got))
		}
	})

	t.Run("after a reset, updates are not tracked until an apply", func(t *testing.T) {
		out, err := cms.Patch(ctx, "ns1", "cm", PatchMerge, []byte(`{"data":{"z":"1"}}`), UpdateOptions{FieldManager: "later"})
		if err != nil {
			t.Fatal(err)
		}
		if got := mustDecode(t, out).Metadata.ManagedFields; len(got) != 0 {
			t.Errorf("managedFields: %s", mustJSONString(t, got))
		}
	})

	t.Run("update managers are capped, the oldest merged", func(t *testing.T) {
		mustCreate(t, cms, "ns1", `{"metadata":{"name":"cap"},"data":{"k":"v"}}`)
		for i := range 12 {
			patch := fmt.Sprintf(`{"data":{"m%d":"x"}}`, i)
			if _, err := cms.Patch(ctx, "ns1", "cap", PatchMerge, []byte(patch), UpdateOptions{FieldManager: fmt.Sprintf("m%d", i)}); err != nil {
				t.Fatal(err)
			}
		}
		cur, err := cms.Get(ctx, "ns1", "cap", "")
		if err != nil {
			t.Fatal(err)
		}
		entries := mustDecode(t, cur).Metadata.ManagedFields
		if len(entries) != 10 {
			t.Fatalf("%d entries, want kube-apiserver's cap of 10: %s", len(entries), mustJSONString(t, entries))
		}
		found := false
		for _, e := range entries {
			found = found || e.Manager == "ancient-changes"
		}
		if !found {
			t.Errorf("no ancient-changes entry: %s", mustJSONString(t, entries))
		}
	})
}

// listWidgets is a custom type whose schema makes spec.ports a map-list
// keyed by name and spec.tags a set.
var listWidgets = Type{
	Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets", Namespaced: true,
	Strategy: GenericStrategy{Status: true},
	Schema: json.RawMessage(`{"type":"object","properties":{
		"spec":{"type":"object","properties":{
			"ports":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],
				"items":{"type":"object","required":["name"],"properties":{"name":{"type":"string"},"port":{"type":"integer"}}}},
			"tags":{"type":"array","x-kubernetes-list-type":"set","items":{"type":"string"}},
			"atomic":{"type":"object","x-kubernetes-map-type":"atomic","additionalProperties":{"type":"string"}},
			"replicas":{"type":"integer"}}},
		"status":{"type":"object","properties":{"ready":{"type":"boolean"},"replicas":{"type":"integer"}}}}}`),
	Scale: &ScaleSubresource{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas"},
}

func TestApplyCustomResource(t *testing.T) {
	reg := newEtcdRegistry(t, Config{})
	if err := reg.Add(listWidgets); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, storeOf(t, reg, "namespaces"), "", `{"metadata":{"name":"ns1"}}`)
	res, _ := reg.Snapshot().Lookup("example.com", "v1", "widgets")
	w := res.Store
	ctx := context.Background()

	obj, _ := mustApply(t, w, "ns1", "w", "alice", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},
		"spec":{"replicas":1,"ports":[{"name":"http","port":80}],"tags":["a"],"atomic":{"x":"1"}},"status":{"ready":true}}`, ApplyOptions{})
	if _, ok := obj.Fields["status"]; ok {
		t.Errorf("apply to the main resource set status: %s", obj.Fields["status"])
	}
	wantEntries(t, obj, entry{"alice", "Apply", "example.com/v1", "", `{"f:spec":{"f:atomic":{},"f:ports":{"k:{\"name\":\"http\"}":{".":{},"f:name":{},"f:port":{}}},"f:replicas":{},"f:tags":{"v:\"a\"":{}}}}`})

	t.Run("list items are owned one by one", func(t *testing.T) {
		obj, _ := mustApply(t, w, "ns1", "w", "bob", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},
			"spec":{"ports":[{"name":"https","port":443}],"tags":["b"]}}`, ApplyOptions{})
		if got := string(obj.Fields["spec"]); got != `{"atomic":{"x":"1"},"ports":[{"name":"http","port":80},{"name":"https","port":443}],"replicas":1,"tags":["a","b"]}` {
			t.Errorf("spec %s", got)
		}
		_, _, err := apply(t, w, "ns1", "w", "bob", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"atomic":{"y":"2"}}}`, ApplyOptions{})
		wantStatus(t, err, 409, `conflict with "alice": .spec.atomic`)
	})

	t.Run("status is owned through /status only", func(t *testing.T) {
		obj, _ := mustApply(t, w, "ns1", "w", "ctrl", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","labels":{"ignored":"x"}},"spec":{"replicas":9},"status":{"ready":true}}`,
			ApplyOptions{Subresource: SubresourceStatus})
		if string(obj.Fields["status"]) != `{"ready":true}` || len(obj.Metadata.Labels) != 0 {
			t.Errorf("status %s, labels %v", obj.Fields["status"], obj.Metadata.Labels)
		}
		last := obj.Metadata.ManagedFields[len(obj.Metadata.ManagedFields)-1]
		if last.Manager != "ctrl" || last.Subresource != "status" || string(last.FieldsV1) != `{"f:status":{"f:ready":{}}}` {
			t.Errorf("status entry %s", mustJSONString(t, last))
		}
		if _, _, err := apply(t, w, "ns1", "missing", "ctrl", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"missing"}}`,
			ApplyOptions{Subresource: SubresourceStatus}); !api.IsNotFound(err) {
			t.Errorf("status apply to a missing object: %v, want 404", err)
		}
	})

	t.Run("scale writes own spec replicas with subresource scale", func(t *testing.T) {
		if _, err := w.UpdateScale(ctx, "ns1", "w", &Scale{APIVersion: ScaleAPIVersion, Kind: ScaleKind, Metadata: api.ObjectMeta{Name: "w"}, Spec: ScaleSpec{Replicas: 3}},
			UpdateOptions{FieldManager: "hpa"}); err != nil {
			t.Fatal(err)
		}
		cur, err := w.Get(ctx, "ns1", "w", "")
		if err != nil {
			t.Fatal(err)
		}
		obj := mustDecode(t, cur)
		var hpa *api.ManagedFieldsEntry
		for i, e := range obj.Metadata.ManagedFields {
			if e.Manager == "alice" && string(e.FieldsV1) != `{"f:spec":{"f:atomic":{},"f:ports":{"k:{\"name\":\"http\"}":{".":{},"f:name":{},"f:port":{}}},"f:tags":{"v:\"a\"":{}}}}` {
				t.Errorf("alice still owns replicas after /scale took them: %s", e.FieldsV1)
			}
			if e.Manager == "hpa" {
				hpa = &obj.Metadata.ManagedFields[i]
			}
		}
		if hpa == nil || hpa.Operation != "Update" || hpa.Subresource != "scale" || hpa.APIVersion != "example.com/v1" || string(hpa.FieldsV1) != `{"f:spec":{"f:replicas":{}}}` {
			t.Fatalf("scale entry %s", mustJSONString(t, obj.Metadata.ManagedFields))
		}
		// An apply to /scale conflicts with the updater, and force wins.
		_, err = w.ApplyScale(ctx, "ns1", "w", []byte(`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"w"},"spec":{"replicas":5}}`), ApplyOptions{FieldManager: "ops"})
		wantStatus(t, err, 409, `conflict with "hpa" with subresource "scale" using autoscaling/v1: .spec.replicas`)
		sc, err := w.ApplyScale(ctx, "ns1", "w", []byte(`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"w"},"spec":{"replicas":5}}`), ApplyOptions{FieldManager: "ops", Force: true})
		if err != nil {
			t.Fatal(err)
		}
		if sc.Spec.Replicas != 5 {
			t.Errorf("replicas %d", sc.Spec.Replicas)
		}
	})
}
