package registry

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/journal"
	"github.com/miniapi/miniapi/storage"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/registry/rest"
	kubestorage "k8s.io/apiserver/pkg/storage"
	storeerr "k8s.io/apiserver/pkg/storage/errors"
)

// DeleteOptions qualify a Delete.
type DeleteOptions struct {
	DryRun        bool
	Preconditions *api.Preconditions
	// PropagationPolicy is what happens to the object's dependents:
	// api.DeletePropagationOrphan, Foreground or Background. "" leaves
	// the choice to the orphan or foregroundDeletion finalizer the object
	// may already carry, then to the kind's default
	// (GarbageCollectionDefaulter), as kube-apiserver does.
	PropagationPolicy string
	// IgnoreStoreReadError is kube's
	// ignoreStoreReadErrorWithClusterBreakingPotential: delete an object
	// storage cannot read, without its checks. miniapi stores none, so
	// the delete is refused as kube's storage refuses it for an object
	// it can read (409), or answered 404 when there is no object.
	IgnoreStoreReadError bool
	// GracePeriodSeconds is the grace period the client asked for; nil
	// leaves it to the kind. Only kinds with graceful deletion
	// (GracefulDeleter: pods) use it.
	GracePeriodSeconds *int64

	// warned: DeleteCollection has recorded the kind's warnings for
	// the whole collection already.
	warned bool
}

// DeletionHolder is implemented by strategies whose objects outlive their
// metadata.finalizers: a Namespace stays, phase Terminating, until its
// spec.finalizers are empty as well, as kube-apiserver's namespace
// storage keeps it.
type DeletionHolder interface {
	// PrepareForDelete records on obj that its deletion has begun (a
	// Namespace moves to Terminating). The Store calls it once, when it
	// sets deletionTimestamp.
	PrepareForDelete(obj *api.Object)
	// HoldsDeletion reports whether obj, being deleted, must stay even
	// with no metadata.finalizers left.
	HoldsDeletion(obj *api.Object) bool
}

// FinalizeSubresource is implemented by strategies whose type has a
// /finalize subresource, the only way to change spec.finalizers (a
// Namespace's): updates of the main resource keep them.
type FinalizeSubresource interface {
	// PrepareForFinalize turns obj, the desired object of an update
	// through /finalize, into old with only obj's spec.finalizers.
	PrepareForFinalize(obj, old *api.Object)
}

// Delete removes the named object and returns its last state, with
// deleted true. An object that finalizers keep, or that the propagation
// policy gives the orphan or foregroundDeletion finalizer, is marked
// instead: deletionTimestamp and deletionGracePeriodSeconds 0 are set, it
// is returned with deleted false, and it goes once an update removes its
// last finalizer. A DeletionHolder's object (a Namespace) is marked on
// its first delete whatever its finalizers, as kube-apiserver does.
func (s *Store) Delete(ctx context.Context, ns, name string, opts DeleteOptions) (obj *storage.Object, deleted bool, err error) {
	ns = s.namespaceOf(ns)
	if err := validatePropagation(opts.PropagationPolicy); err != nil {
		return nil, false, err
	}
	key := s.keys.Key(ns, name)
	pre := storagePreconditions(opts.Preconditions)
	_, holder := s.t.Strategy.(DeletionHolder)
	// As kube-apiserver's delete handler and generic store: mutating
	// admission sees the request alone, validating admission the object
	// it deletes, once its preconditions hold.
	admission := &AdmissionRequest{
		Operation: OpDelete, Namespace: ns, Name: name, DryRun: opts.DryRun,
		PropagationPolicy: opts.PropagationPolicy, GracePeriodSeconds: opts.GracePeriodSeconds,
	}
	if err := s.admitMutate(ctx, admission); err != nil {
		return nil, false, err
	}
	if !opts.warned {
		s.warnDelete(ctx, ns, name, opts.PropagationPolicy)
	}
	for {
		cur, err := s.storage.Get(ctx, key, storage.GetOptions{})
		if err != nil {
			return nil, false, s.statusErr(err, name)
		}
		if opts.IgnoreStoreReadError {
			return nil, false, s.unsafeDeleteRefused(key, name)
		}
		curObj, err := decode(cur.Data)
		if err != nil {
			return nil, false, err
		}
		if err := s.checkDeletePreconditions(ctx, curObj, opts.Preconditions); err != nil {
			return nil, false, err
		}
		admission.OldObject = curObj
		if err := s.admitValidate(ctx, admission); err != nil {
			return nil, false, err
		}
		uid := curObj.Metadata.UID
		if holder && curObj.Metadata.DeletionTimestamp == nil {
			out, err := s.markDeleting(ctx, ns, name, uid, opts)
			if errors.Is(err, errRecreated) {
				continue
			}
			return out, false, err
		}
		if s.holdsDeletion(curObj) {
			// Deleting again changes nothing while spec.finalizers hold
			// it; kube-apiserver answers the object as it is.
			return cur, false, nil
		}
		if g, ok := s.t.Strategy.(GracefulDeleter); ok {
			marked := curObj.DeepCopy()
			graceful, pending, err := g.BeforeDelete(ctx, marked, opts.GracePeriodSeconds)
			if err != nil {
				return nil, false, err
			}
			if pending {
				// A longer grace period is running already: as in
				// kube-apiserver, the object is answered as it is.
				return cur, false, nil
			}
			if graceful {
				out, err := s.markGraceful(ctx, ns, name, uid, &marked.Metadata, opts)
				if errors.Is(err, errRecreated) {
					continue
				}
				if err != nil || !zeroGrace(&marked.Metadata) {
					return out, false, err
				}
				// A grace period of 0 (a force delete): as kube-apiserver,
				// the object marked is deleted at once, unless finalizers
				// hold it; the next round finds it marked and deletes it.
				// A resourceVersion precondition now names the marked
				// object, as kube's store updates it, or the next round
				// would refuse the delete this one began.
				if p := opts.Preconditions; p != nil && p.ResourceVersion != nil && out != nil {
					rv := strconv.FormatInt(out.Revision, 10)
					opts.Preconditions = &api.Preconditions{UID: p.UID, ResourceVersion: &rv}
					pre = storagePreconditions(opts.Preconditions)
				}
				if opts.DryRun {
					held := len(s.deletionFinalizers(ctx, marked.Metadata.Finalizers, opts.PropagationPolicy)) > 0
					if !held {
						s.afterDelete(out, true)
					}
					return out, !held, nil
				}
				continue
			}
		}
		if len(s.deletionFinalizers(ctx, curObj.Metadata.Finalizers, opts.PropagationPolicy)) > 0 {
			out, err := s.markDeleting(ctx, ns, name, uid, opts)
			if errors.Is(err, errFinalizersGone) || errors.Is(err, errRecreated) {
				continue // look again: delete instead, or judge the new object
			}
			return out, false, err
		}
		if opts.DryRun {
			s.afterDelete(cur, true)
			return cur, true, nil
		}
		var prev int64 // the revision deleted
		out, err := s.storage.Delete(ctx, key, storage.DeleteOptions{
			Preconditions: pre,
			Validate: func(c *storage.Object) error {
				prev = c.Revision
				o, err := decode(c.Data)
				if err != nil {
					return err
				}
				if o.Metadata.UID != uid {
					return errRecreated
				}
				if len(s.deletionFinalizers(ctx, o.Metadata.Finalizers, opts.PropagationPolicy)) > 0 || s.holdsDeletion(o) {
					return errFinalizersAppeared
				}
				return nil
			},
		})
		if errors.Is(err, errFinalizersAppeared) || errors.Is(err, errRecreated) {
			continue // look again: mark instead, or judge the new object
		}
		if err == nil {
			s.afterDelete(out, false)
			journal.Wrote(ctx, name, prev, out.Revision)
		}
		return out, err == nil, s.statusErr(err, name)
	}
}

// Sentinels that send Delete round its loop again after a race.
var (
	// errFinalizersAppeared aborts a delete that raced with a finalizer
	// being added; Delete then marks the object instead.
	errFinalizersAppeared = errors.New("registry: finalizers appeared during delete")
	// errFinalizersGone aborts a mark that raced with the last finalizer
	// being removed; Delete then deletes the object instead.
	errFinalizersGone = errors.New("registry: finalizers went during delete")
	// errRecreated aborts a delete or mark that found another object of
	// the same name, created after the one Delete read.
	errRecreated = errors.New("registry: object recreated during delete")
)

// markDeleting sets deletionTimestamp on the object with uid and gives it
// the finalizers opts.PropagationPolicy asks for.
func (s *Store) markDeleting(ctx context.Context, ns, name, uid string, opts DeleteOptions) (*storage.Object, error) {
	_, holder := s.t.Strategy.(DeletionHolder)
	return s.update(ctx, ns, name, UpdateOptions{DryRun: opts.DryRun, markDeleting: true}, func(cur *api.Object) (*api.Object, error) {
		if cur.Metadata.UID != uid {
			return nil, errRecreated
		}
		if err := s.checkPreconditions(name, cur, opts.Preconditions); err != nil {
			return nil, err
		}
		cur.Metadata.Finalizers = s.deletionFinalizers(ctx, cur.Metadata.Finalizers, opts.PropagationPolicy)
		if len(cur.Metadata.Finalizers) == 0 && !holder {
			return nil, errFinalizersGone
		}
		return cur, nil
	})
}

// zeroGrace reports whether m's grace period is over before it starts.
func zeroGrace(m *api.ObjectMeta) bool {
	return m.DeletionGracePeriodSeconds != nil && *m.DeletionGracePeriodSeconds == 0
}

// markGraceful writes the deletionTimestamp and grace period a
// GracefulDeleter chose (in marked) on the object with uid, with the
// finalizers the propagation policy asks for. The object stays until it
// is deleted again once its grace period is over (by a kubelet, in a
// cluster; by a client with gracePeriodSeconds=0 here), or at once when
// the period is 0.
func (s *Store) markGraceful(ctx context.Context, ns, name, uid string, marked *api.ObjectMeta, opts DeleteOptions) (*storage.Object, error) {
	return s.update(ctx, ns, name, UpdateOptions{DryRun: opts.DryRun, markDeleting: true, graceful: marked}, func(cur *api.Object) (*api.Object, error) {
		if cur.Metadata.UID != uid {
			return nil, errRecreated
		}
		if err := s.checkPreconditions(name, cur, opts.Preconditions); err != nil {
			return nil, err
		}
		cur.Metadata.Finalizers = s.deletionFinalizers(ctx, cur.Metadata.Finalizers, opts.PropagationPolicy)
		return cur, nil
	})
}

// deletionFinalizers returns the finalizers an object keeps when deleted
// with policy, as kube's store decides them: Orphan asks the garbage
// collector to orphan its dependents first (the orphan finalizer),
// Foreground to delete them first (foregroundDeletion), Background for
// neither; with no policy, an orphan or foregroundDeletion finalizer the
// object carries decides, then the kind's default. With
// Config.DisableGarbageCollection (kube-apiserver's
// --enable-garbage-collector=false) none are added; nor to a kind whose
// policy is Unsupported. When the set is unchanged, fins is
// returned as it is, order included.
func (s *Store) deletionFinalizers(ctx context.Context, fins []string, policy string) []string {
	if s.reg.cfg.DisableGarbageCollection {
		return fins
	}
	def := DeleteDependents
	if d, ok := s.t.Strategy.(GarbageCollectionDefaulter); ok {
		def = d.DefaultGarbageCollectionPolicy(ctx)
	}
	if def == Unsupported {
		return fins
	}
	var orphan, foreground bool
	switch policy {
	case api.DeletePropagationOrphan:
		orphan = true
	case api.DeletePropagationForeground:
		foreground = true
	case api.DeletePropagationBackground:
	default:
		switch firstGCFinalizer(fins) {
		case metav1.FinalizerOrphanDependents:
			orphan = true
		case metav1.FinalizerDeleteDependents:
			foreground = true
		default:
			orphan = def == OrphanDependents
		}
	}
	out := make([]string, 0, len(fins)+1)
	for _, f := range fins {
		if f != metav1.FinalizerOrphanDependents && f != metav1.FinalizerDeleteDependents {
			out = append(out, f)
		}
	}
	if orphan {
		out = append(out, metav1.FinalizerOrphanDependents)
	}
	if foreground {
		out = append(out, metav1.FinalizerDeleteDependents)
	}
	if sameSet(out, fins) {
		return fins
	}
	return out
}

// firstGCFinalizer returns the first of the orphan and foregroundDeletion
// finalizers in fins, or "".
func firstGCFinalizer(fins []string) string {
	for _, f := range fins {
		if f == metav1.FinalizerOrphanDependents || f == metav1.FinalizerDeleteDependents {
			return f
		}
	}
	return ""
}

// sameSet reports whether a and b hold the same strings, ignoring order
// and repeats.
func sameSet(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			return false
		}
	}
	return true
}

// holdsDeletion reports whether obj's strategy keeps it although its
// metadata.finalizers are empty.
func (s *Store) holdsDeletion(obj *api.Object) bool {
	h, ok := s.t.Strategy.(DeletionHolder)
	return ok && obj.Metadata.DeletionTimestamp != nil && h.HoldsDeletion(obj)
}

// checkDeletePreconditions is kube-apiserver's first look at a delete's
// preconditions, before anything is written: its rest.BeforeDelete,
// given the current object's identity, answers 409 Conflict naming the
// kind ("the UID in the precondition (x) does not match the UID in
// record (y)..."). The looks inside the write (checkPreconditions) are
// its storage's, in its storage's words.
func (s *Store) checkDeletePreconditions(ctx context.Context, cur *api.Object, p *api.Preconditions) error {
	if p == nil {
		return nil
	}
	obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name: cur.Metadata.Name, Namespace: cur.Metadata.Namespace,
		UID: types.UID(cur.Metadata.UID), ResourceVersion: cur.Metadata.ResourceVersion,
	}}
	opts := &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: (*types.UID)(p.UID), ResourceVersion: p.ResourceVersion}}
	gvk := schema.GroupVersionKind{Group: s.t.Group, Version: s.t.Version, Kind: s.t.Kind}
	if _, _, err := rest.BeforeDelete(kindTyper{gvk}, ctx, obj, opts); err != nil {
		return api.FromKubeError(err)
	}
	return nil
}

// unsafeDeleteRefused is kube-apiserver's answer to a delete asking to
// ignore read errors of an object its storage reads: its storage's
// error, as its store interprets it for a delete.
func (s *Store) unsafeDeleteRefused(key, name string) error {
	gr := s.t.GroupResource()
	err := kubestorage.NewInvalidObjError(key, "unsafe deletion is not allowed because the object is decodable from storage")
	return api.FromKubeError(storeerr.InterpretDeleteError(err, schema.GroupResource{Group: gr.Group, Resource: gr.Resource}, name))
}

// kindTyper is the one thing kube's rest.BeforeDelete asks of a strategy
// (it is not a graceful one, so it stops after the preconditions): the
// kind of the object.
type kindTyper struct{ gvk schema.GroupVersionKind }

// ObjectKinds returns the store's kind.
func (k kindTyper) ObjectKinds(runtime.Object) ([]schema.GroupVersionKind, bool, error) {
	return []schema.GroupVersionKind{k.gvk}, false, nil
}

// Recognizes reports whether gvk is the store's kind.
func (k kindTyper) Recognizes(gvk schema.GroupVersionKind) bool { return gvk == k.gvk }

// checkPreconditions compares uid and resourceVersion preconditions with
// the object a delete is about to write, answering 409 Conflict as
// kube-apiserver's storage does.
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

// warnDelete records the kind's warnings for a delete (DeleteWarner).
func (s *Store) warnDelete(ctx context.Context, ns, name, policy string) {
	if w, ok := s.t.Strategy.(DeleteWarner); ok {
		w.WarnDelete(ctx, ns, name, policy)
	}
}

// validatePropagation accepts the propagation policies Kubernetes
// defines, by kube's rule for DeleteOptions, refusing others as
// kube-apiserver refuses such options (the handler judges a request's
// options before they come here; this is for callers in the process).
func validatePropagation(policy string) error {
	if policy == "" {
		return nil
	}
	p := metav1.DeletionPropagation(policy)
	if errs := metav1validation.ValidateDeleteOptions(&metav1.DeleteOptions{PropagationPolicy: &p}); len(errs) > 0 {
		return api.NewInvalid(api.GroupKind{Group: metav1.GroupName, Kind: "DeleteOptions"}, "", errs)
	}
	return nil
}

// DeleteCollection deletes every object in ns matching list, each with
// opts, and returns the list it deleted from, as kube-apiserver's store
// does: the objects as they were listed, at the list's revision. The
// list is the one asked for, its resourceVersion rules included; with a
// limit only its first page is deleted, and answered with the page's
// continue token, as kube's store does.
func (s *Store) DeleteCollection(ctx context.Context, ns string, list ListOptions, opts DeleteOptions) (*storage.List, error) {
	// Warned once, as kube's storage does, even with nothing to delete.
	s.warnDelete(ctx, s.namespaceOf(ns), "", opts.PropagationPolicy)
	all, err := s.List(ctx, ns, list)
	if err != nil {
		return nil, err
	}
	opts.warned = true
	for _, item := range all.Items {
		o, err := decode(item.Data)
		if err != nil {
			return nil, err
		}
		if _, _, err := s.Delete(ctx, o.Metadata.Namespace, o.Metadata.Name, opts); err != nil && !api.IsNotFound(err) {
			return nil, err // a NotFound was deleted by someone else meanwhile
		}
	}
	return all, nil
}
