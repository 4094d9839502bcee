package registry

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/schema"
)

const widgetCRDSchema = `{"type":"object","properties":{"spec":{"type":"object","required":["color"],
	"x-kubernetes-validations":[{"rule":"self.color == oldSelf.color","message":"color is immutable"}],
	"properties":{
		"replicas":{"type":"integer","maximum":3,"default":1},
		"color":{"type":"string","enum":["red","blue"]}}},
	"status":{"type":"object","properties":{"ready":{"type":"boolean"}}}}}`

// widgetStore serves widgetCRDSchema's Widgets through SchemaStrategy,
// as a CRD's type is served, with a namespace ns1 to create them in.
func widgetStore(t testing.TB) *Store {
	t.Helper()
	reg := newEtcdRegistry(t, Config{})
	widgets := Type{Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets", Namespaced: true,
		Schema: json.RawMessage(widgetCRDSchema), Strategy: GenericStrategy{Status: true}}
	widgets.Strategy = SchemaStrategy(schema.MustCompile([]byte(widgetCRDSchema)), &widgets)
	if err := reg.Add(widgets); err != nil {
		t.Fatal(err)
	}
	if _, err := storeOf(t, reg, "namespaces").Create(context.Background(), "", []byte(`{"metadata":{"name":"ns1"}}`), CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	res, _ := reg.Snapshot().Lookup("example.com", "v1", "widgets")
	return res.Store
}

// TestSchemaStrategy drives a Store whose type uses SchemaStrategy, as a
// CRD's types do: defaults and pruning on write, kube's 422 on invalid
// objects, transition rules on update.
func TestSchemaStrategy(t *testing.T) {
	ctx := context.Background()
	s := widgetStore(t)

	w := mustCreate(t, s, "ns1", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"color":"red","extra":1}}`)
	if got := string(w.Fields["spec"]); got != `{"color":"red","replicas":1}` {
		t.Errorf("created spec %s, want defaulted and pruned", got)
	}

	invalid := func(step string, err error, want string) {
		t.Helper()
		var se *api.StatusError
		if !errors.As(err, &se) || se.ErrStatus.Code != 422 {
			t.Fatalf("%s: err %v, want 422", step, err)
		}
		if se.ErrStatus.Message != want {
			t.Errorf("%s: message\n %s\nwant\n %s", step, se.ErrStatus.Message, want)
		}
	}
	var obj api.Object
	mustUnmarshal(t, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"x"},"spec":{"color":"pink","replicas":2}}`, &obj)
	_, err := s.CreateObject(ctx, "ns1", &obj, CreateOptions{})
	invalid("create", err, `Widget.example.com "x" is invalid: [spec.color: Unsupported value: "pink": supported values: "red", "blue", <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`)

	// kube's strategy judges the kind (422 naming the object's own kind)
	// and warns about finalizer names.
	mustUnmarshal(t, `{"apiVersion":"example.com/v1","kind":"Bogus","metadata":{"name":"x"},"spec":{"color":"red"}}`, &obj)
	_, err = s.CreateObject(ctx, "ns1", &obj, CreateOptions{})
	invalid("create of another kind", err, `Bogus.example.com "x" is invalid: kind: Invalid value: "Bogus": must be Widget`)
	wctx, warnings := api.WithWarnings(ctx)
	mustUnmarshal(t, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"f","finalizers":["foo"]},"spec":{"color":"red"}}`, &obj)
	if _, err := s.CreateObject(wctx, "ns1", &obj, CreateOptions{DryRun: true}); err != nil {
		t.Fatal(err)
	}
	if got, want := warnings.Messages(), []string{`metadata.finalizers: "foo": prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers`}; !slices.Equal(got, want) {
		t.Errorf("warnings %q, want %q", got, want)
	}

	// Custom resources are never updated unconditionally.
	mustUnmarshal(t, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"color":"blue"}}`, &obj)
	_, err = s.UpdateObject(ctx, "ns1", "w", &obj, UpdateOptions{})
	invalid("update without resourceVersion", err, `widgets.example.com "w" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`)
	obj.Metadata.ResourceVersion = w.Metadata.ResourceVersion
	_, err = s.UpdateObject(ctx, "ns1", "w", &obj, UpdateOptions{})
	invalid("update", err, `Widget.example.com "w" is invalid: spec: Invalid value: color is immutable`)

	mustUnmarshal(t, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"color":"red","replicas":2},"status":{"ready":true}}`, &obj)
	obj.Metadata.ResourceVersion = w.Metadata.ResourceVersion
	out, err := s.UpdateObject(ctx, "ns1", "w", &obj, UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w = mustDecode(t, out)
	if got := string(w.Fields["spec"]); got != `{"color":"red","replicas":2}` {
		t.Errorf("updated spec %s", got)
	}
	if w.Metadata.Generation != 2 {
		t.Errorf("generation %d, want 2", w.Metadata.Generation)
	}
}

// TestSchemaStrategyGeneration checks kube's generation rule for custom
// resources: a change outside metadata moves generation, except one of
// status in a type with /status (whose main resource keeps old status).
func TestSchemaStrategyGeneration(t *testing.T) {
	ctx := context.Background()
	sch := schema.MustCompile([]byte(widgetCRDSchema))
	strategy := func(status bool) UpdateRules {
		typ := Type{Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets", Namespaced: true,
			Strategy: GenericStrategy{Status: status}}
		return SchemaStrategy(sch, &typ).(UpdateRules)
	}
	const meta = `"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"ns1","uid":"u","generation":1,"resourceVersion":"5","creationTimestamp":"2026-01-01T00:00:00Z"}`
	for _, tc := range []struct {
		status bool
		want   int64
	}{{true, 1}, {false, 2}} {
		var obj, old api.Object
		mustUnmarshal(t, `{`+meta+`,"spec":{"color":"red"},"status":{"ready":true}}`, &obj)
		mustUnmarshal(t, `{`+meta+`,"spec":{"color":"red"},"status":{"ready":false}}`, &old)
		if err := strategy(tc.status).BeforeUpdate(ctx, &obj, &old, ""); err != nil {
			t.Fatal(err)
		}
		if obj.Metadata.Generation != tc.want {
			t.Errorf("status change, /status %v: generation %d, want %d", tc.status, obj.Metadata.Generation, tc.want)
		}
	}
}

func mustUnmarshal(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatal(err)
	}
}

// TestSchemaStrategyStatusDefaults checks that a write through /status is
// defaulted by the schema as kube-apiserver's decoder defaults every body
// of a custom resource: a status that leaves out a required field with a
// default gets the default and is accepted, by update and by merge patch.
func TestSchemaStrategyStatusDefaults(t *testing.T) {
	ctx := context.Background()
	reg := newEtcdRegistry(t, Config{})
	const phaseSchema = `{"type":"object","properties":{
		"spec":{"type":"object","properties":{"size":{"type":"integer"}}},
		"status":{"type":"object","required":["phase"],"properties":{
			"phase":{"type":"string","default":"Pending"},
			"note":{"type":"string"}}}}}`
	things := Type{Group: "example.com", Version: "v1", Kind: "Thing", Plural: "things", Namespaced: true,
		Schema: json.RawMessage(phaseSchema), Strategy: GenericStrategy{Status: true}}
	things.Strategy = SchemaStrategy(schema.MustCompile([]byte(phaseSchema)), &things)
	if err := reg.Add(things); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, storeOf(t, reg, "namespaces"), "", `{"metadata":{"name":"ns1"}}`)
	res, _ := reg.Snapshot().Lookup("example.com", "v1", "things")
	s := res.Store
	created := mustCreate(t, s, "ns1", `{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"t"},"spec":{"size":1}}`)

	var obj api.Object
	mustUnmarshal(t, `{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"t"},"status":{"note":"updated"}}`, &obj)
	obj.Metadata.ResourceVersion = created.Metadata.ResourceVersion
	out, err := s.UpdateObject(ctx, "ns1", "t", &obj, UpdateOptions{Subresource: SubresourceStatus})
	if err != nil {
		t.Fatalf("status update without the defaulted required field: %v", err)
	}
	if got := string(mustDecode(t, out).Fields["status"]); got != `{"note":"updated","phase":"Pending"}` {
		t.Errorf("status after update %s, want phase defaulted", got)
	}
	if got := string(mustDecode(t, out).Fields["spec"]); got != `{"size":1}` {
		t.Errorf("spec after a status update %s, want it kept", got)
	}

	out, err = s.Patch(ctx, "ns1", "t", PatchMerge, []byte(`{"status":{"phase":null,"note":"patched"}}`), UpdateOptions{Subresource: SubresourceStatus})
	if err != nil {
		t.Fatalf("status merge patch removing the defaulted required field: %v", err)
	}
	if got := string(mustDecode(t, out).Fields["status"]); got != `{"note":"patched","phase":"Pending"}` {
		t.Errorf("status after patch %s, want phase defaulted", got)
	}
}

// BenchmarkSchemaStrategyCreate is the cost of a custom resource's create
// through the Store (dry run: decoding, defaults, managedFields, kube's
// rules, encoding) against the baseline any server pays, decoding the
// body as generic JSON and encoding it again.
func BenchmarkSchemaStrategyCreate(b *testing.B) {
	store := widgetStore(b)
	body := []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","labels":{"app":"x"}},"spec":{"color":"red","replicas":2}}`)
	b.Run("baseline", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m map[string]any
			if err := json.Unmarshal(body, &m); err != nil {
				b.Fatal(err)
			}
			if _, err := json.Marshal(m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("store", func(b *testing.B) {
		b.ReportAllocs()
		ctx := context.Background()
		for b.Loop() {
			if _, err := store.Create(ctx, "ns1", body, CreateOptions{DryRun: true}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
