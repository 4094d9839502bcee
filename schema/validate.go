package schema

import (
	"context"

	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/common"
)

// Validate checks obj, a whole object as generic JSON, against the
// schema, as kube-apiserver validates a custom resource: the OpenAPI
// keywords (type, properties, required, enum, pattern, format, bounds,
// lengths, sizes, uniqueItems, nullable, additionalProperties,
// x-kubernetes-int-or-string, x-kubernetes-preserve-unknown-fields), the
// apiVersion, kind and metadata of embedded resources, the uniqueness of
// x-kubernetes-list-type set and map entries, then the CEL
// x-kubernetes-validations rules within kube's runtime cost budget.
//
// old is the previous state on update, nil on create. With old, errors in
// parts of the object that did not change are dropped ("ratcheting", as
// kube-apiserver does since 1.30), list uniqueness is only enforced when
// the old object satisfied it, and transition rules (rules using oldSelf)
// run where an old value correlates.
//
// As in kube-apiserver, CEL rules are skipped when the object already
// fails in a way that makes their input meaningless (a wrong type, a
// missing required field, an unsupported enum value, too long or too
// many), with one error saying so. Errors are at paths from the object
// root, in kube's words. metadata at the root is not checked here: the
// store validates ObjectMeta for every type.
func (s *Schema) Validate(obj, old map[string]any) field.ErrorList {
	ctx := context.Background()
	var (
		errs       field.ErrorList
		opts       []validation.ValidationOption
		celOpts    []cel.Option
		correlated *common.CorrelatedObject
	)
	if old != nil && s.structural != nil {
		correlated = common.NewCorrelatedObject(obj, old, &model.Structural{Structural: s.structural})
		opts = append(opts, validation.WithRatcheting(correlated))
		celOpts = append(celOpts, cel.WithRatcheting(correlated))
	}
	if old != nil {
		errs = append(errs, validation.ValidateCustomResourceUpdate(nil, obj, old, s.validator, opts...)...)
	} else {
		errs = append(errs, validation.ValidateCustomResource(nil, obj, s.validator)...)
	}
	if s.structural == nil {
		return errs
	}
	errs = append(errs, objectmeta.Validate(ctx, nil, obj, s.structural, false)...)
	if old == nil || len(listtype.ValidateListSetsAndMaps(nil, s.structural, old)) == 0 {
		errs = append(errs, listtype.ValidateListSetsAndMaps(nil, s.structural, obj)...)
	}
	if s.cel != nil {
		if blocking := blockingError(errs); blocking != nil {
			return append(errs, blocking)
		}
		var oldAny any
		if old != nil {
			oldAny = old
		}
		celErrs, _ := s.cel.Validate(ctx, nil, s.structural, obj, oldAny, celconfig.RuntimeCELCostBudget, celOpts...)
		errs = append(errs, celErrs...)
	}
	return errs
}

// blockingError returns the error kube-apiserver adds instead of running
// CEL rules on an object whose shape is already wrong, or nil.
func blockingError(errs field.ErrorList) *field.Error {
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong,
			field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation")
		}
	}
	return nil
}
