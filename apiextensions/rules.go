package apiextensions

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/kuberest"
	internal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// kube's rules for CustomResourceDefinitions, as apiextensions-apiserver
// registers them: its scheme (v1, v1beta1 and the internal version, with
// their defaulting and conversions) and its strategies for the resource
// and for /status, run by k8s.io/apiserver's rest.BeforeCreate and
// rest.BeforeUpdate. Built once, on first use.
var crdRules = sync.OnceValue(func() *kubeCRD {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	return &kubeCRD{
		scheme: scheme,
		main:   customresourcedefinition.NewStrategy(scheme),
		status: customresourcedefinition.NewStatusStrategy(scheme),
	}
})

type kubeCRD struct {
	scheme *runtime.Scheme
	main   rest.RESTCreateUpdateStrategy
	status rest.RESTUpdateStrategy
}

// versioned decodes obj as kube's v1 type. A spec or status of the wrong
// shape is the 400 kube-apiserver's decoder answers.
func versioned(obj *api.Object) (*apiextensionsv1.CustomResourceDefinition, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	out := &apiextensionsv1.CustomResourceDefinition{}
	if err := json.Unmarshal(data, out); err != nil {
		return nil, api.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", Kind, APIVersion, Kind, err))
	}
	return out, nil
}

// fromVersioned replaces obj with crd.
func fromVersioned(obj *api.Object, crd *apiextensionsv1.CustomResourceDefinition) error {
	crd.APIVersion, crd.Kind = Group+"/"+APIVersion, Kind
	data, err := json.Marshal(crd)
	if err != nil {
		return err
	}
	var out api.Object
	if err := json.Unmarshal(data, &out); err != nil {
		return err
	}
	// kube's v1 type encodes an empty status.conditions as null; left
	// out, the first writer of a condition owns the list itself in
	// managedFields, as kube-apiserver's typed field manager records it
	// (miniapi's field manager works on JSON, where null is a value).
	if st, ok := out.Fields["status"]; ok && crd.Status.Conditions == nil {
		var m map[string]json.RawMessage
		if json.Unmarshal(st, &m) == nil {
			delete(m, "conditions")
			if b, err := json.Marshal(m); err == nil {
				out.Fields["status"] = b
			}
		}
	}
	*obj = out
	return nil
}

// toInternal is obj as kube's internal type, which its rules judge.
func (k *kubeCRD) toInternal(obj *api.Object) (*internal.CustomResourceDefinition, error) {
	v1, err := versioned(obj)
	if err != nil {
		return nil, err
	}
	in := &internal.CustomResourceDefinition{}
	if err := k.scheme.Convert(v1, in, nil); err != nil {
		return nil, api.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", Kind, APIVersion, Kind, err))
	}
	return in, nil
}

// fromInternal replaces obj with in, converted back to v1.
func (k *kubeCRD) fromInternal(obj *api.Object, in *internal.CustomResourceDefinition) error {
	v1 := &apiextensionsv1.CustomResourceDefinition{}
	if err := k.scheme.Convert(in, v1, nil); err != nil {
		return err
	}
	return fromVersioned(obj, v1)
}

// BeforeCreate runs kube's rules for a new CRD: status cleared but for
// the storage version in storedVersions, generation 1, validation and
// warnings.
func (strategy) BeforeCreate(ctx context.Context, obj *api.Object) error {
	k := crdRules()
	in, err := k.toInternal(obj)
	if err != nil {
		return err
	}
	if err := rest.BeforeCreate(k.main, kuberest.Context(ctx, ""), in); err != nil {
		return api.FromKubeError(err)
	}
	return k.fromInternal(obj, in)
}

// BeforeUpdate runs kube's rules for an update of the CRD or of its
// /status.
func (strategy) BeforeUpdate(ctx context.Context, obj, old *api.Object, subresource string) error {
	k := crdRules()
	var s rest.RESTUpdateStrategy = k.main
	if subresource == "status" {
		s = k.status
	}
	// As kube-apiserver's generic store: the update carries the
	// resourceVersion it replaces when the rules judge it.
	obj.Metadata.ResourceVersion = old.Metadata.ResourceVersion
	in, err := k.toInternal(obj)
	if err != nil {
		return err
	}
	prev, err := k.toInternal(old)
	if err != nil {
		return err
	}
	if err := rest.BeforeUpdate(s, kuberest.Context(ctx, ""), in, prev); err != nil {
		return api.FromKubeError(err)
	}
	if err := k.fromInternal(obj, in); err != nil {
		return err
	}
	// The Store writes obj as the update of the revision it read.
	obj.Metadata.ResourceVersion = ""
	return nil
}

// RequiresResourceVersion is kube's rule: CRDs are never updated
// unconditionally.
func (strategy) RequiresResourceVersion() bool {
	return !crdRules().main.AllowUnconditionalUpdate(context.Background())
}

// ResetFields returns what kube's strategy for subresource resets, for
// managedFields.
func (strategy) ResetFields(subresource string) map[fieldpath.APIVersion]fieldpath.Filter {
	if subresource == "status" {
		return kuberest.ResetFields(crdRules().status)
	}
	return kuberest.ResetFields(crdRules().main)
}
