package registry

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/storage"
	"github.com/miniapi/miniapi/storage/etcd3"
	"github.com/miniapi/miniapi/storage/etcd3/etcd3test"
)

// testTypes are generic stand-ins for namespaces and ConfigMaps: the
// registry's own rules (metadata, finalizers, garbage collection,
// managedFields, scale) are tested on them; the built-in kinds' rules are
// kube's, tested in package builtin.
func testTypes() []Type {
	return []Type{
		{Version: "v1", Kind: "Namespace", Plural: "namespaces", NameValidation: NameLabel, Strategy: GenericStrategy{Status: true}},
		{Version: "v1", Kind: "ConfigMap", Plural: "configmaps", Namespaced: true, Strategy: GenericStrategy{},
			Schema: json.RawMessage(`{"type":"object","properties":{"apiVersion":{"type":"string"},"kind":{"type":"string"},"metadata":{"type":"object"},` +
				`"data":{"type":"object","additionalProperties":{"type":"string"}},"immutable":{"type":"boolean"}}}`)},
	}
}

// newEtcdRegistry serves the test types over a fresh embedded etcd.
func newEtcdRegistry(t testing.TB, cfg Config) *Registry {
	t.Helper()
	if testing.Short() {
		t.Skip("needs etcd")
	}
	client := etcd3test.Start(t)
	cfg.Storage = func(*Type, storage.ResourceKeys, storage.AttrFunc) (storage.Interface, func() error, error) {
		return etcd3.New(etcd3.Config{Client: client}), nil, nil
	}
	reg := New(cfg)
	for _, typ := range testTypes() {
		if err := reg.Add(typ); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { reg.Close() })
	return reg
}

func storeOf(t testing.TB, reg *Registry, plural string) *Store {
	t.Helper()
	res, ok := reg.Snapshot().Lookup("", "v1", plural)
	if !ok {
		t.Fatalf("%s not served", plural)
	}
	return res.Store
}

func mustCreate(t *testing.T, s *Store, ns, body string) *api.Object {
	t.Helper()
	var obj api.Object
	if err := json.Unmarshal([]byte(body), &obj); err != nil {
		t.Fatal(err)
	}
	out, err := s.CreateObject(context.Background(), ns, &obj, CreateOptions{})
	if err != nil {
		t.Fatalf("create %s: %v", body, err)
	}
	return mustDecode(t, out)
}

func mustDecode(t *testing.T, o *storage.Object) *api.Object {
	t.Helper()
	obj, err := decode(o.Data)
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// nextEvent returns the watch's next event within a deadline.
func nextEvent(t *testing.T, w storage.Watcher) storage.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch ended")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event within 10s")
	}
	panic("unreachable")
}

func TestDeleteWithFinalizersMarksThenRemoves(t *testing.T) {
	ctx := context.Background()
	reg := newEtcdRegistry(t, Config{})
	mustCreate(t, storeOf(t, reg, "namespaces"), "", `{"metadata":{"name":"ns1"}}`)
	cms := storeOf(t, reg, "configmaps")
	created := mustCreate(t, cms, "ns1", `{"metadata":{"name":"held","finalizers":["example.com/hold"]}}`)

	w, err := cms.Watch(ctx, "ns1", WatchOptions{ListOptions: ListOptions{ResourceVersion: created.Metadata.ResourceVersion}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	out, deleted, err := cms.Delete(ctx, "ns1", "held", DeleteOptions{})
	if err != nil || deleted {
		t.Fatalf("delete = %v, %v; want marked", deleted, err)
	}
	marked := mustDecode(t, out)
	if marked.Metadata.DeletionTimestamp == nil || marked.Metadata.DeletionGracePeriodSeconds == nil || *marked.Metadata.DeletionGracePeriodSeconds != 0 {
		t.Fatalf("not marked: %+v", marked.Metadata)
	}
	// kube's store bumps the generation when it first marks an object,
	// as controllers filtering on generation changes rely on.
	if marked.Metadata.Generation != created.Metadata.Generation+1 {
		t.Fatalf("generation %d after the mark, want %d", marked.Metadata.Generation, created.Metadata.Generation+1)
	}
	if ev := nextEvent(t, w); ev.Type != storage.Modified || mustDecode(t, ev.Object).Metadata.DeletionTimestamp == nil {
		t.Fatalf("first event %s, want MODIFIED with deletionTimestamp", ev.Type)
	}
	// Deleting again changes nothing, the generation included.
	again, deleted, err := cms.Delete(ctx, "ns1", "held", DeleteOptions{})
	if err != nil || deleted {
		t.Fatalf("second delete = %v, %v", deleted, err)
	}
	if g := mustDecode(t, again).Metadata.Generation; g != marked.Metadata.Generation {
		t.Fatalf("generation %d after a second delete, want %d", g, marked.Metadata.Generation)
	}

	// A dry run of the update that removes the last finalizer answers
	// as the update does, and deletes nothing.
	marked.Metadata.Finalizers = nil
	dry, err := cms.UpdateObject(ctx, "ns1", "held", marked, UpdateOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if f := mustDecode(t, dry).Metadata.Finalizers; len(f) != 0 {
		t.Fatalf("dry-run answer has finalizers %v", f)
	}
	if _, err := cms.Get(ctx, "ns1", "held", ""); err != nil {
		t.Fatalf("get after the dry run: %v", err)
	}
	// The update answers the object as updated, without the finalizer,
	// as kube's store does, though it deletes it.
	out, err = cms.UpdateObject(ctx, "ns1", "held", marked, UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := mustDecode(t, out).Metadata; len(got.Finalizers) != 0 || got.DeletionTimestamp == nil || got.ResourceVersion != marked.Metadata.ResourceVersion {
		t.Fatalf("answer to the update: finalizers %v, deletionTimestamp %v, resourceVersion %s (want %s)",
			got.Finalizers, got.DeletionTimestamp, got.ResourceVersion, marked.Metadata.ResourceVersion)
	}
	if ev := nextEvent(t, w); ev.Type != storage.Deleted {
		t.Fatalf("event %s after the last finalizer went, want DELETED", ev.Type)
	}
	if _, err := cms.Get(ctx, "ns1", "held", ""); !api.IsNotFound(err) {
		t.Fatalf("get after finalization: %v", err)
	}
}

func TestPropagationPolicyFinalizers(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		gcOff    bool
		policy   string
		existing []string
		want     []string // finalizers after the delete; nil: deleted
	}{
		{name: "background deletes at once", policy: api.DeletePropagationBackground},
		{name: "unset deletes at once", policy: ""},
		{name: "orphan", policy: api.DeletePropagationOrphan, want: []string{"orphan"}},
		{name: "foreground", policy: api.DeletePropagationForeground, want: []string{"foregroundDeletion"}},
		{name: "foreground keeps others", policy: api.DeletePropagationForeground, existing: []string{"example.com/a"}, want: []string{"example.com/a", "foregroundDeletion"}},
		{name: "foreground replaces orphan", policy: api.DeletePropagationForeground, existing: []string{"orphan"}, want: []string{"foregroundDeletion"}},
		{name: "background drops orphan", policy: api.DeletePropagationBackground, existing: []string{"orphan"}},
		{name: "unset keeps orphan", policy: "", existing: []string{"orphan"}, want: []string{"orphan"}},
		{name: "collector off: orphan deletes at once", gcOff: true, policy: api.DeletePropagationOrphan},
		{name: "collector off: foreground deletes at once", gcOff: true, policy: api.DeletePropagationForeground},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := newEtcdRegistry(t, Config{DisableGarbageCollection: tc.gcOff})
			mustCreate(t, storeOf(t, reg, "namespaces"), "", `{"metadata":{"name":"ns1"}}`)
			cms := storeOf(t, reg, "configmaps")
			fins, _ := json.Marshal(tc.existing)
			mustCreate(t, cms, "ns1", `{"metadata":{"name":"a","finalizers":`+string(fins)+`}}`)
			out, deleted, err := cms.Delete(ctx, "ns1", "a", DeleteOptions{PropagationPolicy: tc.policy})
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == nil {
				if !deleted {
					t.Fatalf("kept with finalizers %v", mustDecode(t, out).Metadata.Finalizers)
				}
				return
			}
			got := mustDecode(t, out).Metadata
			if deleted || got.DeletionTimestamp == nil || !slices.Equal(got.Finalizers, tc.want) {
				t.Fatalf("deleted %v, deletionTimestamp %v, finalizers %v; want marked with %v", deleted, got.DeletionTimestamp, got.Finalizers, tc.want)
			}
		})
	}
}
