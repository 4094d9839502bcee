package schema

import (
	"context"

	"github.com/miniapi/miniapi/kuberest"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured/unstructuredscheme"
	kschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Resource describes the custom resource version a schema belongs to:
// what kube-apiserver's strategy for it needs besides the schema.
type Resource struct {
	Group, Version, Kind string
	Namespaced           bool
	// Status is set when the version has a /status subresource.
	Status bool
	// Scale is the version's /scale subresource, nil without one.
	Scale *Scale
}

// Scale is a /scale subresource's paths, as a CRD declares them.
type Scale struct {
	SpecReplicasPath, StatusReplicasPath string
	// LabelSelectorPath is empty when the CRD names none.
	LabelSelectorPath string
}

// Rules are kube-apiserver's rules for writes of one custom resource
// version: its strategy for the resource and for /status
// (k8s.io/apiextensions-apiserver/pkg/registry/customresource) run by
// k8s.io/apiserver's rest.BeforeCreate and rest.BeforeUpdate, as kube's
// generic store runs them. They clear what a write may not set (status
// through the main resource, everything but status through /status),
// move generation, validate apiVersion and kind, metadata, the schema,
// embedded resources, list types, CEL rules and the scale paths, and
// warn about finalizer names. Safe for concurrent use.
type Rules struct {
	main   rest.RESTCreateUpdateStrategy
	status rest.RESTUpdateStrategy // nil without /status
}

// Rules builds kube's strategies for r, whose schema s is; the CEL rules
// are compiled here, once.
func (s *Schema) Rules(r Resource) *Rules {
	gvk := kschema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
	var status *apiextensions.CustomResourceSubresourceStatus
	var statusValidator validation.SchemaValidator
	if r.Status {
		status = &apiextensions.CustomResourceSubresourceStatus{}
		// As kube-apiserver's CRD handler: /status writes are checked
		// against the status property's schema only.
		if p, ok := s.props.Properties["status"]; ok {
			statusValidator, _, _ = validation.NewSchemaValidator(&p)
		}
	}
	var scale *apiextensions.CustomResourceSubresourceScale
	if r.Scale != nil {
		scale = &apiextensions.CustomResourceSubresourceScale{
			SpecReplicasPath: r.Scale.SpecReplicasPath, StatusReplicasPath: r.Scale.StatusReplicasPath,
		}
		if r.Scale.LabelSelectorPath != "" {
			p := r.Scale.LabelSelectorPath
			scale.LabelSelectorPath = &p
		}
	}
	main := customresource.NewStrategy(unstructuredscheme.NewUnstructuredObjectTyper(), r.Namespaced, gvk,
		s.validator, statusValidator, s.structural, status, scale, nil)
	rules := &Rules{main: main}
	if r.Status {
		rules.status = customresource.NewStatusStrategy(main)
	}
	return rules
}

// BeforeCreate runs kube's rules for a new object (generic JSON, its
// name final, uid and creationTimestamp set) in namespace ns and returns
// the object to store, obj changed in place or another map: an error is
// kube's (a *errors.StatusError, 422 Invalid naming the object's own
// group and kind); warnings go to the request (api.AddWarning).
func (r *Rules) BeforeCreate(ctx context.Context, ns string, obj map[string]any) (map[string]any, error) {
	u := &unstructured.Unstructured{Object: obj}
	if err := rest.BeforeCreate(r.main, kuberest.Context(ctx, ns), u); err != nil {
		return nil, err
	}
	return u.Object, nil
}

// BeforeUpdate runs kube's rules for an update of old to obj through
// subresource ("" or "scale" for the main resource, "status"); as
// BeforeCreate (/status starts again from a copy of old). A subresource
// the version does not have is judged as the main resource: the Store
// serves only those it has.
func (r *Rules) BeforeUpdate(ctx context.Context, ns string, obj, old map[string]any, subresource string) (map[string]any, error) {
	u := &unstructured.Unstructured{Object: obj}
	if err := rest.BeforeUpdate(r.updateStrategy(subresource), kuberest.Context(ctx, ns), u, &unstructured.Unstructured{Object: old}); err != nil {
		return nil, err
	}
	return u.Object, nil
}

// updateStrategy is kube's strategy for updates through subresource.
func (r *Rules) updateStrategy(subresource string) rest.RESTUpdateStrategy {
	if subresource == "status" && r.status != nil {
		return r.status
	}
	return r.main
}

// Validate runs kube's validation of the main resource alone: of a new
// object when old is nil, else of an update. The object needs its
// apiVersion, kind and metadata as the Store would hold them.
func (r *Rules) Validate(obj, old map[string]any) field.ErrorList {
	ctx := context.Background()
	if old == nil {
		return rest.ValidateCreate(ctx, &unstructured.Unstructured{Object: obj}, r.main)
	}
	return rest.ValidateUpdate(ctx, &unstructured.Unstructured{Object: obj}, &unstructured.Unstructured{Object: old}, r.main)
}

// RequiresResourceVersion reports whether updates must name the
// resourceVersion they replace: always, for custom resources.
func (r *Rules) RequiresResourceVersion() bool {
	return !r.main.AllowUnconditionalUpdate(context.Background())
}

// ResetFields returns the fields writes of subresource ("" for the main
// resource) reset, as kube's strategies declare them, for the field
// manager.
func (r *Rules) ResetFields(subresource string) map[fieldpath.APIVersion]fieldpath.Filter {
	switch {
	case subresource == "" || subresource == "scale":
		return kuberest.ResetFields(r.main)
	case subresource == "status" && r.status != nil:
		return kuberest.ResetFields(r.status)
	}
	return nil
}
