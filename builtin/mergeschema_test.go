package builtin

import (
	"bytes"
	"compress/gzip"
	"encoding/gob"
	"encoding/json"
	"maps"
	"os"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericfeatures "k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// TestMergeSchemaGenerated checks that the stored merge schema is what
// kube's code builds now from the served kinds' definitions, the schema
// kube-apiserver would merge with; with -update it stores it.
func TestMergeSchemaGenerated(t *testing.T) {
	models := mergeModels()
	built, err := buildMergeTypes(models)
	if err != nil {
		t.Fatal(err)
	}
	normalizeDefaults(t, built)
	if *update {
		var raw bytes.Buffer
		f := mergeSchemaFile{Models: models, OpenAPIEnums: utilfeature.DefaultFeatureGate.Enabled(genericfeatures.OpenAPIEnums), Types: built}
		if err := gob.NewEncoder(&raw).Encode(f); err != nil {
			t.Fatal(err)
		}
		var z bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
		zw.Write(raw.Bytes())
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("zz_generated_mergeschema.gob.gz", z.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		generatedMergeSchema = z.Bytes()
	}
	stored, err := generatedMergeTypes(models)
	if err != nil {
		t.Fatal(err)
	}
	if stored == nil {
		t.Fatal("the stored merge schema was built from other models or gates; run go test ./builtin -run TestMergeSchemaGenerated -update")
	}
	if len(stored) != len(built) {
		t.Fatalf("the stored merge schema has %d types, kube's code builds %d; run go test ./builtin -run TestMergeSchemaGenerated -update", len(stored), len(built))
	}
	for i := range built {
		if !reflect.DeepEqual(stored[i], built[i]) {
			t.Fatalf("type %s differs from what kube's code builds; run go test ./builtin -run TestMergeSchemaGenerated -update", built[i].Name)
		}
	}
}

// normalizeDefaults turns kube's typed default values (a Protocol, an
// int32) into what the stored schema holds: the values decoded from
// their JSON, integers as int64 (structured-merge-diff compares them as
// values either way).
func normalizeDefaults(t *testing.T, types []smdschema.TypeDef) {
	for i := range types {
		m := types[i].Map
		if m == nil {
			continue
		}
		for j := range m.Fields {
			d := m.Fields[j].Default
			if d == nil {
				continue
			}
			data, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.UseNumber()
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
			m.Fields[j].Default = numbers(v)
		}
	}
}

func numbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i
		}
		f, _ := v.Float64()
		return f
	case map[string]any:
		for k, e := range v {
			v[k] = numbers(e)
		}
	case []any:
		for k, e := range v {
			v[k] = numbers(e)
		}
	}
	return v
}

// TestMergeSchemaNotStoredForOtherGates: a process whose definitions
// differ from the stored schema's (here, enums pruned) builds its own.
func TestMergeSchemaNotStoredForOtherGates(t *testing.T) {
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, genericfeatures.OpenAPIEnums, false)
	stored, err := generatedMergeTypes(mergeModels())
	if err != nil || stored != nil {
		t.Fatalf("with OpenAPIEnums off: %d stored types, %v; want none", len(stored), err)
	}
	if stored, err := generatedMergeTypes(mergeModels()[1:]); err != nil || stored != nil {
		t.Fatalf("for other models: %d stored types, %v; want none", len(stored), err)
	}
}

// TestMergeSchemaKinds: the converter knows a kind exactly when
// kube-apiserver's own converter (managedfields.NewTypeConverter over the
// v3 definitions) would, by the group-version-kinds the definitions are
// tagged with, and answers any other as a missing version, which kube's
// field manager drops from managedFields rather than fail the write.
func TestMergeSchemaKinds(t *testing.T) {
	models := mergeModels()
	specs, err := v3Specs(models...)
	if err != nil {
		t.Fatal(err)
	}
	want := map[schema.GroupVersionKind]bool{}
	for _, s := range specs {
		for _, gvk := range definitionKinds(s.Extensions) {
			want[gvk] = true
		}
	}
	types, err := buildMergeTypes(models)
	if err != nil {
		t.Fatal(err)
	}
	got := map[schema.GroupVersionKind]bool{}
	for gvk := range mergeKinds(&typed.Parser{Schema: smdschema.Schema{Types: types}}, types) {
		got[gvk] = true
	}
	if !maps.Equal(got, want) {
		t.Errorf("the merge schema knows %d kinds, kube's definitions are tagged with %d", len(got), len(want))
	}
	for _, gvk := range []schema.GroupVersionKind{{Group: "apps", Version: "v1", Kind: "Deployment"}, {Version: "v1", Kind: "Pod"}, {Group: "autoscaling", Version: "v1", Kind: "Scale"}} {
		if !got[gvk] {
			t.Errorf("%s is not in the merge schema", gvk)
		}
	}

	tc, err := mergeSchema()
	if err != nil {
		t.Fatal(err)
	}
	old := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1beta1", "kind": "Deployment"}}
	if _, err := tc.ObjectToTyped(old); !runtime.IsNotRegisteredError(err) {
		t.Errorf("apps/v1beta1 Deployment (in kube's scheme, not served): %v; want a not-registered error", err)
	}
	pod := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod", "spec": map[string]any{"containers": []any{map[string]any{"name": "a", "image": "b"}}}}}
	if _, err := tc.ObjectToTyped(pod); err != nil {
		t.Errorf("a Pod: %v", err)
	}
	bad := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod", "spec": map[string]any{"containers": "x"}}}
	if _, err := tc.ObjectToTyped(bad); err == nil {
		t.Error("a Pod whose containers are a string: converted; want an error")
	}
}
