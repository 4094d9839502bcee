package admission

import (
	"encoding/json"
	"fmt"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
)

// Typed is implemented by the strategies of kinds whose objects kube's
// admission plugins see as Go types: the built-in kinds, whose plugins
// work on kube's internal types.
type Typed interface {
	// AdmissionObject converts a stored-form object into the form
	// plugins see.
	AdmissionObject(obj *api.Object) (runtime.Object, error)
	// FromAdmissionObject converts it back, after plugins changed it.
	FromAdmissionObject(in runtime.Object) (*api.Object, error)
	// AdmissionScheme is the scheme that creates, defaults and converts
	// the kind's objects between versions for the webhooks.
	AdmissionScheme() *runtime.Scheme
}

// objectForms converts a type's objects between the Store's form and
// the one kube's plugins see, and gives the webhooks the means to
// convert them to the versions they ask for.
type objectForms interface {
	toKube(obj *api.Object) (runtime.Object, error)
	fromKube(obj runtime.Object) (*api.Object, error)
	interfaces() kadmission.ObjectInterfaces
}

// formsOf returns the object forms of the objects of kind, written to
// type t: t's own, or for a subresource of another kind (a /scale) that
// kind's, as kube's scheme has it.
func (c *Chain) formsOf(t *registry.Type, kind schema.GroupVersionKind) objectForms {
	if kind.Group != t.Group || kind.Kind != t.Kind {
		return schemeForms{gvk: kind, mapper: c.mapper}
	}
	if typed, ok := t.Strategy.(Typed); ok {
		return typedForms{typed: typed, mapper: c.mapper}
	}
	return unstructuredForms{t: t, mapper: c.mapper, converter: c.converter}
}

// schemeForms are the forms of a subresource's objects of a kind of
// their own (autoscaling/v1 Scale): kube's internal type of the kind.
type schemeForms struct {
	gvk    schema.GroupVersionKind
	mapper *resourceMapper
}

func (f schemeForms) toKube(obj *api.Object) (runtime.Object, error) {
	data, err := obj.MarshalJSON()
	if err != nil {
		return nil, err
	}
	v, err := legacyscheme.Scheme.New(f.gvk)
	if err != nil {
		return nil, fmt.Errorf("admission: %w", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return nil, fmt.Errorf("admission: decode %s: %w", f.gvk, err)
	}
	// As kube-apiserver's decoder: a body is defaulted before admission
	// sees it (a TokenRequest's expirationSeconds).
	legacyscheme.Scheme.Default(v)
	internal := f.gvk.GroupKind().WithVersion(runtime.APIVersionInternal)
	in, err := legacyscheme.Scheme.New(internal)
	if err != nil {
		return v, nil // no internal version: plugins get the versioned one
	}
	if err := legacyscheme.Scheme.Convert(v, in, nil); err != nil {
		return nil, fmt.Errorf("admission: convert %s: %w", f.gvk, err)
	}
	return in, nil
}

func (f schemeForms) fromKube(obj runtime.Object) (*api.Object, error) {
	v, err := legacyscheme.Scheme.New(f.gvk)
	if err != nil {
		return nil, fmt.Errorf("admission: %w", err)
	}
	if err := legacyscheme.Scheme.Convert(obj, v, nil); err != nil {
		return nil, fmt.Errorf("admission: convert %s: %w", f.gvk, err)
	}
	v.GetObjectKind().SetGroupVersionKind(f.gvk)
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return objectOf(data)
}

func (f schemeForms) interfaces() kadmission.ObjectInterfaces {
	s := legacyscheme.Scheme
	return objectInterfaces{creater: s, typer: s, defaulter: s, convertor: s, mapper: f.mapper}
}

// typedForms are a built-in kind's: kube's internal Go types, converted
// by kube's scheme.
type typedForms struct {
	typed  Typed
	mapper *resourceMapper
}

func (f typedForms) toKube(obj *api.Object) (runtime.Object, error) {
	return f.typed.AdmissionObject(obj)
}

func (f typedForms) fromKube(obj runtime.Object) (*api.Object, error) {
	return f.typed.FromAdmissionObject(obj)
}

func (f typedForms) interfaces() kadmission.ObjectInterfaces {
	s := f.typed.AdmissionScheme()
	return objectInterfaces{creater: s, typer: s, defaulter: s, convertor: s, mapper: f.mapper}
}

// unstructuredForms are the forms of any other type's objects (custom
// resources): unstructured JSON in the request's version, as
// kube-apiserver's custom resource handler gives them to admission.
type unstructuredForms struct {
	t         *registry.Type
	mapper    *resourceMapper
	converter func(t *registry.Type) (VersionConverter, error)
}

func (f unstructuredForms) toKube(obj *api.Object) (runtime.Object, error) {
	data, err := obj.MarshalJSON()
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return nil, fmt.Errorf("admission: decode %s: %w", f.t.GroupResource(), err)
	}
	return u, nil
}

func (f unstructuredForms) fromKube(obj runtime.Object) (*api.Object, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("admission: encode %s: %w", f.t.GroupResource(), err)
	}
	return objectOf(data)
}

func (f unstructuredForms) interfaces() kadmission.ObjectInterfaces {
	u := unstructuredScheme{t: f.t}
	if f.converter != nil && len(f.t.Conversion) > 0 {
		u.convert = func(data []byte, version string) ([]byte, error) {
			c, err := f.converter(f.t)
			if err != nil || c == nil {
				return nil, err
			}
			return c.ToVersion(data, version)
		}
	}
	return objectInterfaces{creater: u, typer: u, defaulter: u, convertor: u, mapper: f.mapper}
}

// objectInterfaces is kube's admission.ObjectInterfaces from its parts.
type objectInterfaces struct {
	creater   runtime.ObjectCreater
	typer     runtime.ObjectTyper
	defaulter runtime.ObjectDefaulter
	convertor runtime.ObjectConvertor
	mapper    *resourceMapper
}

func (o objectInterfaces) GetObjectCreater() runtime.ObjectCreater     { return o.creater }
func (o objectInterfaces) GetObjectTyper() runtime.ObjectTyper         { return o.typer }
func (o objectInterfaces) GetObjectDefaulter() runtime.ObjectDefaulter { return o.defaulter }
func (o objectInterfaces) GetObjectConvertor() runtime.ObjectConvertor { return o.convertor }
func (o objectInterfaces) GetEquivalentResourceMapper() runtime.EquivalentResourceMapper {
	return o.mapper
}

// unstructuredScheme creates, types, defaults and converts a custom
// resource's unstructured objects, as kube-apiserver's custom resource
// handler does for admission: versions differ in apiVersion only
// (conversion strategy None), defaults are the schema's.
type unstructuredScheme struct {
	t *registry.Type
	// convert converts through the CRD's conversion webhook; nil for
	// strategy None.
	convert func(data []byte, version string) ([]byte, error)
}

// New returns an empty object of kind gvk.
func (unstructuredScheme) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// ObjectKinds returns the kind an object names.
func (unstructuredScheme) ObjectKinds(obj runtime.Object) ([]schema.GroupVersionKind, bool, error) {
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Kind == "" {
		return nil, false, runtime.NewMissingKindErr("unstructured object has no kind")
	}
	return []schema.GroupVersionKind{gvk}, false, nil
}

// Recognizes reports whether gvk is the type's kind.
func (u unstructuredScheme) Recognizes(gvk schema.GroupVersionKind) bool {
	return gvk.Group == u.t.Group && gvk.Kind == u.t.Kind
}

// Default fills the schema's defaults into an object a webhook changed,
// as kube-apiserver does after a mutating webhook's patch.
func (u unstructuredScheme) Default(obj runtime.Object) {
	d, ok := u.t.Strategy.(registry.Defaulter)
	un, isU := obj.(*unstructured.Unstructured)
	if !ok || !isU {
		return
	}
	data, err := un.MarshalJSON()
	if err != nil {
		return
	}
	o, err := objectOf(data)
	if err != nil {
		return
	}
	d.Default(o)
	if data, err = o.MarshalJSON(); err != nil {
		return
	}
	_ = un.UnmarshalJSON(data) // it was JSON a moment ago
}

// Convert copies in into out in out's version.
func (u unstructuredScheme) Convert(in, out, _ any) error {
	src, ok1 := in.(*unstructured.Unstructured)
	dst, ok2 := out.(*unstructured.Unstructured)
	if !ok1 || !ok2 {
		return fmt.Errorf("admission: cannot convert %T to %T", in, out)
	}
	apiVersion := dst.GetAPIVersion()
	if u.convert != nil && apiVersion != "" && apiVersion != src.GetAPIVersion() {
		out, err := u.convertTo(src, apiVersion)
		if err != nil {
			return err
		}
		dst.Object = out.Object
		return nil
	}
	dst.Object = runtime.DeepCopyJSON(src.Object)
	if apiVersion != "" {
		dst.SetAPIVersion(apiVersion)
	}
	return nil
}

// convertTo converts src to apiVersion through the CRD's webhook.
func (u unstructuredScheme) convertTo(src *unstructured.Unstructured, apiVersion string) (*unstructured.Unstructured, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, err
	}
	data, err := src.MarshalJSON()
	if err != nil {
		return nil, err
	}
	if data, err = u.convert(data, gv.Version); err != nil {
		return nil, err
	}
	out := &unstructured.Unstructured{}
	if err := out.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	return out, nil
}

// ConvertToVersion returns a copy of in in the version target picks.
func (u unstructuredScheme) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	src, ok := in.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("admission: cannot convert %T", in)
	}
	gvk, ok := target.KindForGroupVersionKinds([]schema.GroupVersionKind{src.GroupVersionKind()})
	if !ok {
		return nil, fmt.Errorf("admission: %v is not suitable for converting to %v", src.GroupVersionKind(), target)
	}
	if u.convert != nil && gvk.GroupVersion().String() != src.GetAPIVersion() {
		return u.convertTo(src, gvk.GroupVersion().String())
	}
	out := src.DeepCopy()
	out.SetGroupVersionKind(gvk)
	return out, nil
}

// ConvertFieldLabel accepts every label as it is.
func (unstructuredScheme) ConvertFieldLabel(_ schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}
