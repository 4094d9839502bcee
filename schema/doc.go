// Package schema enforces a structural OpenAPI v3 schema (a CRD's
// openAPIV3Schema) on objects: validation of every keyword Kubernetes
// supports, CEL x-kubernetes-validations rules, defaulting and pruning.
// It is pure: no storage, no HTTP; objects are generic JSON
// (map[string]any as k8s.io/apimachinery/pkg/util/json decodes them:
// integers are int64, other numbers float64).
//
// The algorithms are kube-apiserver's own, from
// k8s.io/apiextensions-apiserver: the schema packages (pkg/apiserver/schema,
// .../defaulting, .../pruning, pkg/apiserver/validation) and, for writes,
// kube's strategy for custom resources (pkg/registry/customresource, run
// by k8s.io/apiserver's rest.BeforeCreate and rest.BeforeUpdate: Rules),
// so field paths, messages and CEL cost limits are exactly kube's. This
// package adapts them to plain JSON in and errors out; nothing of
// apiextensions leaks through its API.
//
// Lifecycle: Compile a schema once (it parses, builds the structural
// form and the OpenAPI validator) and build the Rules of each version
// using it once (they compile the CEL programs), then use both from any
// number of goroutines; a *Schema is immutable.
//
//	s, err := schema.Compile(crdVersion.Schema.OpenAPIV3Schema)
//	if err != nil { ... } // not JSON, or not a schema
//	if errs := s.ValidateStructural(field.NewPath("spec", "versions").Index(0).Child("schema", "openAPIV3Schema")); len(errs) > 0 {
//		... // refuse the CRD with 422
//	}
//	pruned := s.Prune(obj) // unknown fields, for fieldValidation Strict/Warn
//	s.Default(obj)
//	rules := s.Rules(schema.Resource{Group: "example.com", Version: "v1", Kind: "Widget", Namespaced: true})
//	if err := rules.BeforeCreate(ctx, "default", obj, warn); err != nil {
//		... // kube's 422 Invalid, as kube-apiserver answers it
//	}
package schema
