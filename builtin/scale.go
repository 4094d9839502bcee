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
	in, err := decodeInternal(schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}, data)
	if err != nil {
		return err
	}
	scale := in.(*autoscaling.Scale)
	if errs := autoscalingvalidation.ValidateScale(scale); len(errs) > 0 {
		return statusError(newInvalid(autoscaling.Kind("Scale"), sc.Metadata.Name, errs))
	}
	return nil
}

// decodeInternal decodes the JSON of a versioned kind into its internal
// type.
func decodeInternal(gvk schema.GroupVersionKind, data []byte) (runtime.Object, error) {
	return decodeToInternal(gvk, data, false)
}

// decodeToInternal decodes data as gvk's versioned type, with the kind's
// defaults when defaulted, and converts it to the internal type.
func decodeToInternal(gvk schema.GroupVersionKind, data []byte, defaulted bool) (runtime.Object, error) {
	v, err := scheme.New(gvk)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return nil, api.NewBadRequest(err.Error())
	}
	if defaulted {
		scheme.Default(v)
	}
	in, err := scheme.New(schema.GroupVersionKind{Group: gvk.Group, Version: runtime.APIVersionInternal, Kind: gvk.Kind})
	if err != nil {
		return nil, err
	}
	if err := scheme.Convert(v, in, nil); err != nil {
		return nil, err
	}
	return in, nil
}
