package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
)

// create answers POST on a collection: 201 with the stored object.
func (q *request) create() {
	out, p, obj, ok := q.readWrite("CreateOptions")
	if !ok {
		return
	}
	stored, err := q.store.Create(q.r.Context(), q.info.Namespace, obj, registry.CreateOptions{DryRun: p.dryRun, FieldManager: p.manager})
	if err != nil {
		q.fail(err)
		return
	}
	q.writeObject(out, http.StatusCreated, stored)
}

// readWrite does what every write with an object body starts with:
// negotiate the answer, read the write options (optionsKind names the
// options type in errors), decode the body and check its fields against
// the type's schema as the fieldValidation option asks. It answers the
// error itself and reports false when the request is done.
func (q *request) readWrite(optionsKind string) (out output, p writeParams, obj *api.Object, ok bool) {
	out, p, body, ok := q.readBody(optionsKind, "")
	if !ok {
		return out, p, nil, false
	}
	obj, err := decodeObject(q.r, body)
	if err == nil {
		obj, err = q.checkFields(obj, body, p.fieldValidation)
	}
	if err != nil {
		q.fail(err)
		return out, p, nil, false
	}
	return out, p, obj, true
}

// checkFields applies the fieldValidation directive to a decoded body and
// returns the object to store: obj, or obj without its unknown fields.
func (q *request) checkFields(obj *api.Object, body []byte, directive string) (*api.Object, error) {
	j, yamlErrs, ok := fieldCheckJSON(q.r, body)
	if !ok {
		return obj, nil // protobuf: no unknown or duplicate fields to find
	}
	pruned, err := q.store.CheckFields(q.r.Context(), j, directive, yamlErrs)
	if err != nil || pruned == nil {
		return obj, err
	}
	var out api.Object
	if err := json.Unmarshal(pruned, &out); err != nil {
		return nil, fmt.Errorf("handlers: decode pruned object: %w", err)
	}
	return &out, nil
}

// readBody negotiates the answer, reads the write options (patchType is
// the media type of a patch, "" otherwise) and reads the raw body.
func (q *request) readBody(optionsKind, patchType string) (out output, p writeParams, body []byte, ok bool) {
	return q.readBodyAs(negotiateOutput, optionsKind, patchType)
}

// readBodyAs is readBody with the answer negotiated by negotiate (a
// subresource such as /scale has its own forms).
func (q *request) readBodyAs(negotiate func(*http.Request) (output, error), optionsKind, patchType string) (out output, p writeParams, body []byte, ok bool) {
	out, err := negotiate(q.r)
	if err == nil {
		p, err = parseWriteParams(q.r, optionsKind, patchType)
	}
	if err == nil {
		body, err = readBody(q.r, q.h.maxBody)
	}
	if err != nil {
		q.fail(err)
		return out, p, nil, false
	}
	return out, p, body, true
}
