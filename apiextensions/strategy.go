package apiextensions

import (
	"fmt"
	"slices"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// CRDType is the built-in type apiextensions.k8s.io/v1
// CustomResourceDefinition: cluster-scoped, short names crd and crds, a
// status subresource, and kube-apiserver's defaulting and validation.
func CRDType() registry.Type {
	return registry.Type{
		Group:      Group,
		Version:    APIVersion,
		Kind:       Kind,
		Plural:     Plural,
		Singular:   "customresourcedefinition",
		ShortNames: []string{"crd", "crds"},
		Categories: []string{"api-extensions"},
		PrinterColumns: []registry.PrinterColumn{
			{Name: "Created At", Type: "date", JSONPath: ".metadata.creationTimestamp"},
		},
		Description: crdDescription,
		Schema:      crdSchema(),
		Strategy:    strategy{},
	}
}

// strategy is the CRD type's behaviour, as kube-apiserver's CRD strategy:
// v1 defaults, status.storedVersions kept, the cleanup finalizer and the
// Terminating condition on delete, and validation.
type strategy struct{}

var (
	_ registry.Defaulter         = strategy{}
	_ registry.Normalizer        = strategy{}
	_ registry.CreateValidator   = strategy{}
	_ registry.UpdateValidator   = strategy{}
	_ registry.StatusSubresource = strategy{}
	_ registry.DeletionHolder    = strategy{}
	_ registry.GenerationPolicy  = strategy{}
	_ registry.StrategicMerger   = strategy{}
)

// HasStatus reports that CRDs have a /status subresource.
func (strategy) HasStatus() bool { return true }

// Default fills v1's defaults (names.singular, names.listKind,
// conversion.strategy None, a conversion webhook service's port 443) and records the storage version in
// status.storedVersions, which kube-apiserver's strategy does on create
// and on every update. A spec that does not decode is left to Normalize.
func (strategy) Default(obj *api.Object) {
	crd, err := Decode(obj)
	if err != nil {
		return
	}
	n := &crd.Spec.Names
	if n.Singular == "" {
		n.Singular = strings.ToLower(n.Kind)
	}
	if n.ListKind == "" && n.Kind != "" {
		n.ListKind = n.Kind + "List"
	}
	if crd.Spec.Conversion == nil {
		crd.Spec.Conversion = &Conversion{Strategy: NoneConverter}
	}
	if w := crd.Spec.Conversion.Webhook; w != nil && w.ClientConfig != nil {
		if svc := w.ClientConfig.Service; svc != nil && svc.Port == nil {
			svc.Port = ptr.To[int32](443)
		}
	}
	if _, ok := obj.Fields["spec"]; ok {
		_ = setSpec(obj, &crd.Spec)
	}
	if sv := crd.Spec.StorageVersion(); sv != "" && !slices.Contains(crd.Status.StoredVersions, sv) {
		crd.Status.StoredVersions = append(crd.Status.StoredVersions, sv)
		_ = setStatus(obj, &crd.Status)
	}
}

// Normalize refuses a spec or status that does not decode, with the 400
// kube-apiserver's decoder answers.
func (strategy) Normalize(obj *api.Object) error {
	if _, err := Decode(obj); err != nil {
		return api.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", Kind, APIVersion, Kind, err))
	}
	return nil
}

// ValidateCreate validates a new CRD.
func (strategy) ValidateCreate(obj *api.Object) field.ErrorList {
	crd, err := Decode(obj)
	if err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("spec"), "<object>", err.Error())}
	}
	return ValidateCreate(crd)
}

// ValidateUpdate validates a changed CRD.
func (strategy) ValidateUpdate(obj, old *api.Object) field.ErrorList {
	crd, err := Decode(obj)
	if err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("spec"), "<object>", err.Error())}
	}
	prev, err := Decode(old)
	if err != nil {
		return nil // the stored object is not ours to judge
	}
	return ValidateUpdate(crd, prev)
}

// BumpsGeneration reports whether the spec changed.
func (strategy) BumpsGeneration(obj, old *api.Object) bool {
	return !api.FieldEqual(obj, old, "spec")
}

// PrepareForDelete gives a CRD being deleted the cleanup finalizer and
// the Terminating condition, as kube-apiserver's CRD storage does on the
// first delete: the controller then deletes its objects and removes the
// finalizer.
func (strategy) PrepareForDelete(obj *api.Object) {
	if !slices.Contains(obj.Metadata.Finalizers, CleanupFinalizer) {
		obj.Metadata.Finalizers = append(obj.Metadata.Finalizers, CleanupFinalizer)
	}
	crd, err := Decode(obj)
	if err != nil {
		return
	}
	crd.Status.SetCondition(Condition{
		Type: Terminating, Status: ConditionTrue, LastTransitionTime: now(),
		Reason: "InstanceDeletionPending", Message: "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
	})
	_ = setStatus(obj, &crd.Status)
}

// HoldsDeletion is false: the cleanup finalizer alone keeps a CRD.
func (strategy) HoldsDeletion(*api.Object) bool { return false }

// now is a condition's lastTransitionTime for the present moment.
func now() string { return time.Now().UTC().Format(time.RFC3339) }

// StrategicMerge applies a strategic merge patch with the patch
// strategies of apiextensions' own Go type, as kube-apiserver, which
// serves CustomResourceDefinitions as a built-in kind, does.
func (strategy) StrategicMerge(original, patch []byte) ([]byte, error) {
	return registry.StrategicMergeTyped(original, patch, &apiextensionsv1.CustomResourceDefinition{})
}
