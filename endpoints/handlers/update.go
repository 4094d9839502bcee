package handlers

import (
	"context"
	"net/http"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	genericrequest "k8s.io/apiserver/pkg/endpoints/request"
)

// update answers PUT on an object (or its /status): 200 with the object
// updated, or 201 with the object a kind kube-apiserver creates on
// update (a Lease, a Service, a Role ...) created.
func (q *request) update() {
	out, p, body, ok := q.readWrite("UpdateOptions")
	if !ok {
		return
	}
	stored, created, err := q.store.Put(q.r.Context(), q.info.Namespace, q.info.Name, body.json, registry.UpdateOptions{
		DryRun: p.dryRun, Subresource: q.info.Subresource, FieldManager: p.manager,
		FieldValidation: p.fieldValidation, BodyErrors: body.strict,
	}, q.authorizeCreate)
	if err != nil {
		q.fail(err)
		return
	}
	code := http.StatusOK
	if created {
		code = http.StatusCreated
	}
	q.writeObject(out, code, stored)
}

// authorizeCreate is kube-apiserver's check before a PUT creates the
// object it names: the client, authorized to update it, must also be
// allowed to create it; refused, it is kube's Forbidden with the
// authorizer's reason.
func (q *request) authorizeCreate(ctx context.Context) error {
	if q.h.authz == nil {
		return nil
	}
	u, _ := genericrequest.UserFrom(ctx)
	attrs := authorizer.AttributesRecord{
		User: u, Verb: "create", Namespace: q.info.Namespace, Name: q.info.Name, Path: q.r.URL.Path,
		APIGroup: q.t.Group, APIVersion: q.t.Version, Resource: q.t.Plural, ResourceRequest: true,
	}
	decision, reason, err := q.h.authz.Authorize(ctx, attrs)
	switch {
	case decision == authorizer.DecisionAllow:
		return nil
	case err != nil:
		return api.NewInternalError(err)
	}
	return api.FromKubeError(responsewriters.ForbiddenStatusError(attrs, reason))
}
