package registry

import (
	"slices"
	"strings"

	"github.com/miniapi/miniapi/api"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// leaseStrategies are the coordinated leader election strategies
// Kubernetes defines; others must be domain-qualified.
var leaseStrategies = []string{"OldestEmulationVersion"}

func leaseType() Type {
	return Type{
		Group:      "coordination.k8s.io",
		Version:    "v1",
		Kind:       "Lease",
		Plural:     "leases",
		Singular:   "lease",
		Namespaced: true,
		PrinterColumns: []PrinterColumn{
			{Name: "Holder", Type: "string", JSONPath: ".spec.holderIdentity", Description: "The holder of the lease"},
			ageColumn,
		},
		Schema:      leaseSchema(),
		Description: leaseDescription,
		Strategy:    leaseStrategy{},
	}
}

// leaseFields is the part of a coordination.k8s.io/v1 Lease beyond
// metadata.
type leaseFields struct {
	Spec *leaseSpecFields `json:"spec"`
}

type leaseSpecFields struct {
	HolderIdentity       *string   `json:"holderIdentity"`
	LeaseDurationSeconds *int32    `json:"leaseDurationSeconds"`
	AcquireTime          microTime `json:"acquireTime"`
	RenewTime            microTime `json:"renewTime"`
	LeaseTransitions     *int32    `json:"leaseTransitions"`
	Strategy             *string   `json:"strategy"`
	PreferredHolder      *string   `json:"preferredHolder"`
}

// leaseStrategy gives Leases kube-apiserver's decoding and spec
// validation; leader election (client-go's resourcelock) relies on both.
type leaseStrategy struct{}

// Normalize refuses a body kube-apiserver could not decode (a duration
// that is not an int32, a renewTime without microseconds) with its 400
// and drops unknown top-level fields.
func (leaseStrategy) Normalize(obj *api.Object) error {
	var f leaseFields
	if err := decodeBuiltin(obj, "Lease", "v1", &f); err != nil {
		return err
	}
	keepFields(obj, "spec")
	return nil
}

// ValidateCreate checks the spec.
func (leaseStrategy) ValidateCreate(obj *api.Object) field.ErrorList {
	return validateLease(obj)
}

// ValidateUpdate checks the new spec; every field of a Lease may change.
func (leaseStrategy) ValidateUpdate(obj, _ *api.Object) field.ErrorList {
	return validateLease(obj)
}

func validateLease(obj *api.Object) field.ErrorList {
	var f leaseFields
	if errs := decodeForValidation(obj, &f); errs != nil {
		return errs
	}
	s := f.Spec
	if s == nil {
		return nil
	}
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if s.LeaseDurationSeconds != nil && *s.LeaseDurationSeconds <= 0 {
		errs = append(errs, field.Invalid(spec.Child("leaseDurationSeconds"), *s.LeaseDurationSeconds, "must be greater than 0"))
	}
	if s.LeaseTransitions != nil && *s.LeaseTransitions < 0 {
		errs = append(errs, field.Invalid(spec.Child("leaseTransitions"), *s.LeaseTransitions, "must be greater than or equal to 0"))
	}
	if s.Strategy != nil {
		// kube-apiserver appends "strategy" to a path that already ends in
		// it; the doubled path is what its clients see.
		p := spec.Child("strategy").Child("strategy")
		if !strings.Contains(*s.Strategy, "/") {
			if !slices.Contains(leaseStrategies, *s.Strategy) {
				errs = append(errs, field.NotSupported(p, *s.Strategy, leaseStrategies))
			}
		} else {
			for _, msg := range validation.IsQualifiedName(*s.Strategy) {
				errs = append(errs, field.Invalid(p, *s.Strategy, msg))
			}
		}
	}
	if s.PreferredHolder != nil && *s.PreferredHolder != "" && (s.Strategy == nil || *s.Strategy == "") {
		errs = append(errs, field.Forbidden(spec.Child("preferredHolder"), "may only be specified if `strategy` is defined"))
	}
	return errs
}
