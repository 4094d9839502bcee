package registry

import (
	"context"
	"net/http"

	"github.com/miniapi/miniapi/api"
)

// CreateSubresource serves a POST to a subresource that takes an object
// of its own kind acting on the named parent (a pod's binding or
// eviction) through the kind's strategy, answering the object to return.
// A kind without one answers kube's generic 405.
func (s *Store) CreateSubresource(ctx context.Context, subresource, ns, name string, body []byte, opts CreateOptions) ([]byte, error) {
	c, ok := s.t.Strategy.(SubresourceCreater)
	if !ok {
		return nil, api.NewMethodNotAllowed()
	}
	if err := c.CheckSubresource(subresource, body); err != nil {
		return nil, err
	}
	obj, err := decode(body)
	if err != nil {
		// Not an object: the kind's strategy refuses it in its words.
		return c.CreateSubresource(ctx, s, subresource, ns, name, body, opts)
	}
	// As kube-apiserver: the object's namespace is the request's, then
	// the object (an Eviction, a Binding) is admitted as a CREATE of the
	// subresource, before it acts.
	if err := s.checkNamespace(obj, ns); err != nil {
		return nil, err
	}
	if s.reg.Admission() != nil {
		r := &AdmissionRequest{
			Operation: OpCreate, Subresource: subresource, Namespace: ns, Name: name, Object: obj,
			DryRun: opts.DryRun, FieldManager: opts.FieldManager, FieldValidation: opts.FieldValidation,
		}
		if err := s.Admit(ctx, r); err != nil {
			return nil, err
		}
		obj = r.Object
	}
	if body, err = encode(obj); err != nil {
		return nil, err
	}
	return c.CreateSubresource(ctx, s, subresource, ns, name, body, opts)
}

// Connect serves a request to a streaming subresource (log, exec,
// proxy) through the kind's strategy. A kind without one answers 405.
func (s *Store) Connect(ctx context.Context, req ConnectRequest) (http.Handler, error) {
	c, ok := s.t.Strategy.(Connecter)
	if !ok {
		return nil, api.NewMethodNotAllowed()
	}
	return c.Connect(ctx, s, req)
}
