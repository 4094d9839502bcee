package registry

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/journal"
	"github.com/miniapi/miniapi/storage"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// UpdateOptions qualify an Update or a Patch.
type UpdateOptions struct {
	// DryRun validates and answers without persisting.
	DryRun bool
	// FieldValidation is how unknown and duplicate fields are treated:
	// FieldValidationStrict, FieldValidationWarn (also for "") or
	// FieldValidationIgnore.
	FieldValidation string
	// BodyErrors are problems of an Update body's original encoding
	// that a strict decoder reports, such as duplicate keys in YAML.
	BodyErrors []string
	// Subresource is "" for the main resource, "status" or, for types
	// whose strategy is a FinalizeSubresource, "finalize".
	Subresource string
	// FieldManager is recorded in managedFields as the manager of the
	// fields the write changes (DefaultFieldManager when empty); for
	// an apply, the applier.
	FieldManager string

	// KeepManagedFields records nothing in managedFields, as for
	// kube-apiserver's own writes that bypass its request handlers
	// (the condition an eviction sets on its pod).
	KeepManagedFields bool

	// uid is the uid the object sent in a PUT names: kube's update
	// handler makes it a precondition of the write.
	uid string
	// fieldsRecorded marks an update whose transform computed the
	// managedFields itself (an apply's merge, a Scale's entries).
	fieldsRecorded bool
	// scaleAdmitted marks a write through /scale: admission sees its
	// Scale objects, not the object behind them (writeScale).
	scaleAdmitted bool
	// markDeleting sets deletionTimestamp: Delete's path for objects
	// with finalizers.
	markDeleting bool
	// graceful, with markDeleting, holds the deletionTimestamp,
	// deletionGracePeriodSeconds and generation of a graceful deletion
	// (GracefulDeleter) instead of now and 0.
	graceful *api.ObjectMeta
}

// retriesWithoutManagedFields reports whether an update etcd refuses as
// too large is tried once more without managedFields, as kube-apiserver's
// update and patch handlers do ("it is safe to remove managedFields (which
// can be large)"): for the writes of those handlers, not for an apply,
// whose managedFields are what it computed, nor for the server's own.
func (o UpdateOptions) retriesWithoutManagedFields() bool {
	return !o.fieldsRecorded && !o.markDeleting && !o.KeepManagedFields
}

// Subresources a Store serves.
const (
	SubresourceStatus   = "status"
	SubresourceFinalize = "finalize"
)

// transform computes an update's desired object from the current one. It
// returns a fresh object the caller may modify.
type transform func(current *api.Object) (*api.Object, error)

// Update replaces the named object with the one in body, the JSON a
// client sent. A resourceVersion in it makes the update conditional on it
// (409 Conflict if stale); without one the update is unconditional, as
// kube-apiserver allows for these types. A uid in it must be the
// object's, as kube-apiserver's update handler makes it a precondition.
// An update that changes nothing writes nothing.
func (s *Store) Update(ctx context.Context, ns, name string, body []byte, opts UpdateOptions) (*storage.Object, error) {
	out, _, err := s.Put(ctx, ns, name, body, opts, nil)
	return out, err
}

// Put is Update as a client's PUT: for a kind kube-apiserver creates on
// update (CreatorOnUpdate), an object that does not exist is created,
// as a create, if mayCreate (the caller's check that the client may
// create it, made where kube makes it) allows; a nil mayCreate never
// creates. created reports which it was.
func (s *Store) Put(ctx context.Context, ns, name string, body []byte, opts UpdateOptions, mayCreate func(context.Context) error) (out *storage.Object, created bool, err error) {
	obj, err := s.decodeBody(ctx, body, opts.FieldValidation, opts.BodyErrors)
	if err != nil {
		return nil, false, err
	}
	ns = s.namespaceOf(ns)
	if err := s.checkTypeMeta(obj, sourceWhole); err != nil {
		return nil, false, err
	}
	if obj.Metadata.Name == "" {
		obj.Metadata.Name = name
	}
	if obj.Metadata.Name != name {
		return nil, false, api.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", obj.Metadata.Name, name))
	}
	if err := s.checkNamespace(obj, ns); err != nil {
		return nil, false, err
	}
	opts.uid = obj.Metadata.UID
	creates := mayCreate != nil && opts.Subresource == ""
	if c, ok := s.t.Strategy.(CreatorOnUpdate); !ok || !c.CreatesOnUpdate() {
		creates = false
	}
	for {
		out, err := s.update(ctx, ns, name, opts, func(*api.Object) (*api.Object, error) {
			return obj.DeepCopy(), nil
		})
		if !creates || !api.IsNotFound(err) {
			return out, false, err
		}
		out, err = s.createOnUpdate(ctx, ns, name, obj.DeepCopy(), opts, mayCreate)
		if api.IsAlreadyExists(err) {
			continue // created meanwhile: update it
		}
		return out, err == nil, err
	}
}

// createOnUpdate creates the object a PUT sent for a kind kube's store
// creates on update: a create in all but the verb, except that, as in
// kube's store, a resourceVersion sent is ignored and a uid sent is the
// update's precondition, which no missing object meets.
func (s *Store) createOnUpdate(ctx context.Context, ns, name string, obj *api.Object, opts UpdateOptions, mayCreate func(context.Context) error) (*storage.Object, error) {
	if obj.Metadata.UID != "" {
		return nil, s.uidPreconditionFailed(name, s.keys.Key(ns, name), obj.Metadata.UID, "")
	}
	obj.Metadata.ResourceVersion = ""
	return s.create(ctx, ns, obj, CreateOptions{DryRun: opts.DryRun, FieldManager: opts.FieldManager, FieldValidation: opts.FieldValidation, authorize: mayCreate})
}

// uidPreconditionFailed is kube-apiserver's answer to a PUT whose object
// names another uid than the stored one's: its storage refuses the
// precondition as an invalid object, a 409 naming the storage key (here
// miniapi's).
func (s *Store) uidPreconditionFailed(name, key, want, got string) error {
	return api.NewConflict(s.t.GroupResource(), name, fmt.Sprintf(
		"StorageError: invalid object, Code: 4, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: %s, UID in object meta: %s", key, want, got))
}

// update runs one guaranteed update: next computes the desired object,
// which is then merged with the server-owned state, validated and written.
func (s *Store) update(ctx context.Context, ns, name string, opts UpdateOptions, next transform) (*storage.Object, error) {
	if opts.Subresource != "" && !s.servesSubresource(opts.Subresource) {
		return nil, api.NewNotFound(s.t.GroupResource(), name)
	}
	key := s.keys.Key(ns, name)
	// deleteAt and emptied are set when the update empties the
	// finalizers of an object being deleted: the stored object it
	// deletes and the updated one it answers.
	var deleteAt *storage.Object
	var emptied *api.Object
	// finish ends the reservation of the last try (WriteHooks): kept when
	// that try's bytes were stored, released otherwise.
	finish := func(bool) {}
	defer func() { finish(false) }()
	// dropManaged is set after etcd refused the object as too large; see
	// retriesWithoutManagedFields.
	dropManaged := false
	var prev int64 // the revision the last try started from
	try := func(cur *storage.Object) ([]byte, error) {
		finish(false)
		finish = func(bool) {}
		prev = cur.Revision
		old, err := decode(cur.Data)
		if err != nil {
			return nil, err
		}
		obj, err := next(old.DeepCopy())
		if err != nil {
			return nil, err
		}
		if obj.Metadata.ResourceVersion != "" && obj.Metadata.ResourceVersion != old.Metadata.ResourceVersion {
			return nil, api.NewConflict(s.t.GroupResource(), name, api.ConflictModified)
		}
		if opts.uid != "" && opts.uid != old.Metadata.UID {
			return nil, s.uidPreconditionFailed(name, key, opts.uid, old.Metadata.UID)
		}
		if cu, ok := s.t.Strategy.(ConditionalUpdater); ok && obj.Metadata.ResourceVersion == "" && !opts.markDeleting && cu.RequiresResourceVersion() {
			// As kube-apiserver words it, naming the resource as the kind.
			gr := s.t.GroupResource()
			return nil, api.NewInvalid(api.GroupKind{Group: gr.Group, Kind: gr.Resource}, name, field.ErrorList{
				field.Invalid(field.NewPath("metadata", "resourceVersion"), 0, "must be specified for an update")})
		}
		rules, kind := s.t.Strategy.(UpdateRules)
		kind = kind && !opts.markDeleting // marking is not judged, as in kube-apiserver
		if err := s.prepareForUpdate(obj, old, opts, !kind); err != nil {
			return nil, err
		}
		// As kube-apiserver, marking an object deleted is not a
		// write anyone manages.
		if !opts.fieldsRecorded && !opts.markDeleting && !opts.KeepManagedFields {
			if obj, err = s.recordUpdate(old, obj, opts.FieldManager, opts.Subresource); err != nil {
				return nil, err
			}
		}
		if dropManaged {
			obj.Metadata.ManagedFields = nil
		}
		// As kube-apiserver's update and patch handlers: mutating
		// admission on each try, once managedFields are recorded;
		// validating admission once the kind has judged the result.
		// Marking an object deleted is the delete's, admitted there.
		admission := &AdmissionRequest{
			Operation: OpUpdate, Subresource: opts.Subresource, Namespace: ns, Name: name,
			Object: obj, OldObject: old, DryRun: opts.DryRun,
			FieldManager: opts.FieldManager, FieldValidation: opts.FieldValidation,
		}
		if !opts.markDeleting && !opts.scaleAdmitted {
			if err := s.admitMutate(ctx, admission); err != nil {
				return nil, err
			}
		}
		if kind {
			if h, ok := s.t.Strategy.(WriteHooks); ok {
				f, err := h.BeginUpdate(ctx, obj, old, opts.DryRun)
				if err != nil {
					return nil, err
				}
				finish = f
			}
			if err := rules.BeforeUpdate(ctx, obj, old, opts.Subresource); err != nil {
				return nil, err
			}
		} else if errs := s.validateUpdate(obj, old, opts); len(errs) > 0 {
			return nil, api.NewInvalid(s.t.GroupKind(), name, errs)
		}
		if opts.scaleAdmitted {
			if admission, err = s.scaleAdmission(obj, old, opts); err != nil {
				return nil, err
			}
		}
		if !opts.markDeleting {
			if err := s.admitValidate(ctx, admission); err != nil {
				return nil, err
			}
		}
		if s.deletesDuringUpdate(obj, opts) {
			deleteAt, emptied = cur, obj
			return nil, errEmptiedFinalizers
		}
		newBytes, err := encodeWithoutRV(obj)
		if err != nil {
			return nil, err
		}
		oldBytes, err := encodeWithoutRV(old)
		if err != nil {
			return nil, err
		}
		if bytes.Equal(newBytes, oldBytes) {
			// Nothing changed: hand back the current bytes so storage
			// writes nothing and the resourceVersion stays.
			return cur.Data, nil
		}
		return newBytes, nil
	}
	if opts.DryRun {
		cur, err := s.storage.Get(ctx, key, storage.GetOptions{})
		if err != nil {
			return nil, s.statusErr(err, name)
		}
		data, err := try(cur)
		if errors.Is(err, errEmptiedFinalizers) {
			return emptiedAnswer(key, deleteAt, emptied) // it would be deleted
		}
		if err != nil {
			return nil, s.statusErr(err, name)
		}
		// As kube-apiserver, a dry run answers with the resourceVersion
		// the object has (kubectl diff compares it).
		if data, err = storage.SetResourceVersion(data, cur.Revision); err != nil {
			return nil, err
		}
		return &storage.Object{Key: key, Revision: cur.Revision, Data: data}, nil
	}
	for {
		out, err := s.storage.GuaranteedUpdate(ctx, key, storage.UpdateOptions{}, try)
		if storage.IsEntityTooLarge(err) && !dropManaged && opts.retriesWithoutManagedFields() {
			dropManaged = true
			continue
		}
		if !errors.Is(err, errEmptiedFinalizers) {
			if err != nil {
				return nil, s.statusErr(err, name)
			}
			finish(true)
			finish = func(bool) {}
			s.noteWrite(out)
			journal.Wrote(ctx, name, prev, out.Revision)
			return out, nil
		}
		// The update removes the last finalizer of an object being
		// deleted: as kube-apiserver, delete the object as it is stored
		// instead of writing it, so watchers see DELETED right after the
		// MODIFIED that marked it. If it changed meanwhile, judge the
		// update again against the newer object.
		rv := storage.FormatResourceVersion(deleteAt.Revision)
		deleted, err := s.storage.Delete(ctx, key, storage.DeleteOptions{Preconditions: &storage.Preconditions{ResourceVersion: &rv}})
		if storage.IsConflict(err) {
			continue
		}
		if err != nil {
			return nil, s.statusErr(err, name)
		}
		s.afterDelete(deleted, false)
		journal.Wrote(ctx, name, deleteAt.Revision, deleted.Revision)
		return emptiedAnswer(key, deleteAt, emptied)
	}
}

// emptiedAnswer is the answer to an update that deleted the object by
// emptying its finalizers: the object as updated, at the revision it
// was deleted from, as kube-apiserver's store answers it ("clients are
// expecting an updated object if a PUT succeeded"), so that a client
// that removed the last finalizer does not read it back.
func emptiedAnswer(key string, at *storage.Object, obj *api.Object) (*storage.Object, error) {
	data, err := encodeWithoutRV(obj)
	if err != nil {
		return nil, err
	}
	if data, err = storage.SetResourceVersion(data, at.Revision); err != nil {
		return nil, err
	}
	return &storage.Object{Key: key, Revision: at.Revision, Data: data}, nil
}

// afterDelete lets the kind release what a deleted object held.
func (s *Store) afterDelete(deleted *storage.Object, dryRun bool) {
	if !dryRun {
		s.noteWrite(deleted)
	}
	h, ok := s.t.Strategy.(WriteHooks)
	if !ok || deleted == nil {
		return
	}
	if obj, err := decode(deleted.Data); err == nil {
		h.AfterDelete(obj, dryRun)
	}
}

// deletesDuringUpdate reports whether an update of an object being deleted
// deletes it instead, as kube-apiserver's does: no finalizers are left,
// nothing else holds it and no grace period is running (a pod deleted
// gracefully stays until it is deleted again).
func (s *Store) deletesDuringUpdate(obj *api.Object, opts UpdateOptions) bool {
	m := &obj.Metadata
	if m.DeletionTimestamp == nil || len(m.Finalizers) > 0 || s.holdsDeletion(obj) || opts.graceful != nil {
		return false
	}
	return m.DeletionGracePeriodSeconds == nil || *m.DeletionGracePeriodSeconds == 0
}

// errEmptiedFinalizers aborts an update that would leave an object being
// deleted without finalizers; update deletes the object instead.
var errEmptiedFinalizers = errors.New("registry: update empties the finalizers of an object being deleted")

// prepareForUpdate carries over what clients may not change, as
// kube-apiserver's BeforeUpdate does, and with generic rules (custom
// resources) also applies the subresource rules, defaults and
// generation.
func (s *Store) prepareForUpdate(obj, old *api.Object, opts UpdateOptions, generic bool) error {
	subresource := opts.Subresource
	if !generic {
		s.carryOverMeta(obj, old, opts)
		// Defaults, as kube-apiserver's decoder applies them to every
		// body; the kind's rules then keep what the (sub)resource may
		// change.
		if d, ok := s.t.Strategy.(Defaulter); ok && subresource == "" {
			d.Default(obj)
		} else if d, ok := s.t.Strategy.(StatusDefaulter); ok && subresource == SubresourceStatus {
			d.DefaultStatus(obj)
		}
		return nil
	}
	if subresource == SubresourceStatus {
		// Only .status changes through /status; managedFields the
		// transform computed are kept.
		status, ok := obj.Fields["status"]
		managed := obj.Metadata.ManagedFields
		*obj = *old.DeepCopy()
		if opts.fieldsRecorded {
			obj.Metadata.ManagedFields = managed
		}
		if ok {
			obj.Fields["status"] = status
		} else {
			delete(obj.Fields, "status")
		}
		if d, ok := s.t.Strategy.(StatusDefaulter); ok {
			d.DefaultStatus(obj)
		}
	} else if subresource == SubresourceFinalize {
		// Only spec.finalizers change through /finalize.
		s.t.Strategy.(FinalizeSubresource).PrepareForFinalize(obj, old)
	} else if hasStatus(s.t.Strategy) {
		// The main resource never changes .status of a type that has /status.
		if st, ok := old.Fields["status"]; ok {
			obj.Fields["status"] = st
		} else {
			delete(obj.Fields, "status")
		}
	}
	s.carryOverMeta(obj, old, opts)
	m, om := &obj.Metadata, &old.Metadata
	if subresource == "" {
		// Defaults, as kube-apiserver's decoder applies them.
		if d, ok := s.t.Strategy.(Defaulter); ok {
			d.Default(obj)
		}
		if err := s.normalize(obj); err != nil {
			return err
		}
	}
	if subresource != SubresourceFinalize && s.bumpsGeneration(obj, old) {
		m.Generation = om.Generation + 1
	}
	m.ResourceVersion = ""
	return nil
}

// carryOverMeta keeps the metadata only the server changes (uid,
// creationTimestamp, the deletion fields, generation) as old has it, and
// marks obj deleted when the update is Delete's mark.
func (s *Store) carryOverMeta(obj, old *api.Object, opts UpdateOptions) {
	m, om := &obj.Metadata, &old.Metadata
	if m.UID == "" {
		m.UID = om.UID
	}
	m.CreationTimestamp = om.CreationTimestamp
	m.DeletionTimestamp = om.DeletionTimestamp
	m.DeletionGracePeriodSeconds = om.DeletionGracePeriodSeconds
	m.Generation = om.Generation
	if g := opts.graceful; opts.markDeleting && g != nil {
		m.DeletionTimestamp = g.DeletionTimestamp
		m.DeletionGracePeriodSeconds = g.DeletionGracePeriodSeconds
		m.Generation = g.Generation
	} else if opts.markDeleting && m.DeletionTimestamp == nil {
		now := api.Now()
		m.DeletionTimestamp = &now
		if h, ok := s.t.Strategy.(DeletionHolder); ok {
			// As kube-apiserver's namespace and CRD storage: no
			// grace period, the generation kept, and the strategy
			// records the start (phase Terminating, a condition).
			h.PrepareForDelete(obj)
		} else {
			// As kube's store marks an object its finalizers hold:
			// the first mark bumps a generation the object has, so
			// controllers whose watches pass only generation changes
			// see the deletion.
			if m.Generation > 0 {
				m.Generation++
			}
			zero := int64(0)
			m.DeletionGracePeriodSeconds = &zero
		}
	}
	m.SelfLink = ""
	m.ResourceVersion = ""
}

// bumpsGeneration reports whether an update changes the object's spec:
// anything outside metadata and status.
func (s *Store) bumpsGeneration(obj, old *api.Object) bool {
	for k := range obj.Fields {
		if k != "status" && !api.FieldEqual(obj, old, k) {
			return true
		}
	}
	for k := range old.Fields {
		if _, ok := obj.Fields[k]; !ok && k != "status" {
			return true
		}
	}
	return false
}

// validateUpdate checks metadata rules for updates and asks the strategy.
func (s *Store) validateUpdate(obj, old *api.Object, opts UpdateOptions) field.ErrorList {
	errs := ValidateObjectMeta(&obj.Metadata, s.t.Namespaced, s.t.NameValidation)
	oldMeta := old.Metadata
	if opts.markDeleting {
		// The server itself sets the deletion fields when marking.
		oldMeta.DeletionTimestamp = obj.Metadata.DeletionTimestamp
		oldMeta.DeletionGracePeriodSeconds = obj.Metadata.DeletionGracePeriodSeconds
		// ... and the garbage collector's finalizers the propagation
		// policy asks for, which an object being deleted may gain.
		oldMeta.Finalizers = obj.Metadata.Finalizers
	}
	// This also refuses new finalizers on an object being deleted.
	errs = append(errs, ValidateObjectMetaUpdate(&obj.Metadata, &oldMeta)...)
	return append(errs, ValidateScale(s.t, obj)...)
}

// servesSubresource reports whether updates may address sub: status for
// types that have it, and the update subresources the kind lists.
func (s *Store) servesSubresource(sub string) bool {
	switch sub {
	case SubresourceStatus:
		return hasStatus(s.t.Strategy)
	case SubresourceFinalize:
		if _, ok := s.t.Strategy.(FinalizeSubresource); ok {
			return true
		}
	}
	sr, ok := FindSubresource(s.t, sub)
	return ok && sr.Serve == ServeUpdate
}

// UpdateStored changes the named object with change and writes the result
// as it is: no rules, no managedFields, no generation. It is what
// kube-apiserver's subresources that write storage directly do (a pod's
// binding); pre are checked against every object tried.
func (s *Store) UpdateStored(ctx context.Context, ns, name string, pre *api.Preconditions, dryRun bool, change func(obj *api.Object) error) (*storage.Object, error) {
	ns = s.namespaceOf(ns)
	key := s.keys.Key(ns, name)
	try := func(cur *storage.Object) ([]byte, error) {
		obj, err := decode(cur.Data)
		if err != nil {
			return nil, err
		}
		if err := s.checkPreconditions(name, obj, pre); err != nil {
			return nil, err
		}
		if err := change(obj); err != nil {
			return nil, err
		}
		return encodeWithoutRV(obj)
	}
	if dryRun {
		cur, err := s.storage.Get(ctx, key, storage.GetOptions{})
		if err != nil {
			return nil, s.statusErr(err, name)
		}
		data, err := try(cur)
		if err != nil {
			return nil, s.statusErr(err, name)
		}
		return &storage.Object{Key: key, Revision: cur.Revision, Data: data}, nil
	}
	var prev int64
	out, err := s.storage.GuaranteedUpdate(ctx, key, storage.UpdateOptions{}, func(cur *storage.Object) ([]byte, error) {
		prev = cur.Revision
		return try(cur)
	})
	if err == nil {
		journal.Wrote(ctx, name, prev, out.Revision)
	}
	return out, s.statusErr(err, name)
}
