package schema

import (
	"encoding/json"
	"fmt"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
)

// Schema is a compiled OpenAPI v3 schema of a whole object. It is
// immutable and safe for concurrent use.
type Schema struct {
	// props is the schema as apiextensions' internal type, the input of
	// every algorithm below.
	props *apiextensions.JSONSchemaProps
	// structural is the structural form; nil when the schema is not
	// structural (structErr says why). Defaulting, pruning, list types,
	// embedded resources and CEL need it; such a schema is refused by
	// ValidateStructural, and Rules then check only the plain OpenAPI
	// keywords.
	structural *structuralschema.Structural
	structErr  error
	// validator checks the OpenAPI keywords (go-openapi semantics with
	// kube's formats and messages), for kube's strategy (Rules).
	validator validation.SchemaValidator
}

// Compile parses an OpenAPI v3 schema (JSON, as a CRD version's
// schema.openAPIV3Schema) once for repeated use. It fails only when the
// document is not a JSON schema object or cannot be turned into a
// validator; a schema that breaks the structural rules compiles, and
// ValidateStructural reports what is wrong with it.
func Compile(openAPIV3Schema []byte) (*Schema, error) {
	var v1 apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal(openAPIV3Schema, &v1); err != nil {
		return nil, fmt.Errorf("schema: decode: %w", err)
	}
	props := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&v1, props, nil); err != nil {
		return nil, fmt.Errorf("schema: convert: %w", err)
	}
	s := &Schema{props: props}
	validator, _, err := validation.NewSchemaValidator(props)
	if err != nil {
		return nil, fmt.Errorf("schema: build validator: %w", err)
	}
	s.validator = validator
	s.structural, s.structErr = structuralschema.NewStructural(props)
	if s.structErr == nil {
		// kube-apiserver never serves a non-structural schema, so the
		// structural algorithms need not cope with one.
		if errs := structuralschema.ValidateStructural(nil, s.structural); len(errs) > 0 {
			s.structErr = fmt.Errorf("schema: not structural: %w", errs.ToAggregate())
		}
	}
	if s.structErr != nil {
		s.structural = nil
	}
	return s, nil
}

// MustCompile is Compile for schemas known to be good (the built-in
// ones); it panics on error.
func MustCompile(openAPIV3Schema []byte) *Schema {
	s, err := Compile(openAPIV3Schema)
	if err != nil {
		panic(err)
	}
	return s
}

// Structural reports whether the schema is structural, which
// kube-apiserver requires of every CRD schema; the error says why not.
func (s *Schema) Structural() error { return s.structErr }
