package handlers

import (
	"net/http"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
)

// create answers POST on a collection: 201 with the stored object.
func (q *request) create() {
	out, dry, obj, ok := q.readWrite("CreateOptions")
	if !ok {
		return
	}
	stored, err := q.store.Create(q.r.Context(), q.info.Namespace, obj, registry.CreateOptions{DryRun: dry})
	if err != nil {
		q.fail(err)
		return
	}
	q.writeObject(out, http.StatusCreated, stored)
}

// readWrite does what every write with an object body starts with:
// negotiate the answer, read dryRun (optionsKind names the options type in
// errors) and decode the body. It answers the error itself and reports
// false when the request is done.
func (q *request) readWrite(optionsKind string) (out output, dry bool, obj *api.Object, ok bool) {
	out, dry, body, ok := q.readBody(optionsKind)
	if !ok {
		return out, false, nil, false
	}
	obj, err := decodeObject(q.r, body)
	if err != nil {
		q.fail(err)
		return out, false, nil, false
	}
	return out, dry, obj, true
}

// readBody negotiates the answer, reads dryRun and reads the raw body.
func (q *request) readBody(optionsKind string) (out output, dry bool, body []byte, ok bool) {
	out, err := negotiateOutput(q.r)
	if err == nil {
		dry, err = dryRun(q.r.URL.Query(), optionsKind)
	}
	if err == nil {
		body, err = readBody(q.r, q.h.maxBody)
	}
	if err != nil {
		q.fail(err)
		return out, false, nil, false
	}
	return out, dry, body, true
}
