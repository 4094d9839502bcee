package apiextensions

import (
	"fmt"
	"slices"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
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

// strategy is the CRD type's behaviour: kube-apiserver's own CRD
// strategy (rules.go: v1 defaults, storedVersions, generation,
// validation, warnings), and on delete the cleanup finalizer and the
// Terminating condition, as kube's CRD storage does.
type strategy struct{}

var (
	_ registry.Defaulter          = strategy{}
	_ registry.Normalizer         = strategy{}
	_ registry.CreateRules        = strategy{}
	_ registry.UpdateRules        = strategy{}
	_ registry.ConditionalUpdater = strategy{}
	_ registry.FieldResetter      = strategy{}
	_ registry.StatusSubresource  = strategy{}
	_ registry.DeletionHolder     = strategy{}
	_ registry.StrategicMerger    = strategy{}
)

// HasStatus reports that CRDs have a /status subresource.
func (strategy) HasStatus() bool { return true }

// Default applies kube's v1 defaults to the spec (names.singular,
// names.listKind, conversion strategy None, a conversion webhook
// service's port 443), as kube-apiserver's decoder does to every body. A
// spec that does not decode is left to the rules, which refuse it.
func (strategy) Default(obj *api.Object) {
	if _, ok := obj.Fields["spec"]; !ok {
		return
	}
	crd, err := versioned(obj)
	if err != nil {
		return
	}
	crdRules().scheme.Default(crd)
	_ = setField(obj, "spec", &crd.Spec)
}

// Normalize refuses a spec or status that does not decode, with the 400
// kube-apiserver's decoder answers.
func (strategy) Normalize(obj *api.Object) error {
	if _, err := Decode(obj); err != nil {
		return api.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", Kind, APIVersion, Kind, err))
	}
	return nil
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
