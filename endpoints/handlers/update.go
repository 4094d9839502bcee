package handlers

import (
	"net/http"

	"github.com/miniapi/miniapi/registry"
)

// update answers PUT on an object (or its /status).
func (q *request) update() {
	out, p, body, ok := q.readWrite("UpdateOptions")
	if !ok {
		return
	}
	stored, err := q.store.Update(q.r.Context(), q.info.Namespace, q.info.Name, body.json, registry.UpdateOptions{
		DryRun: p.dryRun, Subresource: q.info.Subresource, FieldManager: p.manager,
		FieldValidation: p.fieldValidation, BodyErrors: body.strict,
	})
	if err != nil {
		q.fail(err)
		return
	}
	q.writeObject(out, http.StatusOK, stored)
}
