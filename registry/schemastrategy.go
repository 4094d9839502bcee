package registry

import (
	"context"
	"encoding/json"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// SchemaStrategy returns the Strategy of t, a type whose objects follow
// the structural schema s, as a CustomResourceDefinition's versions do:
// writes are pruned and defaulted (Defaulter), as kube-apiserver's
// decoder does, then judged by kube's own strategy for custom resources
// (schema.Rules: CreateRules, UpdateRules), which clears status on the
// main resource and all but status on /status (when t has it), moves
// generation, validates apiVersion and kind, metadata, the schema, the
// scale paths and CEL rules, and warns about finalizer names. Updates
// must name the resourceVersion they replace (ConditionalUpdater), and
// managedFields leave out what kube's strategies reset (FieldResetter).
// t.Schema should be s so that fieldValidation (CheckFields) reports
// the unknown fields that pruning drops.
func SchemaStrategy(s *schema.Schema, t *Type) Strategy {
	status := hasStatus(t.Strategy)
	r := schema.Resource{Group: t.Group, Version: t.Version, Kind: t.Kind, Namespaced: t.Namespaced, Status: status}
	if sc := t.Scale; sc != nil {
		r.Scale = &schema.Scale{SpecReplicasPath: sc.SpecReplicasPath, StatusReplicasPath: sc.StatusReplicasPath, LabelSelectorPath: sc.LabelSelectorPath}
	}
	return &schemaStrategy{s: s, rules: s.Rules(r), status: status}
}

type schemaStrategy struct {
	s      *schema.Schema
	rules  *schema.Rules
	status bool
}

var (
	_ Defaulter          = (*schemaStrategy)(nil)
	_ StatusDefaulter    = (*schemaStrategy)(nil)
	_ StatusSubresource  = (*schemaStrategy)(nil)
	_ CreateRules        = (*schemaStrategy)(nil)
	_ UpdateRules        = (*schemaStrategy)(nil)
	_ ConditionalUpdater = (*schemaStrategy)(nil)
	_ FieldResetter      = (*schemaStrategy)(nil)
	_ TypeMetaValidator  = (*schemaStrategy)(nil)
)

// HasStatus reports whether the type has a /status subresource.
func (st *schemaStrategy) HasStatus() bool { return st.status }

// Default prunes unknown fields and applies the schema's defaults, as
// kube-apiserver's decoder does to every custom resource it reads.
func (st *schemaStrategy) Default(obj *api.Object) {
	m, err := objectMap(obj)
	if err != nil {
		return // the rules report an object that is not JSON
	}
	st.s.Prune(m)
	st.s.Default(m)
	setObjectFields(obj, m)
}

// DefaultStatus prunes and defaults an object written through /status,
// as kube-apiserver's decoder does to the body of any write: a status
// that leaves out a required field with a default gets the default.
func (st *schemaStrategy) DefaultStatus(obj *api.Object) { st.Default(obj) }

// ValidatesTypeMeta says kube's rules judge apiVersion and kind.
func (st *schemaStrategy) ValidatesTypeMeta() {}

// BeforeCreate runs kube's rules for a new custom resource.
func (st *schemaStrategy) BeforeCreate(ctx context.Context, obj *api.Object) error {
	m, err := objectMap(obj)
	if err != nil {
		return err
	}
	if m, err = st.rules.BeforeCreate(ctx, obj.Metadata.Namespace, m); err != nil {
		return api.FromKubeError(err)
	}
	return setObject(obj, m)
}

// BeforeUpdate runs kube's rules for an update through subresource.
func (st *schemaStrategy) BeforeUpdate(ctx context.Context, obj, old *api.Object, subresource string) error {
	// As kube-apiserver's generic store: the update carries the
	// resourceVersion it replaces when the rules judge it.
	obj.Metadata.ResourceVersion = old.Metadata.ResourceVersion
	m, err := objectMap(obj)
	if err != nil {
		return err
	}
	o, err := objectMap(old)
	if err != nil {
		return err
	}
	if m, err = st.rules.BeforeUpdate(ctx, obj.Metadata.Namespace, m, o, subresource); err != nil {
		return api.FromKubeError(err)
	}
	if err := setObject(obj, m); err != nil {
		return err
	}
	// The Store writes obj as the update of the revision it read.
	obj.Metadata.ResourceVersion = ""
	return nil
}

// RequiresResourceVersion is kube's rule: custom resources are never
// updated unconditionally.
func (st *schemaStrategy) RequiresResourceVersion() bool { return st.rules.RequiresResourceVersion() }

// ResetFields returns what kube's strategy for subresource resets.
func (st *schemaStrategy) ResetFields(subresource string) map[fieldpath.APIVersion]fieldpath.Filter {
	return st.rules.ResetFields(subresource)
}

// setObject makes obj m, the whole object as generic JSON: the fields
// whose value did not change keep their bytes, metadata is read again.
func setObject(obj *api.Object, m map[string]any) error {
	b, err := json.Marshal(m["metadata"])
	if err != nil {
		return err
	}
	var meta api.ObjectMeta
	if err := json.Unmarshal(b, &meta); err != nil {
		return err
	}
	obj.Metadata = meta
	obj.APIVersion, _ = m["apiVersion"].(string)
	obj.Kind, _ = m["kind"].(string)
	setObjectFields(obj, m)
	return nil
}

// objectMap decodes obj as generic JSON, numbers as int64 or float64 as
// the schema package (and kube's unstructured objects) expects.
func objectMap(obj *api.Object) (map[string]any, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := utiljson.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// setObjectFields writes back the top-level fields of m other than
// apiVersion, kind and metadata, which the Store owns; a field whose
// value did not change keeps its bytes.
func setObjectFields(obj *api.Object, m map[string]any) {
	for k := range obj.Fields {
		if _, ok := m[k]; !ok {
			delete(obj.Fields, k)
		}
	}
	for k, v := range m {
		switch k {
		case "apiVersion", "kind", "metadata":
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			continue
		}
		if cur, ok := obj.Fields[k]; ok && api.JSONEqual(cur, b) {
			continue
		}
		if obj.Fields == nil {
			obj.Fields = map[string]json.RawMessage{}
		}
		obj.Fields[k] = b
	}
}
