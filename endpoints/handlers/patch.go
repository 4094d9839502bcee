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
		q.fail(api.NewUnsupportedMediaType(ct, []string{registry.PatchJSON, registry.PatchMerge, registry.PatchStrategicMerge, registry.PatchApply}))
		return
	}
	out, p, body, ok := q.readBody("PatchOptions", mt)
	if !ok {
		return
	}
	if mt == registry.PatchApply {
		q.apply(out, p, body)
		return
	}
	stored, err := q.store.Patch(q.r.Context(), q.info.Namespace, q.info.Name, mt, body,
		registry.UpdateOptions{DryRun: p.dryRun, Subresource: q.info.Subresource, FieldValidation: p.fieldValidation, FieldManager: p.manager})
	if err != nil {
		q.fail(err)
		return
	}
	q.writeObject(out, http.StatusOK, stored)
}

// apply answers a server-side apply patch: 201 when it created the
// object, 200 otherwise.
func (q *request) apply(out output, p writeParams, body []byte) {
	stored, created, err := q.store.Apply(q.r.Context(), q.info.Namespace, q.info.Name, body, registry.ApplyOptions{
		DryRun: p.dryRun, FieldManager: p.fieldManager, Force: p.force,
		FieldValidation: p.fieldValidation, Subresource: q.info.Subresource,
	})
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
