package builtin

import (
	"bytes"
	"compress/gzip"
	_ "embed" // the generated merge schema
	"encoding/gob"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/miniapi/miniapi/fieldmanager"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	genericfeatures "k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kube-openapi/pkg/schemaconv"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// The built-in kinds' merge schema is what kube-apiserver builds from
// its generated OpenAPI definitions at start: every definition
// constructed, turned into OpenAPI v3 by kube-openapi's builder, then
// into structured-merge-diff's schema, ~90 ms of CPU and ~30 MB of
// garbage in every process, on its first write. Nothing of it changes
// between processes built from the same modules, so `go test ./builtin
// -run TestMergeSchemaGenerated -update` stores the result, made by that
// same code, and a process decodes it in a few milliseconds. The test
// fails when the stored schema is no longer what kube's code builds
// (a new k8s.io/kubernetes, a new served kind), and a process whose
// models or OpenAPIEnums gate differ from the stored ones builds its own.

//go:embed zz_generated_mergeschema.gob.gz
var generatedMergeSchema []byte

// mergeSchemaFile is what the generated file holds, gob-encoded and
// gzipped.
type mergeSchemaFile struct {
	// Models are the models the schema was built from, in order.
	Models []string
	// OpenAPIEnums is the gate kube's definitions depend on
	// (utilopenapi.GetOpenAPIDefinitionsWithoutDisabledFeatures).
	OpenAPIEnums bool
	// Types are structured-merge-diff's schema of the models and of
	// every model they refer to, field defaults as decoded JSON values
	// (kube's are typed Go values; the merge compares them as values).
	Types []smdschema.TypeDef
}

func init() {
	// Field defaults are interface values: gob must know their types.
	gob.Register(map[string]any{})
	gob.Register([]any{})
}

// mergeModels are the models of the merge schema: every served kind
// (the reviews included: kube-apiserver records their creator's
// managedFields too), Scale (the scale subresources' kind) and
// TokenRequest (serviceaccounts/token's).
func mergeModels() []string {
	var names []string
	for _, r := range append(resources(Config{}), reviewResources(&Auth{})...) {
		gvk := schema.GroupVersionKind{Group: r.group, Version: r.version, Kind: r.kind}
		if name, err := scheme.ToOpenAPIDefinitionName(gvk); err == nil {
			names = append(names, name)
		}
	}
	return append(names, ModelScale, modelTokenRequest)
}

// modelTokenRequest is the definition of serviceaccounts/token's kind.
const modelTokenRequest = "io.k8s.api.authentication.v1.TokenRequest"

// buildMergeTypes builds the merge schema of models from kube's
// definitions, as kube-apiserver builds its own
// (managedfields.NewTypeConverter over kube-openapi's v3 builder).
func buildMergeTypes(models []string) ([]smdschema.TypeDef, error) {
	specs, err := v3Specs(models...)
	if err != nil {
		return nil, err
	}
	s, err := schemaconv.ToSchemaFromOpenAPI(specs, false)
	if err != nil {
		return nil, err
	}
	// Types and fields come in the order of a map's iteration (they are
	// looked up by name): sorted, one build is byte for byte another.
	slices.SortFunc(s.Types, func(a, b smdschema.TypeDef) int { return strings.Compare(a.Name, b.Name) })
	for _, t := range s.Types {
		if t.Map != nil {
			slices.SortFunc(t.Map.Fields, func(a, b smdschema.StructField) int { return strings.Compare(a.Name, b.Name) })
		}
	}
	return s.Types, nil
}

// generatedMergeTypes returns the stored merge schema if it was built
// from models with this process's gates, or nil.
func generatedMergeTypes(models []string) ([]smdschema.TypeDef, error) {
	zr, err := gzip.NewReader(bytes.NewReader(generatedMergeSchema))
	if err != nil {
		return nil, err
	}
	var f mergeSchemaFile
	if err := gob.NewDecoder(zr).Decode(&f); err != nil {
		return nil, err
	}
	if !slices.Equal(f.Models, models) || f.OpenAPIEnums != utilfeature.DefaultFeatureGate.Enabled(genericfeatures.OpenAPIEnums) {
		return nil, nil
	}
	return f.Types, nil
}

// mergeSchema is the merge schema of every built-in kind, made once, on
// the first write that records managedFields.
var mergeSchema = sync.OnceValues(func() (fieldmanager.TypeConverter, error) {
	models := mergeModels()
	types, err := generatedMergeTypes(models)
	if err == nil && types == nil {
		types, err = buildMergeTypes(models)
	}
	if err != nil {
		return nil, fmt.Errorf("builtin: merge schema: %w", err)
	}
	parser := &typed.Parser{Schema: smdschema.Schema{Types: types}}
	tc := mergeConverter{
		TypeConverter: managedfields.NewSchemeTypeConverter(scheme, parser),
		kinds:         mergeKinds(parser, types),
	}
	return fieldmanager.ForConverter(tc, func(gvk schema.GroupVersionKind) (runtime.Object, error) {
		obj, err := scheme.New(gvk)
		if err == nil {
			obj.GetObjectKind().SetGroupVersionKind(gvk)
		}
		return obj, err
	}), nil
})

// ParseMergeSchema builds the built-in kinds' merge schema now, for a
// caller that knows writes to them are coming (the system namespaces of a
// new data directory) and can overlap the build with other work.
func ParseMergeSchema() { _, _ = mergeSchema() }

// mergeKinds are the kinds the schema's types are, as kube-apiserver's
// converter indexes them: by the x-kubernetes-group-version-kind kube's
// namer gives each definition.
func mergeKinds(parser *typed.Parser, types []smdschema.TypeDef) map[schema.GroupVersionKind]*typed.ParseableType {
	kinds := map[schema.GroupVersionKind]*typed.ParseableType{}
	n := namer()
	for _, t := range types {
		_, ext := n.GetDefinitionName(t.Name)
		gvks := definitionKinds(ext)
		if len(gvks) == 0 {
			continue
		}
		pt := parser.Type(t.Name)
		for _, gvk := range gvks {
			kinds[gvk] = &pt
		}
	}
	return kinds
}

// definitionKinds reads the x-kubernetes-group-version-kind extension
// kube's namer returns.
func definitionKinds(ext map[string]any) []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	list, _ := ext["x-kubernetes-group-version-kind"].([]any)
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		g, _ := m["group"].(string)
		v, _ := m["version"].(string)
		k, _ := m["kind"].(string)
		if k != "" {
			out = append(out, schema.GroupVersionKind{Group: g, Version: v, Kind: k})
		}
	}
	return out
}

// mergeConverter turns objects into typed values of the schema as
// kube-apiserver's own converter does (managedfields.NewTypeConverter,
// which needs the OpenAPI models this schema was built from): by the
// kind's type, looked up once here rather than named through the scheme
// on every write as kube's scheme-based converter, which turns typed
// values back into objects, does. A kind the schema lacks (a version
// kube's scheme knows but does not serve, named in an old managedFields
// entry) is answered with an error kube's field manager takes for a
// missing version, so the entry is dropped rather than the write failed.
type mergeConverter struct {
	managedfields.TypeConverter
	kinds map[schema.GroupVersionKind]*typed.ParseableType
}

func (c mergeConverter) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	gvk := obj.GetObjectKind().GroupVersionKind()
	t := c.kinds[gvk]
	if t == nil {
		return nil, runtime.NewNotRegisteredErrForKind("the built-in kinds' merge schema", gvk)
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return t.FromUnstructured(u.UnstructuredContent(), opts...)
	}
	return t.FromStructured(obj, opts...)
}
