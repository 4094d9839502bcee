package registry

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/miniapi/miniapi/api"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Namespace phases and the finalizer kube-apiserver puts on every new
// namespace.
const (
	namespaceActive      = "Active"
	namespaceTerminating = "Terminating"
	finalizerKubernetes  = "kubernetes"
)

func namespaceType() Type {
	return Type{
		Version:          "v1",
		Kind:             "Namespace",
		Plural:           "namespaces",
		Singular:         "namespace",
		ShortNames:       []string{"ns"},
		Namespaced:       false,
		NameValidation:   NameLabel,
		SelectableFields: []string{"status.phase"},
		PrinterColumns: []PrinterColumn{
			{Name: "Status", Type: "string", JSONPath: ".status.phase", Description: "The status of the namespace"},
			ageColumn,
		},
		Schema:      namespaceSchema(),
		Description: namespaceDescription,
		Strategy:    namespaceStrategy{},
	}
}

// standardFinalizers are the finalizer names Kubernetes accepts without a
// domain prefix.
var standardFinalizers = []string{finalizerKubernetes, metav1.FinalizerOrphanDependents, metav1.FinalizerDeleteDependents}

// namespaceFields is the part of a v1 Namespace beyond metadata.
type namespaceFields struct {
	Spec   *namespaceSpecFields   `json:"spec"`
	Status *namespaceStatusFields `json:"status"`
}

type namespaceSpecFields struct {
	Finalizers []string `json:"finalizers"`
}

type namespaceStatusFields struct {
	Phase      string                     `json:"phase"`
	Conditions []namespaceConditionFields `json:"conditions"`
}

type namespaceConditionFields struct {
	Type               string   `json:"type"`
	Status             string   `json:"status"`
	LastTransitionTime wireTime `json:"lastTransitionTime"`
	Reason             string   `json:"reason"`
	Message            string   `json:"message"`
}

// namespaceStrategy gives Namespaces kube-apiserver's create defaults,
// status subresource and validation.
type namespaceStrategy struct{}

// HasStatus reports that namespaces have a /status subresource.
func (namespaceStrategy) HasStatus() bool { return true }

// Default sets status.phase to Active when it is unset and, once the
// namespace has a name, the label kubernetes.io/metadata.name to it, as
// Kubernetes' v1 defaults do: the writer of a namespace owns that label in
// managedFields, as in kube-apiserver. A status that is not a JSON object
// is left for Normalize to refuse.
func (namespaceStrategy) Default(obj *api.Object) {
	setNameLabel(obj)
	status, ok := objectField(obj, "status")
	if ok {
		var phase string
		if raw, present := status["phase"]; !present || json.Unmarshal(raw, &phase) == nil {
			if phase == "" {
				status["phase"], _ = json.Marshal(namespaceActive)
				_ = setField(obj, "status", status, false)
			}
		}
	}
}

// labelMetadataName is the label every namespace carries with its name.
const labelMetadataName = "kubernetes.io/metadata.name"

// setNameLabel sets kubernetes.io/metadata.name to the namespace's name.
func setNameLabel(obj *api.Object) {
	if obj.Metadata.Name == "" {
		return // a generated name is labelled by Canonicalize
	}
	if obj.Metadata.Labels == nil {
		obj.Metadata.Labels = map[string]string{}
	}
	obj.Metadata.Labels[labelMetadataName] = obj.Metadata.Name
}

// Canonicalize labels a namespace whose name was generated, which
// defaulting could not, as kube-apiserver's namespace strategy does.
func (namespaceStrategy) Canonicalize(obj *api.Object) { setNameLabel(obj) }

// PrepareForCreate puts the "kubernetes" finalizer in spec.finalizers when
// it is missing: kube-apiserver requires it on every new namespace (the
// namespace controller removes it when it has emptied the namespace) and
// adds it after recording managedFields, so the creator does not own it.
// A spec that is not a JSON object is left for Normalize to refuse.
func (namespaceStrategy) PrepareForCreate(obj *api.Object) {
	spec, ok := objectField(obj, "spec")
	if !ok {
		return
	}
	var fins []string
	if raw, present := spec["finalizers"]; !present || json.Unmarshal(raw, &fins) == nil {
		if !slices.Contains(fins, finalizerKubernetes) {
			spec["finalizers"], _ = json.Marshal(append(fins, finalizerKubernetes))
			_ = setField(obj, "spec", spec, false)
		}
	}
}

// objectField decodes a top-level field that is a JSON object one level
// deep; an absent or null field is an empty object. ok is false when the
// field holds anything else.
func objectField(obj *api.Object, name string) (map[string]json.RawMessage, bool) {
	raw, present := obj.Fields[name]
	if !present || string(raw) == "null" {
		return map[string]json.RawMessage{}, true
	}
	var m map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &m) != nil {
		return nil, false
	}
	return m, true
}

// Normalize refuses a body kube-apiserver could not decode with its 400
// and drops unknown top-level fields.
func (namespaceStrategy) Normalize(obj *api.Object) error {
	var f namespaceFields
	if err := decodeBuiltin(obj, "Namespace", "v1", &f); err != nil {
		return err
	}
	keepFields(obj, "spec", "status")
	return nil
}

// PrepareForUpdate keeps spec.finalizers as they were: kube-apiserver
// only changes them through the /finalize subresource and silently
// ignores them in updates of the namespace itself. The Store calls it
// when it supports preparing updates with the previous object.
func (namespaceStrategy) PrepareForUpdate(obj, old *api.Object) {
	spec, ok := objectField(obj, "spec")
	oldSpec, oldOK := objectField(old, "spec")
	if !ok || !oldOK {
		return
	}
	if fins, had := oldSpec["finalizers"]; had {
		spec["finalizers"] = fins
	} else {
		delete(spec, "finalizers")
	}
	_ = setField(obj, "spec", spec, false)
}

// ValidateCreate checks finalizer names and the phase.
func (namespaceStrategy) ValidateCreate(obj *api.Object) field.ErrorList {
	var f namespaceFields
	if errs := decodeForValidation(obj, &f); errs != nil {
		return errs
	}
	errs := validateNamespaceFinalizers(&f)
	if f.Status != nil && f.Status.Phase != "" && f.Status.Phase != namespaceActive && f.Status.Phase != namespaceTerminating {
		errs = append(errs, field.NotSupported(field.NewPath("status", "phase"), f.Status.Phase, []string{namespaceActive, namespaceTerminating}))
	}
	return errs
}

// ValidateUpdate checks finalizer names and, when the phase changes (a
// /status write), kube-apiserver's rule tying it to deletionTimestamp.
// An unchanged phase is not checked again: a namespace being deleted
// keeps the phase it had until something moves it to Terminating, and
// its other updates (dropping finalizers) must still succeed.
func (namespaceStrategy) ValidateUpdate(obj, old *api.Object) field.ErrorList {
	var f, o namespaceFields
	if errs := decodeForValidation(obj, &f); errs != nil {
		return errs
	}
	if errs := decodeForValidation(old, &o); errs != nil {
		return errs
	}
	errs := validateNamespaceFinalizers(&f)
	phase, oldPhase := "", ""
	if f.Status != nil {
		phase = f.Status.Phase
	}
	if o.Status != nil {
		oldPhase = o.Status.Phase
	}
	if phase != oldPhase {
		// "status.Phase" is kube-apiserver's spelling of the path.
		p := field.NewPath("status", "Phase")
		if obj.Metadata.DeletionTimestamp == nil {
			if phase != namespaceActive {
				errs = append(errs, field.Invalid(p, phase, "may only be 'Active' if `deletionTimestamp` is empty"))
			}
		} else if phase != namespaceTerminating {
			errs = append(errs, field.Invalid(p, phase, "may only be 'Terminating' if `deletionTimestamp` is not empty"))
		}
	}
	return errs
}

// validateNamespaceFinalizers checks each spec finalizer is a qualified
// name and, without a "/", one of Kubernetes' standard names. Errors are
// reported at spec.finalizers without an index, as kube-apiserver does.
func validateNamespaceFinalizers(f *namespaceFields) field.ErrorList {
	if f.Spec == nil {
		return nil
	}
	var errs field.ErrorList
	p := field.NewPath("spec", "finalizers")
	for _, fin := range f.Spec.Finalizers {
		errs = append(errs, apivalidation.ValidateFinalizerName(fin, p)...)
		if !strings.Contains(fin, "/") && !slices.Contains(standardFinalizers, fin) {
			errs = append(errs, field.Invalid(p, fin, "name is neither a standard finalizer name nor is it fully qualified"))
		}
	}
	return errs
}
