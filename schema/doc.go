// Package schema enforces a structural OpenAPI v3 schema (a CRD's
// openAPIV3Schema) on objects: validation of every keyword Kubernetes
// supports, CEL x-kubernetes-validations rules, defaulting and pruning.
// It is pure: no storage, no HTTP; objects are generic JSON
// (map[string]any as k8s.io/apimachinery/pkg/util/json decodes them:
// integers are int64, other numbers float64).
//
// The algorithms are kube-apiserver's own, from the pure packages of
// k8s.io/apiextensions-apiserver (pkg/apiserver/schema, .../cel,
// .../defaulting, .../pruning, .../objectmeta, .../listtype and
// pkg/apiserver/validation), so field paths, messages and CEL cost limits
// are exactly kube's. This package adapts them to plain JSON in and
// field.ErrorList out; nothing of apiextensions leaks through its API.
//
// Lifecycle: Compile a schema once (it parses, builds the structural
// form, the OpenAPI validator and the CEL programs), then use it from any
// number of goroutines; a *Schema is immutable.
//
//	s, err := schema.Compile(crdVersion.Schema.OpenAPIV3Schema)
//	if err != nil { ... } // not JSON, or not a schema
//	if errs := s.ValidateStructural(field.NewPath("spec", "versions").Index(0).Child("schema", "openAPIV3Schema")); len(errs) > 0 {
//		... // refuse the CRD with 422
//	}
//	pruned := s.Prune(obj) // unknown fields, for fieldValidation Strict/Warn
//	s.Default(obj)
//	if errs := s.Validate(obj, old); len(errs) > 0 {
//		... // api.NewInvalid(gk, name, errs)
//	}
package schema
