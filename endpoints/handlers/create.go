package handlers

import (
	"net/http"

	"github.com/miniapi/miniapi/registry"
)

// create answers POST on a collection: 201 with the stored object.
func (q *request) create() {
	out, p, body, ok := q.readWrite("CreateOptions")
	if !ok {
		return
	}
	stored, err := q.store.Create(q.r.Context(), q.info.Namespace, body.json, registry.CreateOptions{
		DryRun: p.dryRun, FieldManager: p.manager, FieldValidation: p.fieldValidation, BodyErrors: body.strict,
	})
	if err != nil {
		q.fail(err)
		return
	}
	q.writeObject(out, http.StatusCreated, stored)
}

// objectBody is a write's object as JSON, converted once from the
// request's encoding, with what the conversion found for strict decoding.
type objectBody struct {
	json   []byte
	strict []string
}

// readWrite does what every write with an object body starts with:
// negotiate the answer, read the write options (optionsKind names the
// options type in errors) and turn the body into JSON. Decoding it is the
// Store's. It answers the error itself and reports false when the
// request is done.
func (q *request) readWrite(optionsKind string) (out output, p writeParams, body objectBody, ok bool) {
	out, p, raw, ok := q.readBody(optionsKind, "")
	if !ok {
		return out, p, body, false
	}
	j, strict, err := bodyToJSON(q.r, q.t, raw)
	if err != nil {
		q.fail(err)
		return out, p, body, false
	}
	auditRequestObject(q.r, q.t, q.info.Subresource, j)
	return out, p, objectBody{json: j, strict: strict}, true
}

// readBody negotiates the answer (an object's, or a Scale's: the same
// forms), reads the write options (patchType is the media type of a
// patch, "" otherwise) and reads the raw body.
func (q *request) readBody(optionsKind, patchType string) (out output, p writeParams, body []byte, ok bool) {
	out, err := negotiateOutput(q.r, q.t)
	if err == nil {
		p, err = parseWriteParams(q.r, optionsKind, patchType)
	}
	if err == nil {
		body, err = readBody(q.w, q.r, q.h.maxBody)
	}
	if err != nil {
		q.fail(err)
		return out, p, nil, false
	}
	return out, p, body, true
}
