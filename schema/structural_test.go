package schema

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestValidateStructural(t *testing.T) {
	base := field.NewPath("spec", "versions").Index(0).Child("schema", "openAPIV3Schema")
	const p = "spec.versions[0].schema.openAPIV3Schema"
	for _, tc := range []struct {
		name, schema string
		want         []string
	}{
		{"valid", widgetSchema, nil},
		{"valid rules", `{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-validations":[
			{"rule":"self.min <= self.max","messageExpression":"self.min > 100 ? 'min is far too large' : 'min exceeds max'","fieldPath":".min","reason":"FieldValueForbidden"},
			{"rule":"self.mode == oldSelf.mode","message":"mode is immutable"}],
			"properties":{"min":{"type":"integer"},"max":{"type":"integer"},"mode":{"type":"string","maxLength":10}}}}}`, nil},
		{"missing type", `{"type":"object","properties":{"spec":{"properties":{"a":{"type":"string"}}}}}`,
			[]string{p + ".properties[spec].type: Required value: must not be empty for specified object fields"}},
		{"additionalProperties with properties", `{"type":"object","properties":{"spec":{"type":"object",
			"properties":{"a":{"type":"string"}},"additionalProperties":{"type":"string"}}}}`,
			[]string{p + ".properties[spec].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive"}},
		{"$ref", `{"type":"object","properties":{"spec":{"$ref":"#/x"}}}`,
			[]string{p + ".properties[spec].$ref: Forbidden: $ref is not supported"}},
		{"uniqueItems", `{"type":"object","properties":{"spec":{"type":"array","items":{"type":"string"},"uniqueItems":true}}}`,
			[]string{p + ".properties[spec].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic"}},
		{"nullable root", `{"type":"object","nullable":true}`,
			[]string{p + ".nullable: Forbidden: nullable cannot be true at the root"}},
		{"unknown type", `{"type":"object","properties":{"a":{"type":"float"}}}`,
			[]string{p + `.properties[a].type: Unsupported value: "float": supported values: "array", "boolean", "integer", "number", "object", "string"`}},
		{"metadata beyond name", `{"type":"object","properties":{"metadata":{"type":"object","properties":{"labels":{"type":"object"}}}}}`,
			[]string{p + ".properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified"}},
		{"default of the wrong type", `{"type":"object","properties":{"spec":{"type":"object","properties":{"a":{"type":"string","default":5}}}}}`,
			[]string{p + `.properties[spec].properties[a].default: Invalid value: "integer":  in body must be of type string: "integer"`}},
		{"list map key without default", `{"type":"object","properties":{"l":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["k"],
			"items":{"type":"object","properties":{"k":{"type":"string"}}}}}}`,
			[]string{p + ".properties[l].items.properties[k].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"}},
		{"rule does not compile", `{"type":"object","properties":{"spec":{"type":"object",
			"x-kubernetes-validations":[{"rule":"self.nope == 1"}],"properties":{"a":{"type":"string"}}}}}`,
			[]string{p + ".properties[spec].x-kubernetes-validations[0].rule: Invalid value: {\"rule\":\"self.nope == 1\"}: compilation failed: ERROR: <input>:1:5: undefined field 'nope'\n | self.nope == 1\n | ....^"}},
		{"messageExpression not a string", `{"type":"object","properties":{"spec":{"type":"object",
			"x-kubernetes-validations":[{"rule":"self.a == 'x'","messageExpression":"1"}],"properties":{"a":{"type":"string"}}}}}`,
			[]string{p + `.properties[spec].x-kubernetes-validations[0].messageExpression: Invalid value: {"rule":"self.a == 'x'","messageExpression":"1"}: messageExpression must evaluate to a string`}},
		{"rule inside allOf", `{"type":"object","properties":{"spec":{"type":"object","properties":{"a":{"type":"integer"}},
			"allOf":[{"x-kubernetes-validations":[{"rule":"self.a > 0"}]}]}}}`,
			[]string{p + ".properties[spec].allOf[0].x-kubernetes-validations: Forbidden: must be empty to be structural"}},
		{"rule inside not", `{"type":"object","properties":{"spec":{"type":"object","properties":{"a":{"type":"integer"}},
			"not":{"x-kubernetes-validations":[{"rule":"self.a > 0"}]}}}}`,
			[]string{p + ".properties[spec].not.x-kubernetes-validations: Forbidden: must be empty to be structural"}},
		{"oldSelf in atomic list items", `{"type":"object","properties":{"spec":{"type":"object","properties":{"l":{"type":"array","maxItems":10,
			"items":{"type":"object","properties":{"a":{"type":"string","maxLength":10}},"x-kubernetes-validations":[{"rule":"self.a == oldSelf.a"}]}}}}}}`,
			[]string{p + `.properties[spec].properties[l].items.x-kubernetes-validations[0].rule: Invalid value: "self.a == oldSelf.a": oldSelf cannot be used on the uncorrelatable portion of the schema within ` + p + ".properties[spec].properties[l]"}},
		{"oldSelf below a set, named at the highest list", `{"type":"object","properties":{"l":{"type":"array","x-kubernetes-list-type":"set","maxItems":10,
			"items":{"type":"array","x-kubernetes-list-type":"atomic","maxItems":10,"items":{"type":"string","maxLength":10,"x-kubernetes-validations":[{"rule":"self == oldSelf"}]}}}}}`,
			[]string{p + `.properties[l].items.items.x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within ` + p + ".properties[l]"}},
		{"oldSelf in map list items and maps", `{"type":"object","properties":{"l":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["k"],"maxItems":10,
			"items":{"type":"object","required":["k"],"properties":{"k":{"type":"string","maxLength":10},"v":{"type":"object","maxProperties":10,
				"additionalProperties":{"type":"string","maxLength":10,"x-kubernetes-validations":[{"rule":"self == oldSelf"}]}}},
				"x-kubernetes-validations":[{"rule":"self.k == oldSelf.k"}]}}}}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Compile([]byte(tc.schema))
			if err != nil {
				t.Fatal(err)
			}
			if got := messages(s.ValidateStructural(base)); !slices.Equal(got, tc.want) {
				t.Errorf("ValidateStructural:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// An unbounded list makes a nested rule's estimated cost exceed both the
// per-rule and the per-schema limit; maxItems and maxLength bring it under.
func TestValidateStructuralCost(t *testing.T) {
	base := field.NewPath("s")
	unbounded := MustCompile([]byte(`{"type":"object","properties":{"l":{"type":"array","items":{"type":"string"},
		"x-kubernetes-validations":[{"rule":"self.all(x, self.all(y, x != y || x == y))"}]}}}`))
	got := messages(unbounded.ValidateStructural(base))
	want := []string{
		"s.properties[l].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x",
		"s.properties[l].x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
		"s: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x",
	}
	if len(got) != len(want) {
		t.Fatalf("ValidateStructural: %q, want %d errors", got, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("error %d = %q, want prefix %q", i, got[i], want[i])
		}
	}
	bounded := MustCompile([]byte(`{"type":"object","properties":{"l":{"type":"array","maxItems":10,"items":{"type":"string","maxLength":10},
		"x-kubernetes-validations":[{"rule":"self.all(x, self.all(y, x != y || x == y))"}]}}}`))
	if errs := bounded.ValidateStructural(base); len(errs) > 0 {
		t.Errorf("bounded: %v", errs)
	}
}

func TestCompileRejectsNonJSON(t *testing.T) {
	for _, in := range []string{``, `[]`, `{"type":`} {
		if _, err := Compile([]byte(in)); err == nil {
			t.Errorf("Compile(%q) succeeded", in)
		}
	}
}

// A non-structural schema still validates plain keywords but defaults and
// prunes nothing, as kube-apiserver never serves one.
func TestNonStructural(t *testing.T) {
	s := MustCompile([]byte(`{"type":"object","properties":{"spec":{"properties":{"a":{"type":"string","default":"x"}}}}}`))
	if s.Structural() == nil {
		t.Fatal("Structural() = nil for a schema with an untyped object")
	}
	obj := decode(t, `{"spec":{"b":1}}`)
	if paths := s.Prune(obj); paths != nil {
		t.Errorf("Prune = %q", paths)
	}
	s.Default(obj)
	if got := encode(t, obj); got != `{"spec":{"b":1}}` {
		t.Errorf("Default changed the object: %s", got)
	}
	want := []string{`spec.a: Invalid value: "integer": spec.a in body must be of type string: "integer"`}
	if got := messages(validate(s, decode(t, `{"spec":{"a":1}}`), nil)); !slices.Equal(got, want) {
		t.Errorf("Validate = %q, want %q", got, want)
	}
}
