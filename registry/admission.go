package registry

import (
	"context"

	"github.com/miniapi/miniapi/api"
)

// Admission is the admission chain every write passes, as kube-apiserver's
// handlers and generic store call theirs: Mutate once the write's
// managedFields are recorded and before the kind's rules judge it,
// Validate after they have, right before storage. The chain itself is
// kube's admission plugins behind an adapter (package admission); the
// Store knows only this interface and its plain objects.
type Admission interface {
	// Mutate runs the mutating plugins (webhooks, policies, defaults
	// such as a pod's service account). They may change r.Object, which
	// the Store then judges and stores as changed. An error refuses the
	// write and is answered as it is (a StatusError keeps its Status).
	Mutate(ctx context.Context, r *AdmissionRequest) error
	// Validate runs the validating plugins; they may not change
	// anything.
	Validate(ctx context.Context, r *AdmissionRequest) error
}

// Admission operations, as kube's admission names them.
const (
	OpCreate  = "CREATE"
	OpUpdate  = "UPDATE"
	OpDelete  = "DELETE"
	OpConnect = "CONNECT"
)

// AdmissionRequest is one write as admission sees it.
type AdmissionRequest struct {
	// Type is the resource written.
	Type *Type
	// Operation is OpCreate, OpUpdate, OpDelete or OpConnect.
	Operation string
	// Subresource is the subresource written ("" for the main resource).
	Subresource string
	// Namespace and Name name the object ("" Name for a create whose
	// name is still to be generated).
	Namespace, Name string
	// Object is the object to store (nil for DELETE); mutating plugins
	// change it in place or replace *Object.
	Object *api.Object
	// OldObject is the stored object an UPDATE or DELETE replaces.
	OldObject *api.Object
	// DryRun is set for a request that stores nothing.
	DryRun bool
	// FieldManager and FieldValidation are the request's options, for
	// webhooks' AdmissionReview (CreateOptions, UpdateOptions).
	FieldManager, FieldValidation string
	// PropagationPolicy and GracePeriodSeconds are a DELETE's options.
	PropagationPolicy  string
	GracePeriodSeconds *int64
}

// SetAdmission installs the admission chain of every Store's writes; nil
// removes it (writes are then admitted as they are).
func (r *Registry) SetAdmission(a Admission) {
	if a == nil {
		r.admission.Store(nil)
		return
	}
	r.admission.Store(&a)
}

// Admission returns the registry's admission chain, or nil.
func (r *Registry) Admission() Admission {
	if p := r.admission.Load(); p != nil {
		return *p
	}
	return nil
}

// admitMutate runs mutating admission on a write, if a chain is installed.
func (s *Store) admitMutate(ctx context.Context, r *AdmissionRequest) error {
	a := s.reg.Admission()
	if a == nil {
		return nil
	}
	r.Type = s.t
	return a.Mutate(ctx, r)
}

// admitValidate runs validating admission on a write, if a chain is
// installed.
func (s *Store) admitValidate(ctx context.Context, r *AdmissionRequest) error {
	a := s.reg.Admission()
	if a == nil {
		return nil
	}
	r.Type = s.t
	return a.Validate(ctx, r)
}

// Admit runs mutating then validating admission on a request the Store
// does not write itself: a connection to a streaming subresource (a
// pod's exec, with its options as r.Object) or a subresource whose
// object acts on its parent (an eviction). r.Object may be changed.
func (s *Store) Admit(ctx context.Context, r *AdmissionRequest) error {
	r.Namespace = s.namespaceOf(r.Namespace)
	if err := s.admitMutate(ctx, r); err != nil {
		return err
	}
	return s.admitValidate(ctx, r)
}
