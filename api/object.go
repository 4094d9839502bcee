package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
)

// Object is any Kubernetes object in the shape miniapi works on: the type
// and metadata decoded, every other top-level field (spec, data, status, ...)
// kept as compact raw JSON so that values round-trip exactly.
type Object struct {
	APIVersion string
	Kind       string
	Metadata   ObjectMeta
	// Fields holds the top-level fields other than apiVersion, kind and
	// metadata, by name.
	Fields map[string]json.RawMessage

	// decoded is a strategy's Go form of Fields (SetDecoded).
	decoded *decodedFields
}

// decodedFields is a decoded form of an Object's Fields with the values
// it was decoded from.
type decodedFields struct {
	fields map[string]json.RawMessage
	value  any
}

// SetDecoded records v as the decoded form of o's Fields as they are
// now, so the strategy that decoded them can take it back (TakeDecoded)
// instead of decoding the same bytes again.
func (o *Object) SetDecoded(v any) {
	o.decoded = &decodedFields{fields: maps.Clone(o.Fields), value: v}
}

// TakeDecoded returns what SetDecoded recorded and forgets it, or nil
// when o's Fields have changed since: a field added, removed or given
// other bytes (values are replaced, never written in place) makes it
// stale. The caller owns the value it gets.
func (o *Object) TakeDecoded() any {
	d := o.decoded
	o.decoded = nil
	if d == nil || len(d.fields) != len(o.Fields) {
		return nil
	}
	for k, v := range o.Fields {
		w, ok := d.fields[k]
		if !ok || len(v) != len(w) || (len(v) > 0 && &v[0] != &w[0]) {
			return nil
		}
	}
	return d.value
}

// MarshalJSON writes apiVersion, kind and metadata first, then the other
// fields in name order, so equal objects encode to equal bytes.
func (o *Object) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(`{"apiVersion":`)
	writeJSONString(&buf, o.APIVersion)
	buf.WriteString(`,"kind":`)
	writeJSONString(&buf, o.Kind)
	buf.WriteString(`,"metadata":`)
	meta, err := json.Marshal(&o.Metadata)
	if err != nil {
		return nil, err
	}
	buf.Write(meta)
	for _, k := range slices.Sorted(maps.Keys(o.Fields)) {
		buf.WriteByte(',')
		writeJSONString(&buf, k)
		buf.WriteByte(':')
		v := o.Fields[k]
		if len(v) == 0 {
			v = json.RawMessage("null")
		}
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// UnmarshalJSON decodes a JSON object. Type errors in apiVersion, kind or
// metadata are reported with the offending field's path.
func (o *Object) UnmarshalJSON(data []byte) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field == "" {
			return fmt.Errorf("an object must be a JSON object, got %s", jsonKind(data))
		}
		return err
	}
	if top == nil {
		return fmt.Errorf("an object must be a JSON object, not null")
	}
	*o = Object{Fields: make(map[string]json.RawMessage, len(top))}
	for k, v := range top {
		switch k {
		case "apiVersion":
			if err := decodeString(v, &o.APIVersion, "apiVersion"); err != nil {
				return err
			}
		case "kind":
			if err := decodeString(v, &o.Kind, "kind"); err != nil {
				return err
			}
		case "metadata":
			if string(v) == "null" {
				continue
			}
			if err := json.Unmarshal(v, &o.Metadata); err != nil {
				var te *json.UnmarshalTypeError
				if errors.As(err, &te) {
					// Report the path from the object's root.
					path := "metadata"
					if te.Field != "" {
						path += "." + te.Field
					}
					return fmt.Errorf("%s must be %s, got %s", path, jsonTypeName(te.Type.Kind().String()), te.Value)
				}
				return fmt.Errorf("metadata: %w", err)
			}
		default:
			var c bytes.Buffer
			if err := json.Compact(&c, v); err != nil {
				return err
			}
			o.Fields[k] = c.Bytes()
		}
	}
	return nil
}

// DeepCopy returns a copy of o that shares no mutable state with it. It
// copies structurally; a JSON round trip cost most of an update's CPU.
func (o *Object) DeepCopy() *Object {
	out := &Object{APIVersion: o.APIVersion, Kind: o.Kind, Metadata: *o.Metadata.DeepCopy()}
	if o.Fields != nil {
		out.Fields = make(map[string]json.RawMessage, len(o.Fields))
		for k, v := range o.Fields {
			out.Fields[k] = bytes.Clone(v)
		}
	}
	return out
}

// DeepCopy returns a copy of m that shares no mutable state with it.
func (m *ObjectMeta) DeepCopy() *ObjectMeta {
	out := *m
	out.DeletionTimestamp = clonePtr(m.DeletionTimestamp)
	out.DeletionGracePeriodSeconds = clonePtr(m.DeletionGracePeriodSeconds)
	out.Labels = maps.Clone(m.Labels)
	out.Annotations = maps.Clone(m.Annotations)
	out.Finalizers = slices.Clone(m.Finalizers)
	if m.OwnerReferences != nil {
		out.OwnerReferences = make([]OwnerReference, len(m.OwnerReferences))
		for i, r := range m.OwnerReferences {
			r.Controller = clonePtr(r.Controller)
			r.BlockOwnerDeletion = clonePtr(r.BlockOwnerDeletion)
			out.OwnerReferences[i] = r
		}
	}
	if m.ManagedFields != nil {
		out.ManagedFields = make([]ManagedFieldsEntry, len(m.ManagedFields))
		for i, f := range m.ManagedFields {
			f.Time = clonePtr(f.Time)
			f.FieldsV1 = bytes.Clone(f.FieldsV1)
			out.ManagedFields[i] = f
		}
	}
	return &out
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// FieldEqual reports whether the top-level field name holds the same JSON
// value in a and b, ignoring object key order and whitespace.
func FieldEqual(a, b *Object, name string) bool {
	return JSONEqual(a.Fields[name], b.Fields[name])
}

// JSONEqual reports whether two JSON documents are equal ignoring object
// key order and whitespace. Numbers compare by their text, so 1 and 1.0
// differ, as they do once stored. An empty document equals null.
func JSONEqual(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	va, erra := decodeAny(a)
	vb, errb := decodeAny(b)
	if erra != nil || errb != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

func decodeAny(b json.RawMessage) (any, error) {
	if len(b) == 0 {
		return nil, nil
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

func decodeString(v json.RawMessage, dst *string, field string) error {
	if string(v) == "null" {
		return nil
	}
	if err := json.Unmarshal(v, dst); err != nil {
		return fmt.Errorf("%s must be a string, got %s", field, jsonKind(v))
	}
	return nil
}

func jsonKind(v json.RawMessage) string {
	switch b := bytes.TrimSpace(v); {
	case len(b) == 0:
		return "nothing"
	case b[0] == '{':
		return "an object"
	case b[0] == '[':
		return "an array"
	case b[0] == '"':
		return "a string"
	case b[0] == 't' || b[0] == 'f':
		return "a boolean"
	case b[0] == 'n':
		return "null"
	default:
		return "a number"
	}
}

// jsonTypeName names a Go kind the way a JSON user thinks of it.
func jsonTypeName(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "map", "struct":
		return "an object"
	case "slice", "array":
		return "an array"
	case "bool":
		return "a boolean"
	case "ptr":
		return "an object"
	default:
		return "a number"
	}
}

func writeJSONString(buf *bytes.Buffer, s string) {
	b, _ := json.Marshal(s) // encoding a string cannot fail
	buf.Write(b)
}
