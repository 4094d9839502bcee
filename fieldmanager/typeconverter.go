package fieldmanager

import (
	"encoding/json"
	"fmt"
	"maps"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/validation/spec"
	generatedopenapi "k8s.io/kubernetes/pkg/generated/openapi"
)

// ForModels returns the merge schema of built-in kinds from their
// OpenAPI models: Kubernetes' own definitions of them, with their list and
// map types, as kube-apiserver builds its merge schema from the same
// definitions. newObject creates an empty object of a kind (its Go type):
// a create is compared with it, as kube-apiserver compares one. Building
// the schema costs tens of milliseconds and megabytes: callers build it
// once, when first needed.
func ForModels(models map[string]*spec.Schema, newObject func(schema.GroupVersionKind) (runtime.Object, error)) (TypeConverter, error) {
	tc, err := managedfields.NewTypeConverter(models, false)
	if err != nil {
		return nil, fmt.Errorf("fieldmanager: built-in merge schema: %w", err)
	}
	return ForConverter(tc, newObject), nil
}

// ForConverter returns the merge schema of built-in kinds from a
// converter over it (what ForModels builds, or one over a schema built
// beforehand by the same code); newObject is as for ForModels.
func ForConverter(tc TypeConverter, newObject func(schema.GroupVersionKind) (runtime.Object, error)) TypeConverter {
	return &builtinConverter{TypeConverter: tc, newObject: newObject}
}

// builtinConverter is the merge schema of the built-in kinds, which also
// knows their empty objects.
type builtinConverter struct {
	TypeConverter
	newObject func(schema.GroupVersionKind) (runtime.Object, error)
	// empties caches emptyObject's answer by kind: every create needs it.
	empties sync.Map // schema.GroupVersionKind → map[string]any
}

// emptyObject is the new, empty object of a built-in kind as
// kube-apiserver compares a create with: the Go type's zero value, whose
// JSON has its struct fields ("spec": {}) and null timestamps, so a
// client that sends them does not come to own them. The caller gets its
// own copy.
func (c *builtinConverter) emptyObject(gvk schema.GroupVersionKind) (map[string]any, error) {
	if m, ok := c.empties.Load(gvk); ok {
		return runtime.DeepCopyJSON(m.(map[string]any)), nil
	}
	obj, err := c.newObject(gvk)
	if err != nil {
		return nil, fmt.Errorf("fieldmanager: %s: %w", gvk, err)
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("fieldmanager: encode empty %s: %w", gvk, err)
	}
	var m map[string]any
	if err := utiljson.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("fieldmanager: decode empty %s: %w", gvk, err)
	}
	m["apiVersion"], m["kind"] = gvk.GroupVersion().String(), gvk.Kind
	c.empties.Store(gvk, m)
	return runtime.DeepCopyJSON(m), nil
}

// ForSchema returns the merge schema of a custom type from the OpenAPI v3
// schemas of its objects by version (a CRD's openAPIV3Schemas; nil for a
// version without one), as kube-apiserver builds it for custom resources:
// x-kubernetes-list-type, -list-map-keys and -map-type decide how lists
// and maps merge, metadata is Kubernetes' ObjectMeta, and where a schema
// preserves unknown fields (or there is none) their values merge as
// untyped maps and atomic lists. Every version is included, so entries
// recorded through one version still merge when another is written.
func ForSchema(gk schema.GroupKind, versions map[string]json.RawMessage) (TypeConverter, error) {
	models := maps.Clone(metaModels())
	for version, objectSchema := range versions {
		kind := gk.WithVersion(version)
		root := &spec.Schema{}
		if len(objectSchema) > 0 {
			if err := json.Unmarshal(objectSchema, root); err != nil {
				return nil, fmt.Errorf("fieldmanager: %s: decode schema: %w", kind, err)
			}
		} else {
			root.Type = spec.StringOrArray{"object"}
			root.AddExtension("x-kubernetes-preserve-unknown-fields", true)
		}
		// The object's own schema says little about these; kube-apiserver
		// replaces them with the standard definitions too.
		if root.Properties == nil {
			root.Properties = map[string]spec.Schema{}
		}
		root.Properties["apiVersion"] = *spec.StringProperty()
		root.Properties["kind"] = *spec.StringProperty()
		root.Properties["metadata"] = spec.Schema{SchemaProps: spec.SchemaProps{Ref: spec.MustCreateRef(refPrefix + objectMetaModel)}}
		root.AddExtension("x-kubernetes-group-version-kind", []any{
			map[string]any{"group": kind.Group, "version": kind.Version, "kind": kind.Kind},
		})
		models[customModelPrefix+version] = root
	}
	tc, err := managedfields.NewTypeConverter(models, false)
	if err != nil {
		return nil, fmt.Errorf("fieldmanager: %s: %w", gk, err)
	}
	return tc, nil
}

const (
	refPrefix       = "#/definitions/"
	objectMetaModel = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
	// customModelPrefix names the custom type's model of each version;
	// only references within this converter's models see them.
	customModelPrefix = "miniapi.custom."
)

// scaleModel names autoscaling/v1 Scale's model.
const scaleModel = "io.k8s.api.autoscaling.v1.Scale"

// ForScale returns the merge schema of autoscaling/v1 Scale, which
// client-go's schema lacks: Kubernetes' generated model of it, as
// kube-apiserver merges /scale writes of custom resources.
func ForScale() (TypeConverter, error) {
	models := maps.Clone(scaleModels())
	scale := *models[scaleModel]
	scale.Extensions = maps.Clone(scale.Extensions) // the cached model is shared
	scale.AddExtension("x-kubernetes-group-version-kind", []any{
		map[string]any{"group": "autoscaling", "version": "v1", "kind": "Scale"},
	})
	models[scaleModel] = &scale
	tc, err := managedfields.NewTypeConverter(models, false)
	if err != nil {
		return nil, fmt.Errorf("fieldmanager: autoscaling/v1 Scale: %w", err)
	}
	return tc, nil
}

// metaModels and scaleModels are generatedModels of ObjectMeta and of
// autoscaling/v1 Scale, built once: Kubernetes' generated definitions
// are built whole on every call, which cost every CRD's first write
// ~10 ms. Callers clone the map and must not change the schemas.
var (
	metaModels  = sync.OnceValue(func() map[string]*spec.Schema { return generatedModels(objectMetaModel) })
	scaleModels = sync.OnceValue(func() map[string]*spec.Schema { return generatedModels(scaleModel) })
)

// generatedModels returns the OpenAPI models Kubernetes generates, with
// their list and map types, of the named types and everything they refer
// to: the shared metadata types, autoscaling/v1 Scale.
func generatedModels(roots ...string) map[string]*spec.Schema {
	ref := func(name string) spec.Ref { return spec.MustCreateRef(refPrefix + name) }
	defs := generatedopenapi.GetOpenAPIDefinitions(ref)
	models := map[string]*spec.Schema{}
	var add func(name string)
	add = func(name string) {
		if _, done := models[name]; done {
			return
		}
		def, ok := defs[name]
		if !ok {
			return
		}
		s := def.Schema // a copy: callers may add extensions
		models[name] = &s
		for _, dep := range def.Dependencies {
			add(dep)
		}
	}
	for _, r := range roots {
		add(r)
	}
	return models
}
