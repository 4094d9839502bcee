package apiextensions

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// compileSchemaErrors checks a version's openAPIV3Schema beyond being a
// JSON object. The full structural check belongs to the schema package;
// until the CRD strategy calls it, the root is checked as kube-apiserver
// checks it first: it must declare type object.
func compileSchemaErrors(raw json.RawMessage, p *field.Path) field.ErrorList {
	var root struct {
		Type *string `json:"type"`
	}
	if err := json.Unmarshal(raw, &root); err != nil {
		return field.ErrorList{field.Invalid(p, "", "must be a JSON object")}
	}
	switch {
	case root.Type == nil || *root.Type == "":
		return field.ErrorList{field.Required(p.Child("type"), "must not be empty at the root")}
	case *root.Type != "object":
		return field.ErrorList{field.Invalid(p.Child("type"), *root.Type, "must be object at the root")}
	}
	return nil
}
