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
	if s.reg.Admission() != nil {
		// As kube-apiserver: the object sent (an Eviction, a Binding) is
		// admitted as a CREATE of the subresource, before it acts.
		obj, err := decode(body)
		if err != nil {
			// Not an object: the kind's strategy refuses it in its words.
			return c.CreateSubresource(ctx, s, subresource, ns, name, body, opts)
		}
		r := &AdmissionRequest{
			Operation: OpCreate, Subresource: subresource, Namespace: ns, Name: name, Object: obj,
			DryRun: opts.DryRun, FieldManager: opts.FieldManager, FieldValidation: opts.FieldValidation,
		}
		if err := s.Admit(ctx, r); err != nil {
			return nil, err
		}
		if body, err = encode(r.Object); err != nil {
			return nil, err
		}
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
