package handlers

import (
	"net/http"

	"github.com/miniapi/miniapi/registry"
)

// update answers PUT on an object (or its /status).
func (q *request) update() {
	out, err := negotiateOutput(q.r)
	if err != nil {
		q.fail(err)
		return
	}
	dry, err := dryRun(q.r.URL.Query(), "UpdateOptions")
	if err != nil {
		q.fail(err)
		return
	}
	body, err := readBody(q.r, q.h.maxBody)
	if err != nil {
		q.fail(err)
		return
	}
	obj, err := decodeObject(q.r, body)
	if err != nil {
		q.fail(err)
		return
	}
	stored, err := q.store.Update(q.r.Context(), q.info.Namespace, q.info.Name, obj,
		registry.UpdateOptions{DryRun: dry, Subresource: q.info.Subresource})
	if err != nil {
		q.fail(err)
		return
	}
	writeJSONBytes(q.w, out, http.StatusOK, stored.Data)
}
