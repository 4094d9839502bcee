package builtin

import (
	"encoding/json"
	"fmt"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kubernetes/pkg/apis/apps"
	"k8s.io/kubernetes/pkg/apis/autoscaling"
	autoscalingvalidation "k8s.io/kubernetes/pkg/apis/autoscaling/validation"
	"k8s.io/kubernetes/pkg/apis/core"
)

// scaleKind is a kind with a scale subresource: a kind plus the
// registry's ScaleRules.
type scaleKind struct{ *kind }

var _ registry.ScaleRules = scaleKind{}

// ScaleSelector returns the selector Scale.status.selector shows: the
// kind's spec.selector in its string form, as kube's scale storage of
// each workload kind computes it.
func (k scaleKind) ScaleSelector(obj *api.Object) (string, error) {
	in, err := k.toInternal(obj)
	if err != nil {
		return "", err
	}
	var sel *metav1.LabelSelector
	switch o := in.(type) {
	case *apps.Deployment:
		sel = o.Spec.Selector
	case *apps.ReplicaSet:
		sel = o.Spec.Selector
	case *apps.StatefulSet:
		sel = o.Spec.Selector
	case *core.ReplicationController:
		// A ReplicationController selects by a plain label map.
		return labels.SelectorFromSet(o.Spec.Selector).String(), nil
	default:
		return "", fmt.Errorf("builtin: %s has no scale", k.gvk)
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return "", err
	}
	return s.String(), nil
}

// ValidateScale validates a Scale with kube's autoscaling validation, as
// kube's scale storage does before writing its replicas.
func (k scaleKind) ValidateScale(sc *registry.Scale) error {
	data, err := json.Marshal(sc)
	if err != nil {
		return err
	}
	in, err := decodeBody(scaleKindGVK, data)
	if err != nil {
		return err
	}
	scale := in.(*autoscaling.Scale)
	if errs := autoscalingvalidation.ValidateScale(scale); len(errs) > 0 {
		return statusError(newInvalid(autoscaling.Kind("Scale"), sc.Metadata.Name, errs))
	}
	return nil
}

// CheckScale refuses a Scale body kube-apiserver's decoder would not
// read as an autoscaling/v1 Scale, in its words.
func (k scaleKind) CheckScale(body []byte) error {
	_, err := decodeBody(scaleKindGVK, body)
	return err
}

// PatchedScaleError is the error of kube's decoder for a patched Scale,
// which kube's patch handler decodes with no kind of its own to fall
// back on.
func (k scaleKind) PatchedScaleError(patched []byte) error {
	_, _, err := decodeKube(scaleKindGVK, patched, nil)
	return err
}

// scaleKindGVK is the kind of every built-in kind's scale subresource.
var scaleKindGVK = schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}

// decodeBody decodes a request body meant as a gvk (a Binding, an
// Eviction, a TokenRequest, a Scale) as kube-apiserver's handlers decode
// one: its decoder reads the body's own apiVersion and kind (gvk's where
// it names none), case-sensitively, defaults the object and converts it
// to the internal type, so another kind is "converting (v1.Pod) to
// (core.Binding): unknown conversion", a version kube does not serve "no
// kind ... is registered", and each is answered in the handlers' words.
func decodeBody(gvk schema.GroupVersionKind, body []byte) (runtime.Object, error) {
	defaults := gvk
	obj, got, err := decodeKube(gvk, body, &defaults)
	switch {
	case err == nil:
		return obj, nil
	case got != nil && got.Kind != "":
		return nil, api.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", got.Kind, got.Version, gvk.Kind, err))
	}
	return nil, api.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %v (%s)", gvk.Kind, err, api.SummarizeBody(body)))
}

// decodeKube decodes JSON into gvk's internal type with kube's decoder,
// defaults (apiVersion and kind where the body names none) as given.
func decodeKube(gvk schema.GroupVersionKind, body []byte, defaults *schema.GroupVersionKind) (runtime.Object, *schema.GroupVersionKind, error) {
	into, err := scheme.New(gvk.GroupKind().WithVersion(runtime.APIVersionInternal))
	if err != nil {
		return nil, nil, err
	}
	info, ok := runtime.SerializerInfoForMediaType(Codecs().SupportedMediaTypes(), runtime.ContentTypeJSON)
	if !ok {
		return nil, nil, fmt.Errorf("builtin: no JSON serializer")
	}
	hub := schema.GroupVersion{Group: gvk.Group, Version: runtime.APIVersionInternal}
	return Codecs().DecoderToVersion(info.Serializer, hub).Decode(body, defaults, into)
}
