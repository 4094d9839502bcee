package registry

import (
	"context"
	"fmt"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/storage"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// DeleteOptions qualify a Delete.
type DeleteOptions struct {
	DryRun            bool
	Preconditions     *api.Preconditions
	PropagationPolicy string
}

// Delete removes the named object and returns its last state. An object
// with finalizers is not removed: it is marked with a deletionTimestamp
// and returned with deleted false, and goes once its finalizers are gone.
func (s *Store) Delete(ctx context.Context, ns, name string, opts DeleteOptions) (obj *storage.Object, deleted bool, err error) {
	ns = s.namespaceOf(ns)
	if err := validatePropagation(s.t.GroupKind(), name, opts.PropagationPolicy); err != nil {
		return nil, false, err
	}
	key := s.keys.Key(ns, name)
	pre := storagePreconditions(opts.Preconditions)
	for {
		cur, err := s.storage.Get(ctx, key, storage.GetOptions{})
		if err != nil {
			return nil, false, s.statusErr(err, name)
		}
		curObj, err := decode(cur.Data)
		if err != nil {
			return nil, false, err
		}
		if err := s.checkPreconditions(name, curObj, opts.Preconditions); err != nil {
			return nil, false, err
		}
		if len(curObj.Metadata.Finalizers) > 0 {
			return s.markDeleting(ctx, ns, name, opts)
		}
		if opts.DryRun {
			return cur, true, nil
		}
		out, err := s.storage.Delete(ctx, key, storage.DeleteOptions{
			Preconditions: pre,
			Validate: func(c *storage.Object) error {
				o, err := decode(c.Data)
				if err != nil {
					return err
				}
				if len(o.Metadata.Finalizers) > 0 {
					return errFinalizersAppeared
				}
				return nil
			},
		})
		if err == errFinalizersAppeared {
			continue // a finalizer was added meanwhile: mark instead
		}
		return out, err == nil, s.statusErr(err, name)
	}
}

// errFinalizersAppeared aborts a delete that raced with a finalizer being
// added; Delete then marks the object instead.
var errFinalizersAppeared = fmt.Errorf("registry: finalizers appeared during delete")

// markDeleting sets deletionTimestamp on an object that has finalizers.
func (s *Store) markDeleting(ctx context.Context, ns, name string, opts DeleteOptions) (*storage.Object, bool, error) {
	out, err := s.update(ctx, ns, name, UpdateOptions{DryRun: opts.DryRun, markDeleting: true}, func(cur *api.Object) (*api.Object, error) {
		if err := s.checkPreconditions(name, cur, opts.Preconditions); err != nil {
			return nil, err
		}
		return cur, nil
	})
	return out, false, err
}

// checkPreconditions compares uid and resourceVersion preconditions with
// the current object, answering 409 Conflict as kube-apiserver does.
func (s *Store) checkPreconditions(name string, cur *api.Object, p *api.Preconditions) error {
	if p == nil {
		return nil
	}
	if p.UID != nil && *p.UID != cur.Metadata.UID {
		return api.NewConflict(s.t.GroupResource(), name,
			fmt.Sprintf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, cur.Metadata.UID))
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != cur.Metadata.ResourceVersion {
		return api.NewConflict(s.t.GroupResource(), name,
			fmt.Sprintf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *p.ResourceVersion, cur.Metadata.ResourceVersion))
	}
	return nil
}

func storagePreconditions(p *api.Preconditions) *storage.Preconditions {
	if p == nil {
		return nil
	}
	return &storage.Preconditions{UID: p.UID, ResourceVersion: p.ResourceVersion}
}

// validatePropagation accepts the propagation policies Kubernetes defines.
func validatePropagation(gk api.GroupKind, name, policy string) error {
	switch policy {
	case "", api.DeletePropagationBackground, api.DeletePropagationForeground, api.DeletePropagationOrphan:
		return nil
	}
	return api.NewInvalid(gk, name, field.ErrorList{field.NotSupported(field.NewPath("propagationPolicy"), policy,
		[]string{api.DeletePropagationForeground, api.DeletePropagationBackground, api.DeletePropagationOrphan})})
}

// DeleteCollection deletes every object in ns matching opts and returns
// the deleted objects.
func (s *Store) DeleteCollection(ctx context.Context, ns string, list ListOptions, opts DeleteOptions) ([]*storage.Object, error) {
	list.Limit, list.Continue, list.ResourceVersion, list.ResourceVersionMatch = 0, "", "", ""
	all, err := s.List(ctx, ns, list)
	if err != nil {
		return nil, err
	}
	var out []*storage.Object
	for _, item := range all.Items {
		o, err := decode(item.Data)
		if err != nil {
			return nil, err
		}
		d, _, err := s.Delete(ctx, o.Metadata.Namespace, o.Metadata.Name, DeleteOptions{DryRun: opts.DryRun, PropagationPolicy: opts.PropagationPolicy})
		if api.IsNotFound(err) {
			continue // deleted by someone else meanwhile
		}
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}
