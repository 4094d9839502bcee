package registry

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/miniapi/miniapi/api"
)

// TestStatusSubresourceRules checks, at the Store, the rules of a type
// with /status: writes through /status change only .status, writes of
// the main resource keep it, and only spec changes move generation.
func TestStatusSubresourceRules(t *testing.T) {
	ctx := context.Background()
	reg := newEtcdRegistry(t, Config{})
	widgets := Type{Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets", Namespaced: true, Strategy: GenericStrategy{Status: true}}
	if err := reg.Add(widgets); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, storeOf(t, reg, "namespaces"), "", `{"metadata":{"name":"ns1"}}`)
	res, _ := reg.Snapshot().Lookup("example.com", "v1", "widgets")
	s := res.Store

	w := mustCreate(t, s, "ns1", `{"metadata":{"name":"w"},"spec":{"size":1},"status":{"ready":true}}`)
	check := func(step string, o *api.Object, spec, status string, generation int64) {
		t.Helper()
		if got := string(o.Fields["spec"]); got != spec {
			t.Errorf("%s: spec %s, want %s", step, got, spec)
		}
		if got := string(o.Fields["status"]); got != status {
			t.Errorf("%s: status %s, want %s", step, got, status)
		}
		if o.Metadata.Generation != generation {
			t.Errorf("%s: generation %d, want %d", step, o.Metadata.Generation, generation)
		}
	}
	check("create", w, `{"size":1}`, ``, 1)

	update := func(step, body, sub string) *api.Object {
		t.Helper()
		var obj api.Object
		if err := json.Unmarshal([]byte(body), &obj); err != nil {
			t.Fatal(err)
		}
		out, err := s.UpdateObject(ctx, "ns1", "w", &obj, UpdateOptions{Subresource: sub})
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		return mustDecode(t, out)
	}
	w = update("status write", `{"metadata":{"name":"w","labels":{"a":"b"}},"spec":{"size":9},"status":{"ready":true}}`, SubresourceStatus)
	check("status write", w, `{"size":1}`, `{"ready":true}`, 1)
	if len(w.Metadata.Labels) != 0 {
		t.Errorf("status write changed labels: %v", w.Metadata.Labels)
	}
	w = update("main write", `{"metadata":{"name":"w"},"spec":{"size":2},"status":{"ready":false}}`, "")
	check("main write", w, `{"size":2}`, `{"ready":true}`, 2)
	w = update("main write without status", `{"metadata":{"name":"w","labels":{"a":"b"}},"spec":{"size":2}}`, "")
	check("main write without status", w, `{"size":2}`, `{"ready":true}`, 2)
	w = update("status change", `{"metadata":{"name":"w"},"status":{"ready":false}}`, SubresourceStatus)
	check("status change", w, `{"size":2}`, `{"ready":false}`, 2)

	// A type without /status has none to write to.
	if _, err := storeOf(t, reg, "configmaps").UpdateObject(ctx, "ns1", "x", &api.Object{}, UpdateOptions{Subresource: SubresourceStatus}); !api.IsNotFound(err) {
		t.Errorf("configmap status write: %v, want NotFound", err)
	}
}
