package handlers

import (
	"net/http"

	"github.com/miniapi/miniapi/registry"
)

// create answers POST on a collection: 201 with the stored object.
func (q *request) create() {
	out, err := negotiateOutput(q.r)
	if err != nil {
		q.fail(err)
		return
	}
	dry, err := dryRun(q.r.URL.Query(), "CreateOptions")
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
	stored, err := q.store.Create(q.r.Context(), q.info.Namespace, obj, registry.CreateOptions{DryRun: dry})
	if err != nil {
		q.fail(err)
		return
	}
	writeJSONBytes(q.w, out, http.StatusCreated, stored.Data)
}
