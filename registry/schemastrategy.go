package registry

import (
	"encoding/json"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// SchemaStrategy returns the Strategy of a type whose objects follow the
// structural schema s, as a CustomResourceDefinition's types do: writes
// are pruned and defaulted (Defaulter), then validated against s on
// create and update (CreateValidator, UpdateValidator), and status says
// whether the type has a /status subresource. ObjectMeta is not its
// business: the Store validates it for every type. Put the same schema
// in Type.Schema so that fieldValidation (CheckFields) reports the
// unknown fields that pruning drops.
func SchemaStrategy(s *schema.Schema, status bool) Strategy {
	return &schemaStrategy{s: s, status: status}
}

type schemaStrategy struct {
	s      *schema.Schema
	status bool
}

var (
	_ Defaulter         = (*schemaStrategy)(nil)
	_ StatusDefaulter   = (*schemaStrategy)(nil)
	_ CreateValidator   = (*schemaStrategy)(nil)
	_ UpdateValidator   = (*schemaStrategy)(nil)
	_ StatusSubresource = (*schemaStrategy)(nil)
	_ GenerationPolicy  = (*schemaStrategy)(nil)
)

// HasStatus reports whether the type has a /status subresource.
func (st *schemaStrategy) HasStatus() bool { return st.status }

// Default prunes unknown fields and applies the schema's defaults, as
// kube-apiserver's decoder does to every custom resource it reads.
func (st *schemaStrategy) Default(obj *api.Object) {
	m, err := objectMap(obj)
	if err != nil {
		return // Validate reports an object that is not JSON
	}
	st.s.Prune(m)
	st.s.Default(m)
	setObjectFields(obj, m)
}

// DefaultStatus prunes and defaults an object written through /status,
// as kube-apiserver's decoder does to the body of any write: a status
// that leaves out a required field with a default gets the default.
func (st *schemaStrategy) DefaultStatus(obj *api.Object) { st.Default(obj) }

// ValidateCreate validates a new object against the schema.
func (st *schemaStrategy) ValidateCreate(obj *api.Object) field.ErrorList {
	m, err := objectMap(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return st.s.Validate(m, nil)
}

// ValidateUpdate validates a changed object against the schema, with the
// old object for transition rules and ratcheting.
func (st *schemaStrategy) ValidateUpdate(obj, old *api.Object) field.ErrorList {
	m, err := objectMap(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	o, err := objectMap(old)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return st.s.Validate(m, o)
}

// BumpsGeneration follows kube-apiserver for custom resources: with a
// /status subresource, a change outside metadata and status moves
// generation; without one, any change outside metadata does.
func (st *schemaStrategy) BumpsGeneration(obj, old *api.Object) bool {
	for k := range obj.Fields {
		if (st.status && k == "status") || api.FieldEqual(obj, old, k) {
			continue
		}
		return true
	}
	for k := range old.Fields {
		if _, ok := obj.Fields[k]; !ok && !(st.status && k == "status") {
			return true
		}
	}
	return false
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
