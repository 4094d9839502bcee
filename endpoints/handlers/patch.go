package handlers

import (
	"mime"
	"net/http"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// patch answers PATCH on an object (or its /status). The Content-Type
// names the patch type.
func (q *request) patch() {
	mt, ok := q.patchType()
	if !ok {
		return
	}
	out, p, body, ok := q.readBody("PatchOptions", mt)
	if !ok {
		return
	}
	auditRequestPatch(q.r, body)
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

// patchType reads the patch type from the Content-Type. One that names
// no patch type is answered as kube-apiserver answers it: for a built-in
// kind its router's (go-restful's) bare 415, for other types its patch
// handler's, which lists the patch types they take; it reports false
// then. A strategic merge patch for a type that takes none is the
// registry's to refuse, in the patch handler's words.
func (q *request) patchType() (string, bool) {
	mt, _, err := mime.ParseMediaType(q.r.Header.Get("Content-Type"))
	if err == nil {
		switch mt {
		case registry.PatchJSON, registry.PatchMerge, registry.PatchStrategicMerge, registry.PatchApply:
			return mt, true
		}
	}
	if _, builtin := q.t.Strategy.(registry.StrategicMerger); builtin {
		q.fail(api.FromKubeError(apierrors.NewGenericServerResponse(
			http.StatusUnsupportedMediaType, "", schema.GroupResource{}, "", "415: Unsupported Media Type", 0, false)))
	} else {
		q.fail(api.NewUnsupportedMediaType([]string{registry.PatchJSON, registry.PatchMerge, registry.PatchApply}))
	}
	return "", false
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
