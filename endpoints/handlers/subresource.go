package handlers

import (
	"net/http"
	"slices"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	"github.com/miniapi/miniapi/storage"
)

// createSubresource answers POST to a subresource that takes an object
// of its own kind acting on its parent (a pod's binding or eviction): the
// kind's strategy serves it and answers the object to return.
func (q *request) createSubresource() {
	if _, ok := q.t.Strategy.(registry.SubresourceCreater); !ok {
		q.notAllowed()
		return
	}
	out, p, body, ok := q.readWrite("CreateOptions")
	if !ok {
		return
	}
	data, err := q.store.CreateSubresource(q.r.Context(), q.info.Subresource, q.info.Namespace, q.info.Name, body.json,
		registry.CreateOptions{DryRun: p.dryRun, FieldManager: p.manager, FieldValidation: p.fieldValidation, BodyErrors: body.strict})
	if err != nil {
		q.fail(err)
		return
	}
	writeAnswer(q.w, out, http.StatusCreated, data)
}

// connect answers a streaming subresource (log, exec, attach,
// portforward, proxy): the kind's strategy checks the request as
// kube-apiserver does and hands back what serves the rest of it. miniapi
// runs no kubelet and proxies to nothing, so that ends in the error
// kube-apiserver gives when the backend cannot be reached.
func (q *request) connect(sr registry.Subresource) {
	verb := verbOf(q.r.Method)
	if sr.Name == "proxy" && (q.r.Method == http.MethodOptions || q.r.Method == http.MethodHead) {
		// A proxy passes every method on; HEAD and OPTIONS are gets.
		verb = "get"
	}
	if !slices.Contains(sr.Verbs, verb) {
		// kube-apiserver's router has no route for the method; a kind
		// without a connecter gets the same answer from the Store.
		q.notAllowed()
		return
	}
	h, err := q.store.Connect(q.r.Context(), registry.ConnectRequest{
		Subresource: sr.Name, Namespace: q.info.Namespace, Name: q.info.Name, Verb: verb,
		Path: q.info.SubPath, Query: q.r.URL.Query(), Fail: q.fail,
	})
	if err != nil {
		q.fail(err)
		return
	}
	h.ServeHTTP(q.w, q.r)
}

// virtual serves a resource kube-apiserver does not store (bindings,
// componentstatuses): the verbs its strategy serves, 405 otherwise.
func (q *request) virtual(watch bool) {
	verbs := q.t.Strategy.(registry.Virtual).Verbs()
	verb := verbOf(q.r.Method)
	switch {
	case watch:
		verb = "watch"
	case verb == "get" && q.info.Name == "":
		verb = "list"
	}
	switch {
	case verb == "watch" && !slices.Contains(verbs, verb) && q.info.Subresource == "":
		// kube-apiserver has no legacy /watch/ route for what it cannot
		// watch, and refuses ?watch= on a list it serves by name.
		if q.info.Watch {
			q.fail(api.NewGenericNotFound())
		} else if slices.Contains(verbs, "list") {
			q.fail(api.NewMethodNotSupported(q.t.GroupResource(), verb))
		} else {
			q.notAllowed()
		}
		return
	case !slices.Contains(verbs, verb) || q.info.Subresource != "":
		q.notAllowed()
		return
	}
	out, err := negotiateOutput(q.r, q.t)
	if err != nil {
		q.fail(err)
		return
	}
	ctx := q.r.Context()
	switch verb {
	case "create":
		c := q.t.Strategy.(registry.VirtualCreater)
		out, p, body, ok := q.readWrite("CreateOptions")
		if !ok {
			return
		}
		data, err := c.CreateVirtual(ctx, q.h.reg, q.info.Namespace, body.json,
			registry.CreateOptions{DryRun: p.dryRun, FieldManager: p.manager, FieldValidation: p.fieldValidation, BodyErrors: body.strict})
		if err != nil {
			q.fail(err)
			return
		}
		writeAnswer(q.w, out, http.StatusCreated, data)
	case "get":
		data, err := q.t.Strategy.(registry.VirtualReader).GetVirtual(ctx, q.info.Name)
		if err != nil {
			q.fail(err)
			return
		}
		q.writeObject(out, http.StatusOK, &storage.Object{Data: data})
	case "list":
		items, err := q.t.Strategy.(registry.VirtualReader).ListVirtual(ctx)
		if err != nil {
			q.fail(err)
			return
		}
		objs := make([]*storage.Object, len(items))
		for i, d := range items {
			objs[i] = &storage.Object{Data: d}
		}
		q.writeItems(out, http.StatusOK, api.ListMeta{}, objs)
	default:
		q.notAllowed()
	}
}
