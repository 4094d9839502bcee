package controllers

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
)

func TestGarbageCollectorBackground(t *testing.T) {
	f := newFixture(t)
	ns := f.namespace("app")
	owner := f.create(f.configMaps(), ns, "owner", nil)
	other := f.create(f.configMaps(), ns, "other-owner", nil)
	f.create(f.configMaps(), ns, "dep", map[string]any{"ownerReferences": []any{ownerRef(owner, false)}})
	f.create(f.widgets(), ns, "dep-widget", map[string]any{"ownerReferences": []any{ownerRef(owner, true)}})
	f.create(f.configMaps(), ns, "two-owners", map[string]any{"ownerReferences": []any{ownerRef(owner, false), ownerRef(other, false)}})
	// An owner that never existed with this uid.
	ghost := ownerRef(owner, false)
	ghost["name"], ghost["uid"] = "ghost", "00000000-0000-0000-0000-000000000000"
	f.create(f.configMaps(), ns, "orphaned-at-birth", map[string]any{"ownerReferences": []any{ghost}})
	f.waitGone(f.configMaps(), ns, "orphaned-at-birth")

	if got := f.delete(f.configMaps(), ns, "owner", ""); got.Metadata.DeletionTimestamp != nil {
		t.Fatal("a background delete kept the owner")
	}
	f.waitGone(f.configMaps(), ns, "dep")
	f.waitGone(f.widgets(), ns, "dep-widget")
	// An object with another owner stays, without the dangling reference.
	f.waitFor("the dangling reference to be dropped", func() bool {
		o := f.get(f.configMaps(), ns, "two-owners")
		return o != nil && len(o.Metadata.OwnerReferences) == 1 && o.Metadata.OwnerReferences[0].UID == other.Metadata.UID
	})
}

func TestGarbageCollectorForeground(t *testing.T) {
	f := newFixture(t)
	ns := f.namespace("app")
	owner := f.create(f.configMaps(), ns, "owner", nil)
	// The blocking dependent is held by a finalizer, so the owner's wait
	// can be seen.
	f.create(f.configMaps(), ns, "blocking", map[string]any{
		"ownerReferences": []any{ownerRef(owner, true)},
		"finalizers":      []string{"example.com/hold"},
	})
	f.create(f.widgets(), ns, "plain", map[string]any{"ownerReferences": []any{ownerRef(owner, false)}})

	marked := f.delete(f.configMaps(), ns, "owner", api.DeletePropagationForeground)
	if marked.Metadata.DeletionTimestamp == nil || !slices.Equal(marked.Metadata.Finalizers, []string{"foregroundDeletion"}) {
		t.Fatalf("owner after a foreground delete: %+v", marked.Metadata)
	}
	f.waitGone(f.widgets(), ns, "plain")
	f.waitFor("the blocking dependent to be marked", func() bool {
		d := f.get(f.configMaps(), ns, "blocking")
		return d != nil && d.Metadata.DeletionTimestamp != nil
	})
	if o := f.get(f.configMaps(), ns, "owner"); o == nil || !slices.Contains(o.Metadata.Finalizers, "foregroundDeletion") {
		t.Fatalf("owner went while a blocking dependent remains: %v", o)
	}
	f.dropFinalizers(f.configMaps(), ns, "blocking")
	f.waitGone(f.configMaps(), ns, "blocking")
	f.waitGone(f.configMaps(), ns, "owner")
}

func TestGarbageCollectorForegroundChain(t *testing.T) {
	f := newFixture(t)
	ns := f.namespace("app")
	top := f.create(f.configMaps(), ns, "top", nil)
	mid := f.create(f.configMaps(), ns, "mid", map[string]any{"ownerReferences": []any{ownerRef(top, true)}})
	f.create(f.configMaps(), ns, "leaf", map[string]any{
		"ownerReferences": []any{ownerRef(mid, true)},
		"finalizers":      []string{"example.com/hold"},
	})
	f.delete(f.configMaps(), ns, "top", api.DeletePropagationForeground)
	// The middle object owns the leaf, so it is deleted in the
	// foreground too and waits for it; the top waits for the middle.
	f.waitFor("the middle object to wait for its dependent", func() bool {
		m := f.get(f.configMaps(), ns, "mid")
		return m != nil && m.Metadata.DeletionTimestamp != nil && slices.Contains(m.Metadata.Finalizers, "foregroundDeletion")
	})
	if f.get(f.configMaps(), ns, "top") == nil {
		t.Fatal("top went before its dependents")
	}
	f.dropFinalizers(f.configMaps(), ns, "leaf")
	f.waitGone(f.configMaps(), ns, "leaf")
	f.waitGone(f.configMaps(), ns, "mid")
	f.waitGone(f.configMaps(), ns, "top")
}

func TestGarbageCollectorOrphan(t *testing.T) {
	f := newFixture(t)
	ns := f.namespace("app")
	owner := f.create(f.configMaps(), ns, "owner", nil)
	other := f.create(f.configMaps(), ns, "other-owner", nil)
	f.create(f.configMaps(), ns, "dep", map[string]any{"ownerReferences": []any{ownerRef(owner, true), ownerRef(other, false)}})
	f.create(f.widgets(), ns, "dep-widget", map[string]any{"ownerReferences": []any{ownerRef(owner, false)}})

	marked := f.delete(f.configMaps(), ns, "owner", api.DeletePropagationOrphan)
	if !slices.Equal(marked.Metadata.Finalizers, []string{"orphan"}) {
		t.Fatalf("owner finalizers after an orphan delete: %v", marked.Metadata.Finalizers)
	}
	f.waitGone(f.configMaps(), ns, "owner")
	dep := f.get(f.configMaps(), ns, "dep")
	if dep == nil || len(dep.Metadata.OwnerReferences) != 1 || dep.Metadata.OwnerReferences[0].UID != other.Metadata.UID {
		t.Fatalf("dependent after orphaning: %v", dep)
	}
	w := f.get(f.widgets(), ns, "dep-widget")
	if w == nil || len(w.Metadata.OwnerReferences) != 0 {
		t.Fatalf("widget after orphaning: %v", w)
	}
}

func TestGarbageCollectorOff(t *testing.T) {
	f := newFixture(t, "*", "-"+GarbageCollectorName)
	ns := f.namespace("app")
	owner := f.create(f.configMaps(), ns, "owner", nil)
	f.create(f.configMaps(), ns, "dep", map[string]any{"ownerReferences": []any{ownerRef(owner, true)}})
	// Without a collector the registry adds no finalizer that nothing
	// would remove: a foreground delete deletes at once.
	if got := f.delete(f.configMaps(), ns, "owner", api.DeletePropagationForeground); got.Metadata.DeletionTimestamp != nil {
		t.Fatalf("owner kept with finalizers %v", got.Metadata.Finalizers)
	}
	// Nothing collects the dependent; give a running collector ample time
	// to have acted (milliseconds), then check that nothing did.
	time.Sleep(time.Second)
	if f.get(f.configMaps(), ns, "dep") == nil {
		t.Fatal("dependent deleted with the garbage collector off")
	}
}

// TestGarbageCollectorRechecksDependentsOfAbsentOwners covers an owner of
// a type added while serving that is deleted before the collector's
// informer for that type has listed: no event ever tells of it, so when a
// type's first list completes, every dependent whose owner the graph does
// not hold is looked at again.
func TestGarbageCollectorRechecksDependentsOfAbsentOwners(t *testing.T) {
	gc := NewGarbageCollector(registry.New(registry.Config{}), discardLogger())
	gc.nodes["present"] = &node{m: &meta{UID: "present"}}
	gc.dependents["present"] = map[string]bool{"d1": true}
	gc.dependents["gone"] = map[string]bool{"d2": true, "d3": true}
	gc.mu.Lock()
	gc.recheckAbsentOwnersLocked()
	gc.mu.Unlock()

	got := map[string]bool{}
	for range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		uid, ok := gc.queue.get(ctx)
		cancel()
		if !ok {
			t.Fatalf("queued %v, want d2 and d3", got)
		}
		got[uid] = true
	}
	if !got["d2"] || !got["d3"] {
		t.Fatalf("queued %v, want d2 and d3", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if uid, ok := gc.queue.get(ctx); ok {
		t.Fatalf("also queued %q, whose owner is in the graph", uid)
	}
}
