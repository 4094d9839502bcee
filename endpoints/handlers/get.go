package handlers

import (
	"net/http"

	"github.com/miniapi/miniapi/storage"
)

// get answers GET on an object (or its /status).
func (q *request) get() {
	out, err := negotiateOutput(q.r, q.t)
	if err != nil {
		q.fail(err)
		return
	}
	rv, ok := q.getResourceVersion()
	if !ok {
		return
	}
	obj, err := q.store.Get(q.r.Context(), q.info.Namespace, q.info.Name, rv)
	if err != nil {
		q.fail(err)
		return
	}
	q.writeObject(out, http.StatusOK, obj)
}

// getResourceVersion reads ?resourceVersion= for a get: "", "0" or a
// revision; anything else is answered 400 and reported false.
func (q *request) getResourceVersion() (string, bool) {
	rv := q.r.URL.Query().Get("resourceVersion")
	if _, err := storage.ParseResourceVersion(rv); err != nil {
		q.fail(badParam(err))
		return "", false
	}
	return rv, true
}
