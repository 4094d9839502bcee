package handlers

import (
	"fmt"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/audit"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericrequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/miniapi/miniapi/api"
)

// unsafeDeleteVerb is the verb kube-apiserver authorizes, on top of
// delete, for a delete with ignoreStoreReadErrorWithClusterBreakingPotential.
const unsafeDeleteVerb = "unsafe-delete-ignore-read-errors"

// authorizeUnsafeDelete is kube-apiserver's delete handler's check of a
// delete that asks to ignore store read errors: the request is audited
// with kube's annotation, and the user must also be allowed the verb
// unsafe-delete-ignore-read-errors on the resource (RBAC's cluster-admin
// is; admin, edit and view are not). Without an authorizer (plain HTTP,
// where every request is allowed) it allows.
func (q *request) authorizeUnsafeDelete() error {
	ctx := q.r.Context()
	audit.AddAuditAnnotation(ctx, "apiserver.k8s.io/unsafe-delete-ignore-read-error", "")
	if q.h.authz == nil {
		return nil
	}
	u, _ := genericrequest.UserFrom(ctx)
	record := authorizer.AttributesRecord{
		User: u, Verb: unsafeDeleteVerb, Namespace: q.info.Namespace, Name: q.info.Name,
		APIGroup: q.t.Group, APIVersion: q.t.Version, Resource: q.t.Plural, ResourceRequest: true,
	}
	if info, ok := genericrequest.RequestInfoFrom(ctx); ok {
		// The selectors are kube's request info's, as its handler
		// passes them.
		if info.FieldSelector != "" {
			sel, err := fields.ParseSelector(info.FieldSelector)
			if err != nil {
				record.FieldSelectorParsingErr = err
			} else if reqs := sel.Requirements(); len(reqs) > 0 {
				record.FieldSelectorRequirements = reqs
			}
		}
		if info.LabelSelector != "" {
			sel, err := labels.Parse(info.LabelSelector)
			if err != nil {
				record.LabelSelectorParsingErr = err
			} else if reqs, _ := sel.Requirements(); len(reqs) > 0 {
				record.LabelSelectorRequirements = reqs
			}
		}
	}
	// kube's Forbidden error names the object as its admission
	// attributes do.
	attrs := admission.NewAttributesRecord(nil, nil,
		schema.GroupVersionKind{Group: q.t.Group, Version: q.t.Version, Kind: q.t.Kind}, q.info.Namespace, q.info.Name,
		schema.GroupVersionResource{Group: q.t.Group, Version: q.t.Version, Resource: q.t.Plural}, "", admission.Delete, nil, false, u)
	decision, reason, err := q.h.authz.Authorize(ctx, record)
	switch {
	case err != nil:
		err = admission.NewForbidden(attrs, fmt.Errorf("error while checking permission for %q, %w", unsafeDeleteVerb, err))
	case decision == authorizer.DecisionAllow:
		return nil
	default:
		err = admission.NewForbidden(attrs, fmt.Errorf("not permitted to do %q, reason: %s", unsafeDeleteVerb, reason))
	}
	return api.FromKubeError(err)
}
