package registry

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestBuiltinSchemasMatchGoTypes checks each built-in schema against the
// k8s.io/api Go type of its kind, field by field: the same JSON names, the
// matching OpenAPI types, a description on every field, and nothing the Go
// type lacks (that would let field validation accept unknown fields).
func TestBuiltinSchemasMatchGoTypes(t *testing.T) {
	goTypes := map[string]any{
		"Namespace": corev1.Namespace{},
		"ConfigMap": corev1.ConfigMap{},
		"Secret":    corev1.Secret{},
		"Event":     corev1.Event{},
		"Lease":     coordinationv1.Lease{},
	}
	for _, typ := range BuiltinTypes() {
		t.Run(typ.Kind, func(t *testing.T) {
			goType, ok := goTypes[typ.Kind]
			if !ok {
				t.Fatalf("no Go type to compare %s with", typ.Kind)
			}
			if typ.Description == "" {
				t.Error("no description")
			}
			var s map[string]any
			if err := json.Unmarshal(typ.Schema, &s); err != nil {
				t.Fatalf("schema is not JSON: %v", err)
			}
			if s["description"] != typ.Description {
				t.Errorf("schema description %q differs from the type's", s["description"])
			}
			compareSchema(t, typ.Kind, s, reflect.TypeOf(goType))
		})
	}
}

var (
	timeType      = reflect.TypeOf(metav1.Time{})
	microTimeType = reflect.TypeOf(metav1.MicroTime{})
	objectMeta    = reflect.TypeOf(metav1.ObjectMeta{})
)

func compareSchema(t *testing.T, path string, s map[string]any, typ reflect.Type) {
	t.Helper()
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if d, _ := s["description"].(string); d == "" && !strings.HasSuffix(path, "[]") {
		t.Errorf("%s: no description", path)
	}
	want := func(ty, format string) {
		t.Helper()
		if s["type"] != ty || (format != "" && s["format"] != format) {
			t.Errorf("%s: type %v format %v, want %s %s", path, s["type"], s["format"], ty, format)
		}
	}
	switch {
	case typ == timeType || typ == microTimeType:
		want("string", "date-time")
	case typ == objectMeta:
		want("object", "") // the OpenAPI documents substitute ObjectMeta
	case typ.Kind() == reflect.Struct:
		want("object", "")
		props, _ := s["properties"].(map[string]any)
		fields := jsonFields(typ)
		for name, ft := range fields {
			sub, ok := props[name].(map[string]any)
			if !ok {
				t.Errorf("%s.%s: missing from the schema", path, name)
				continue
			}
			compareSchema(t, path+"."+name, sub, ft)
		}
		for name := range props {
			if _, ok := fields[name]; !ok {
				t.Errorf("%s.%s: in the schema but not in the Go type", path, name)
			}
		}
	case typ.Kind() == reflect.Slice && typ.Elem().Kind() == reflect.Uint8:
		want("string", "byte")
	case typ.Kind() == reflect.Slice:
		want("array", "")
		if lt, _ := s["x-kubernetes-list-type"].(string); !slices.Contains([]string{"atomic", "set", "map"}, lt) {
			t.Errorf("%s: list type %q", path, lt)
		}
		items, _ := s["items"].(map[string]any)
		compareSchema(t, path+"[]", items, typ.Elem())
	case typ.Kind() == reflect.Map:
		want("object", "")
		add, _ := s["additionalProperties"].(map[string]any)
		compareSchema(t, path+"[]", add, typ.Elem())
	case typ.Kind() == reflect.String:
		want("string", "")
	case typ.Kind() == reflect.Int32:
		want("integer", "int32")
	case typ.Kind() == reflect.Bool:
		want("boolean", "")
	default:
		t.Errorf("%s: Go kind %s not covered by this test", path, typ.Kind())
	}
}

// jsonFields returns a struct's JSON field names and types, flattening
// inlined embedded structs (TypeMeta).
func jsonFields(typ reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for f := range typ.Fields() {
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if tag == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			for k, v := range jsonFields(f.Type) {
				out[k] = v
			}
			continue
		}
		out[name] = f.Type
	}
	return out
}
