package schema

import (
	"fmt"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// widgetSchema exercises every keyword Validate enforces.
const widgetSchema = `{"type":"object","properties":{"spec":{"type":"object","required":["name"],"properties":{
	"replicas":{"type":"integer","minimum":1,"maximum":3},
	"ex":{"type":"integer","minimum":1,"maximum":3,"exclusiveMinimum":true,"exclusiveMaximum":true},
	"mult":{"type":"integer","multipleOf":4},
	"color":{"type":"string","enum":["red","blue"]},
	"name":{"type":"string","pattern":"^[a-z]+$","minLength":2,"maxLength":4},
	"ip":{"type":"string","format":"ipv4"},
	"uid":{"type":"string","format":"uuid"},
	"dur":{"type":"string","format":"duration"},
	"dt":{"type":"string","format":"date-time"},
	"tags":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":2},
	"set":{"type":"array","items":{"type":"string"},"x-kubernetes-list-type":"set"},
	"ports":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["port"],
		"items":{"type":"object","required":["port"],"properties":{"port":{"type":"integer"},"name":{"type":"string"}}}},
	"labels":{"type":"object","additionalProperties":{"type":"string"},"minProperties":1,"maxProperties":2},
	"ios":{"x-kubernetes-int-or-string":true},
	"n":{"type":"string","nullable":true},
	"nn":{"type":"string"},
	"emb":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true},
	"free":{"type":"object","x-kubernetes-preserve-unknown-fields":true},
	"atomic":{"type":"object","x-kubernetes-map-type":"atomic","properties":{"a":{"type":"string"}}}
	}}}}`

func decode(t testing.TB, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return m
}

func messages(errs field.ErrorList) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

// celSkipped is the error kube-apiserver adds when an object's shape is
// too wrong for CEL rules to run; the schema has none, but the error is
// still added, as kube's strategy adds it only when a CEL validator
// exists, so it must not appear here.
// widget is the resource the test schemas are validated as.
var widget = Resource{Group: "example.com", Version: "v1", Kind: "Widget", Namespaced: true}

// validate runs kube's validation of the main resource (Rules.Validate)
// on obj, given the apiVersion, kind and metadata a stored widget has
// when it has none; an update when old is not nil.
func validate(s *Schema, obj, old map[string]any) field.ErrorList {
	complete := func(m map[string]any) map[string]any {
		if m == nil {
			return nil
		}
		if _, ok := m["apiVersion"]; !ok {
			m["apiVersion"] = "example.com/v1"
		}
		if _, ok := m["kind"]; !ok {
			m["kind"] = "Widget"
		}
		if _, ok := m["metadata"]; !ok {
			m["metadata"] = map[string]any{"name": "w", "namespace": "default", "uid": "u", "resourceVersion": "1",
				"creationTimestamp": "2026-01-01T00:00:00Z", "generation": int64(1)}
		}
		return m
	}
	return s.Rules(widget).Validate(complete(obj), complete(old))
}

const celSkipped = "<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"

func TestValidateKeywords(t *testing.T) {
	s, err := Compile([]byte(widgetSchema))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Structural(); err != nil {
		t.Fatalf("Structural() = %v", err)
	}
	if errs := s.ValidateStructural(field.NewPath("s")); len(errs) > 0 {
		t.Fatalf("ValidateStructural: %v", errs)
	}
	for _, tc := range []struct {
		name, obj string
		want      []string
	}{
		{"valid", `{"spec":{"name":"ab","replicas":2,"ios":"10%","n":null,"set":["a","b"],"ports":[{"port":1},{"port":2}],
			"emb":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{}},"free":{"x":{"y":1}}}}`, nil},
		{"maximum", `{"spec":{"name":"ab","replicas":5}}`,
			[]string{"spec.replicas: Invalid value: 5: spec.replicas in body should be less than or equal to 3"}},
		{"minimum", `{"spec":{"name":"ab","replicas":0}}`,
			[]string{"spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1"}},
		{"exclusiveMaximum", `{"spec":{"name":"ab","ex":3}}`,
			[]string{"spec.ex: Invalid value: 3: spec.ex in body should be less than 3"}},
		{"exclusiveMinimum", `{"spec":{"name":"ab","ex":1}}`,
			[]string{"spec.ex: Invalid value: 1: spec.ex in body should be greater than 1"}},
		{"multipleOf", `{"spec":{"name":"ab","mult":6}}`,
			[]string{"spec.mult: Invalid value: 6: spec.mult in body should be a multiple of 4"}},
		{"enum", `{"spec":{"name":"ab","color":"pink"}}`,
			[]string{`spec.color: Unsupported value: "pink": supported values: "red", "blue"`}},
		{"required", `{"spec":{}}`, []string{"spec.name: Required value"}},
		{"pattern", `{"spec":{"name":"ABC"}}`,
			[]string{`spec.name: Invalid value: "ABC": spec.name in body should match '^[a-z]+$'`}},
		{"minLength", `{"spec":{"name":"a"}}`,
			[]string{`spec.name: Invalid value: "a": spec.name in body should be at least 2 chars long`}},
		{"maxLength", `{"spec":{"name":"abcdef"}}`, []string{"spec.name: Too long: may not be more than 4 bytes"}},
		{"format ipv4", `{"spec":{"name":"ab","ip":"1.2.3"}}`,
			[]string{`spec.ip: Invalid value: "1.2.3": spec.ip in body must be of type ipv4: "1.2.3"`}},
		{"format uuid", `{"spec":{"name":"ab","uid":"x"}}`,
			[]string{`spec.uid: Invalid value: "x": spec.uid in body must be of type uuid: "x"`}},
		{"format duration", `{"spec":{"name":"ab","dur":"x"}}`,
			[]string{`spec.dur: Invalid value: "x": spec.dur in body must be of type duration: "x"`}},
		{"format date-time", `{"spec":{"name":"ab","dt":"x"}}`,
			[]string{`spec.dt: Invalid value: "x": spec.dt in body must be of type date-time: "x"`}},
		{"minItems", `{"spec":{"name":"ab","tags":[]}}`,
			[]string{"spec.tags: Invalid value: 0: spec.tags in body should have at least 1 items"}},
		{"maxItems", `{"spec":{"name":"ab","tags":["a","b","c"]}}`, []string{"spec.tags: Too many: 3: must have at most 2 items"}},
		{"list-type set", `{"spec":{"name":"ab","set":["a","a"]}}`, []string{`spec.set[1]: Duplicate value: "a"`}},
		{"list-type map", `{"spec":{"name":"ab","ports":[{"port":1},{"port":1,"name":"x"}]}}`,
			[]string{`spec.ports[1]: Duplicate value: {"port":1}`}},
		{"minProperties", `{"spec":{"name":"ab","labels":{}}}`,
			[]string{"spec.labels: Invalid value: 0: spec.labels in body should have at least 1 properties"}},
		{"maxProperties", `{"spec":{"name":"ab","labels":{"a":"1","b":"2","c":"3"}}}`,
			[]string{"spec.labels: Too many: 3: must have at most 2 items"}},
		{"additionalProperties type", `{"spec":{"name":"ab","labels":{"a":1}}}`,
			[]string{`spec.labels.a: Invalid value: "integer": spec.labels.a in body must be of type string: "integer"`}},
		{"int-or-string", `{"spec":{"name":"ab","ios":true}}`,
			[]string{`spec.ios: Invalid value: "boolean": spec.ios in body must be of type integer,string: "boolean"`}},
		{"not nullable", `{"spec":{"name":"ab","nn":null}}`,
			[]string{`spec.nn: Invalid value: "null": spec.nn in body must be of type string: "null"`}},
		{"type", `{"spec":{"name":"ab","replicas":"x"}}`,
			[]string{`spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`}},
		{"type object", `{"spec":"x"}`,
			[]string{`spec: Invalid value: "string": spec in body must be of type object: "string"`}},
		{"embedded resource", `{"spec":{"name":"ab","emb":{}}}`,
			[]string{"spec.emb.apiVersion: Required value", "spec.emb.kind: Required value"}},
		{"embedded metadata", `{"spec":{"name":"ab","emb":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a/b"}}}}`,
			[]string{`spec.emb.metadata.name: Invalid value: "a/b": may not contain '/'`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := messages(validate(s, decode(t, tc.obj), nil))
			if !slices.Equal(got, tc.want) {
				t.Errorf("Validate:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// ratcheting: on update, an invalid value that did not change is kept,
// as kube-apiserver keeps it since 1.30.
func TestValidateUpdateRatchets(t *testing.T) {
	s := MustCompile([]byte(widgetSchema))
	old := decode(t, `{"spec":{"name":"ab","replicas":7}}`)
	if got := messages(validate(s, decode(t, `{"spec":{"name":"abc","replicas":7}}`), old)); len(got) != 0 {
		t.Errorf("unchanged invalid field: %q, want none", got)
	}
	want := []string{"spec.replicas: Invalid value: 8: spec.replicas in body should be less than or equal to 3"}
	if got := messages(validate(s, decode(t, `{"spec":{"name":"ab","replicas":8}}`), old)); !slices.Equal(got, want) {
		t.Errorf("changed invalid field: %q, want %q", got, want)
	}
}

const celSchema = `{"type":"object","properties":{"spec":{"type":"object",
	"x-kubernetes-validations":[
		{"rule":"self.min <= self.max","messageExpression":"'min ' + string(self.min) + ' exceeds max ' + string(self.max)","reason":"FieldValueForbidden","fieldPath":".min"},
		{"rule":"self.mode == oldSelf.mode","message":"mode is immutable"},
		{"rule":"self.mode != 'bad'"}
	],
	"properties":{"min":{"type":"integer","maximum":100},"max":{"type":"integer"},"mode":{"type":"string","maxLength":10},
		"words":{"type":"array","maxItems":4000,"items":{"type":"string","maxLength":8},
			"x-kubernetes-validations":[{"rule":"self.all(x, self.exists(y, x == y))"}]}
	}}}}`

func TestValidateCEL(t *testing.T) {
	s := MustCompile([]byte(celSchema))
	for _, tc := range []struct {
		name, obj, old string
		want           []string
	}{
		{"valid", `{"spec":{"min":1,"max":3,"mode":"a"}}`, "", nil},
		{"messageExpression, reason and fieldPath", `{"spec":{"min":5,"max":3,"mode":"a"}}`, "",
			[]string{"spec.min: Forbidden: min 5 exceeds max 3"}},
		{"default message", `{"spec":{"min":1,"max":3,"mode":"bad"}}`, "",
			[]string{`spec: Invalid value: failed rule: self.mode != 'bad'`}},
		{"transition rule skipped on create", `{"spec":{"min":1,"max":3,"mode":"b"}}`, "", nil},
		{"transition rule", `{"spec":{"min":1,"max":3,"mode":"b"}}`, `{"spec":{"min":1,"max":3,"mode":"a"}}`,
			[]string{"spec: Invalid value: mode is immutable"}},
		{"transition rule unchanged", `{"spec":{"min":1,"max":4,"mode":"a"}}`, `{"spec":{"min":1,"max":3,"mode":"a"}}`, nil},
		{"blocked by schema errors", `{"spec":{"min":1,"max":3,"mode":"far too long a mode"}}`, "",
			[]string{"spec.mode: Too long: may not be more than 10 bytes", celSkipped}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var old map[string]any
			if tc.old != "" {
				old = decode(t, tc.old)
			}
			got := messages(validate(s, decode(t, tc.obj), old))
			if !slices.Equal(got, tc.want) {
				t.Errorf("Validate:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// The words rule is quadratic: over the per-call runtime limit for a
// large list, which kube-apiserver reports on the field.
func TestValidateCELRuntimeCost(t *testing.T) {
	s := MustCompile([]byte(celSchema))
	words := make([]any, 4000)
	for i := range words {
		words[i] = fmt.Sprintf("w%d", i)
	}
	obj := decode(t, `{"spec":{"min":1,"max":3,"mode":"a"}}`)
	obj["spec"].(map[string]any)["words"] = words
	errs := validate(s, obj, nil)
	want := `spec.words: Invalid value: "array": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: self.all(x, self.exists(y, x == y))`
	if got := messages(errs); !slices.Equal(got, []string{want}) {
		t.Errorf("Validate:\n got %q\nwant %q", got, want)
	}
}

func BenchmarkValidate(b *testing.B) {
	s := MustCompile([]byte(widgetSchema)).Rules(widget)
	obj := decode(b, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default"},
		"spec":{"name":"ab","replicas":2,"ios":"10%","color":"red","ip":"10.0.0.1","tags":["a"],"set":["a","b"],
		"ports":[{"port":1,"name":"a"},{"port":2}],"labels":{"a":"b"},"emb":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}}}`)
	cel := MustCompile([]byte(celSchema)).Rules(widget)
	celObj := decode(b, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default","resourceVersion":"1"},
		"spec":{"min":1,"max":3,"mode":"a","words":["a","b","c"]}}`)
	b.Run("keywords", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if errs := s.Validate(obj, nil); len(errs) > 0 {
				b.Fatal(errs)
			}
		}
	})
	b.Run("cel-update", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if errs := cel.Validate(celObj, celObj); len(errs) > 0 {
				b.Fatal(errs)
			}
		}
	})
}
