package apiextensions

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/miniapi/miniapi/schema"
	k8sapiextensions "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// compileSchemaErrors checks a version's openAPIV3Schema as
// kube-apiserver does before it accepts a CRD: with the status
// subresource enabled, what the root may hold; the keywords a CRD schema
// may use, the structural-schema rules, defaults and CEL rules (the
// schema package's ValidateStructural), with paths under p.
func compileSchemaErrors(raw json.RawMessage, p *field.Path, statusEnabled bool) field.ErrorList {
	var errs field.ErrorList
	if statusEnabled {
		errs = append(errs, statusRootErrors(raw, p)...)
	}
	s, err := schema.Compile(raw)
	if err != nil {
		return append(errs, field.Invalid(p, "", err.Error()))
	}
	return append(errs, s.ValidateStructural(p)...)
}

// allowedAtStatusRoot are the fields of kube's internal JSONSchemaProps a
// root schema may set when the status subresource is enabled: those that
// stay true of the object when status is validated alone as
// properties["status"]. The names, and their order in the message, are
// kube-apiserver's.
var allowedAtStatusRoot = []string{"Description", "Type", "Format", "Title", "Maximum", "ExclusiveMaximum", "Minimum", "ExclusiveMinimum", "MaxLength", "MinLength", "Pattern", "MaxItems", "MinItems", "UniqueItems", "MultipleOf", "Required", "Items", "Properties", "ExternalDocs", "Example", "XPreserveUnknownFields", "XValidations"}

// statusRootErrors reports the first root keyword kube-apiserver refuses
// when the status subresource is enabled: a type other than object, or a
// field outside allowedAtStatusRoot. As kube, it walks the fields of the
// internal JSONSchemaProps in declaration order and stops at the first
// offender; the bad value of the second error is the whole root schema in
// that internal form, rendered as kube renders it.
func statusRootErrors(raw json.RawMessage, p *field.Path) field.ErrorList {
	var v1 apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal(raw, &v1); err != nil {
		return nil // reported by compileSchemaErrors
	}
	var props k8sapiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&v1, &props, nil); err != nil {
		return nil
	}
	v := reflect.ValueOf(props)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			continue
		}
		name := v.Type().Field(i).Name
		if name == "Type" {
			if props.Type != "object" {
				return field.ErrorList{field.Invalid(p.Child("type"), props.Type, `only "object" is allowed as the type at the root of the schema if the status subresource is enabled`)}
			}
			continue
		}
		if !slices.Contains(allowedAtStatusRoot, name) {
			return field.ErrorList{field.Invalid(p, props, fmt.Sprintf("only %v fields are allowed at the root of the schema if the status subresource is enabled", allowedAtStatusRoot))}
		}
	}
	return nil
}
