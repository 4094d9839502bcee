package builtin

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/miniapi/miniapi/api"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	sigsjson "sigs.k8s.io/json"
)

// The Store's objects and kube's Go objects hold the same metadata in
// two Go types and the rest as JSON in one and as Go values in the
// other. A write of a built-in kind crosses between them several times
// (decode, kube's rules, encode); going through a whole-object JSON
// round trip each time cost more than kube's rules themselves. So
// metadata is copied field by field, each other top-level field is
// encoded or decoded on its own, and the Go form a kind decoded stays
// with the Store's object (api.Object.SetDecoded) until its fields
// change.

// fieldPlan is one top-level JSON field of a kind's Go type other than
// apiVersion, kind and metadata.
type fieldPlan struct {
	index     int
	name      string
	omitEmpty bool
	omitZero  bool
}

// typeFields lists the top-level fields of a kind's Go struct, or nil
// (ok false) when the type has a shape the field-wise codec does not
// handle and must take the whole-object JSON round trip.
type typeFields struct {
	fields []fieldPlan
	meta   int // index of ObjectMeta
	ok     bool
}

var fieldPlans sync.Map // reflect.Type → *typeFields

// planOf returns the field plan of t, a pointer to a kind's Go struct.
func planOf(t reflect.Type) *typeFields {
	if p, ok := fieldPlans.Load(t); ok {
		return p.(*typeFields)
	}
	p := &typeFields{meta: -1, ok: true}
	st := t.Elem()
	for i := range st.NumField() {
		f := st.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		switch {
		case f.Anonymous && f.Type == reflect.TypeFor[metav1.TypeMeta]():
			continue
		case f.Type == reflect.TypeFor[metav1.ObjectMeta]() && name == "metadata":
			p.meta = i
			continue
		case !f.IsExported() || name == "-":
			continue
		case f.Anonymous || name == "" || strings.Contains(opts, "string"):
			p.ok = false
		}
		p.fields = append(p.fields, fieldPlan{
			index: i, name: name,
			omitEmpty: strings.Contains(","+opts+",", ",omitempty,"),
			omitZero:  strings.Contains(","+opts+",", ",omitzero,"),
		})
	}
	if p.meta < 0 {
		p.ok = false
	}
	fieldPlans.Store(t, p)
	return p
}

// objectOf returns v, a served-version object, as the Store's object,
// with v's apiVersion and kind, and remembers v as its decoded form.
// v must not be changed afterwards.
func objectOf(v runtime.Object) (*api.Object, error) {
	rv := reflect.ValueOf(v)
	p := planOf(rv.Type())
	if !p.ok {
		return slowObjectOf(v)
	}
	s := rv.Elem()
	gvk := v.GetObjectKind().GroupVersionKind()
	out := &api.Object{Fields: make(map[string]json.RawMessage, len(p.fields))}
	out.APIVersion, out.Kind = gvk.GroupVersion().String(), gvk.Kind
	if gvk.Empty() {
		out.APIVersion = ""
	}
	out.Metadata = api.FromMetaV1(s.Field(p.meta).Addr().Interface().(*metav1.ObjectMeta))
	for _, f := range p.fields {
		fv := s.Field(f.index)
		if (f.omitEmpty && isEmptyValue(fv)) || (f.omitZero && fv.IsZero()) {
			continue
		}
		data, err := json.Marshal(fv.Addr().Interface())
		if err != nil {
			return nil, fmt.Errorf("builtin: encode %s: %w", f.name, err)
		}
		out.Fields[f.name] = data
	}
	out.SetDecoded(v)
	return out, nil
}

// slowObjectOf is objectOf through a whole-object JSON round trip.
func slowObjectOf(v runtime.Object) (*api.Object, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out api.Object
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// isEmptyValue is encoding/json's omitempty test.
func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// decodeInto decodes the Store's object into out, an empty object of the
// kind's served Go type, taking the object's remembered Go form when it
// is still current.
func decodeInto(obj *api.Object, out runtime.Object) (runtime.Object, error) {
	if d, ok := obj.TakeDecoded().(runtime.Object); ok && reflect.TypeOf(d) == reflect.TypeOf(out) {
		out = d
	} else {
		p := planOf(reflect.TypeOf(out))
		if !p.ok {
			data, err := json.Marshal(obj)
			if err != nil {
				return nil, err
			}
			if err := sigsjson.UnmarshalCaseSensitivePreserveInts(data, out); err != nil {
				return nil, err
			}
			return out, nil
		}
		s := reflect.ValueOf(out).Elem()
		for _, f := range p.fields {
			raw, ok := obj.Fields[f.name]
			if !ok || string(raw) == "null" {
				continue
			}
			if err := sigsjson.UnmarshalCaseSensitivePreserveInts(raw, s.Field(f.index).Addr().Interface()); err != nil {
				return nil, fmt.Errorf("%s: %w", f.name, err)
			}
		}
	}
	p := planOf(reflect.TypeOf(out))
	meta := reflect.ValueOf(out).Elem().Field(p.meta).Addr().Interface().(*metav1.ObjectMeta)
	*meta = api.ToMetaV1(&obj.Metadata)
	out.GetObjectKind().SetGroupVersionKind(apiGVK(obj))
	return out, nil
}

// apiGVK is the Store object's apiVersion and kind as a GVK.
func apiGVK(obj *api.Object) schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(obj.APIVersion, obj.Kind)
}
