package apiextensions

import (
	"encoding/json"

	"github.com/miniapi/miniapi/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// compileSchemaErrors checks a version's openAPIV3Schema as
// kube-apiserver does before it accepts a CRD: the keywords a CRD schema
// may use, the structural-schema rules, defaults and CEL rules (the
// schema package's ValidateStructural), with paths under p.
func compileSchemaErrors(raw json.RawMessage, p *field.Path) field.ErrorList {
	s, err := schema.Compile(raw)
	if err != nil {
		return field.ErrorList{field.Invalid(p, "", err.Error())}
	}
	return s.ValidateStructural(p)
}
