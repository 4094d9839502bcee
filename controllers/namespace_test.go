package controllers

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
)

// phase returns a namespace's status.phase.
func phase(ns *api.Object) string {
	var st struct {
		Phase string `json:"phase"`
	}
	_ = json.Unmarshal(ns.Fields["status"], &st)
	return st.Phase
}

func TestNamespaceDeletionEmptiesThenRemoves(t *testing.T) {
	f := newFixture(t)
	ns := f.namespace("team")
	f.namespace("other")
	for _, name := range []string{"a", "b", "c"} {
		f.create(f.configMaps(), ns, name, nil)
	}
	f.create(f.secrets(), ns, "s", nil)
	f.create(f.widgets(), ns, "w", nil)
	f.create(f.configMaps(), ns, "held", map[string]any{"finalizers": []string{"example.com/hold"}})
	f.create(f.configMaps(), "other", "bystander", nil)

	marked := f.delete(f.namespaces(), "", ns, "")
	if phase(marked) != "Terminating" || marked.Metadata.DeletionTimestamp == nil {
		t.Fatalf("deleted namespace: phase %q, deletionTimestamp %v", phase(marked), marked.Metadata.DeletionTimestamp)
	}

	// Everything not held goes; the held object is marked and stays, and
	// so does the namespace, Terminating and closed to new objects.
	for _, o := range []struct {
		s    *registry.Store
		name string
	}{{f.configMaps(), "a"}, {f.configMaps(), "b"}, {f.configMaps(), "c"}, {f.secrets(), "s"}, {f.widgets(), "w"}} {
		f.waitGone(o.s, ns, o.name)
	}
	f.waitFor("the held object to be marked", func() bool {
		held := f.get(f.configMaps(), ns, "held")
		return held != nil && held.Metadata.DeletionTimestamp != nil
	})
	cur := f.get(f.namespaces(), "", ns)
	if cur == nil || phase(cur) != "Terminating" {
		t.Fatalf("namespace while content is held: %v", cur)
	}
	_, err := f.configMaps().CreateObject(f.ctx(), ns, &api.Object{Metadata: api.ObjectMeta{Name: "late"}}, registry.CreateOptions{})
	if api.ReasonForError(err) != api.ReasonForbidden {
		t.Fatalf("create in a terminating namespace: %v, want 403 Forbidden", err)
	}

	// Releasing the held object lets the namespace go.
	f.dropFinalizers(f.configMaps(), ns, "held")
	f.waitGone(f.namespaces(), "", ns)
	if f.get(f.configMaps(), ns, "held") != nil {
		t.Fatal("held object outlived its namespace")
	}
	if f.get(f.configMaps(), "other", "bystander") == nil {
		t.Fatal("an object in another namespace was deleted")
	}
}

func TestNamespaceDeletionCoversTypesAddedLater(t *testing.T) {
	f := newFixture(t)
	ns := f.namespace("team")
	gadgets := registry.Type{Group: "example.com", Version: "v1", Kind: "Gadget", Plural: "gadgets", Namespaced: true}
	if err := f.reg.Add(gadgets); err != nil {
		t.Fatal(err)
	}
	f.create(f.store("example.com", "gadgets"), ns, "g", nil)
	// The type goes away (its objects stay in etcd) while the namespace
	// is deleted; an object held by a finalizer keeps it Terminating.
	if err := f.reg.Remove(gadgets.GVR()); err != nil {
		t.Fatal(err)
	}
	f.create(f.configMaps(), ns, "held", map[string]any{"finalizers": []string{"example.com/hold"}})
	f.delete(f.namespaces(), "", ns, "")
	f.waitFor("the held object to be marked", func() bool {
		held := f.get(f.configMaps(), ns, "held")
		return held != nil && held.Metadata.DeletionTimestamp != nil
	})
	// Served again, the type's objects are found and deleted too.
	if err := f.reg.Add(gadgets); err != nil {
		t.Fatal(err)
	}
	f.waitGone(f.store("example.com", "gadgets"), ns, "g")
	f.dropFinalizers(f.configMaps(), ns, "held")
	f.waitGone(f.namespaces(), "", ns)
}

func TestNamespaceControllerOffLeavesNamespaceTerminating(t *testing.T) {
	f := newFixture(t, "*", "-"+NamespaceControllerName)
	ns := f.namespace("team")
	f.create(f.configMaps(), ns, "a", nil)
	f.delete(f.namespaces(), "", ns, "")
	// Nothing will happen; give a running controller ample time to have
	// acted (it empties a namespace like this in milliseconds), then check
	// that nothing did.
	time.Sleep(time.Second)
	if cur := f.get(f.namespaces(), "", ns); cur == nil || phase(cur) != "Terminating" {
		t.Fatalf("namespace with its controller off: %v", cur)
	}
	if f.get(f.configMaps(), ns, "a") == nil {
		t.Fatal("content deleted with the namespace controller off")
	}
}
