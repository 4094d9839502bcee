package handlers

import (
	"mime"
	"net/http"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
)

// patch answers PATCH on an object (or its /status). The Content-Type
// names the patch type.
func (q *request) patch() {
	ct := q.r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		q.fail(api.NewUnsupportedMediaType(ct, []string{registry.PatchJSON, registry.PatchMerge, registry.PatchStrategicMerge}))
		return
	}
	out, p, body, ok := q.readBody("PatchOptions", mt)
	if !ok {
		return
	}
	stored, err := q.store.Patch(q.r.Context(), q.info.Namespace, q.info.Name, mt, body,
		registry.UpdateOptions{DryRun: p.dryRun, Subresource: q.info.Subresource, FieldValidation: p.fieldValidation})
	if err != nil {
		q.fail(err)
		return
	}
	q.writeObject(out, http.StatusOK, stored)
}
