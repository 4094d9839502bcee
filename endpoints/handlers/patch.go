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
	out, err := negotiateOutput(q.r)
	if err != nil {
		q.fail(err)
		return
	}
	dry, err := dryRun(q.r.URL.Query(), "PatchOptions")
	if err != nil {
		q.fail(err)
		return
	}
	ct := q.r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		q.fail(api.NewUnsupportedMediaType(ct, []string{registry.PatchJSON, registry.PatchMerge, registry.PatchStrategicMerge}))
		return
	}
	body, err := readBody(q.r, q.h.maxBody)
	if err != nil {
		q.fail(err)
		return
	}
	stored, err := q.store.Patch(q.r.Context(), q.info.Namespace, q.info.Name, mt, body,
		registry.UpdateOptions{DryRun: dry, Subresource: q.info.Subresource})
	if err != nil {
		q.fail(err)
		return
	}
	writeJSONBytes(q.w, out, http.StatusOK, stored.Data)
}
