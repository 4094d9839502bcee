package registry

import (
	"encoding/json"
	"fmt"
	"sync/atomic"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/storage"
)

// Store serves every verb for one resource type over a storage.Interface.
// It owns Kubernetes' metadata rules (uid, timestamps, generation,
// generateName, resourceVersion preconditions) and calls the type's
// Strategy for the rest. Handlers translate HTTP into its methods.
type Store struct {
	t       *Type
	keys    storage.ResourceKeys
	storage storage.Interface
	reg     *Registry
	// fields is the type's schema compiled for field validation
	// (fieldvalidation.go), on first use.
	fields fieldSchemaCache
	// managed tracks managedFields and merges apply patches
	// (managedfields.go), built on first use.
	managed fieldManagerCache
	// scaleManaged does the same for /scale.
	scaleManaged fieldManagerCache
	// written is the revision of the last write through this Store.
	written atomic.Int64
}

// LastWrite returns the revision of the last object this Store wrote
// (created, updated or deleted) in this process, 0 before any: what a
// reader of this type's watch must have seen to be up to date with the
// writes it answered (admission waits so for its configuration).
func (s *Store) LastWrite() int64 { return s.written.Load() }

// Delivered reports whether every open watch of this type has been
// sent every event up to rev it asked for, as far as the storage
// underneath can tell (storage.Deliverer); a storage that cannot tell
// reports true.
func (s *Store) Delivered(rev int64) bool {
	d, ok := s.storage.(storage.Deliverer)
	return !ok || d.Delivered(rev)
}

// noteWrite records a write's revision.
func (s *Store) noteWrite(o *storage.Object) {
	if o == nil {
		return
	}
	for {
		cur := s.written.Load()
		if o.Revision <= cur || s.written.CompareAndSwap(cur, o.Revision) {
			return
		}
	}
}

func newStore(t *Type, keys storage.ResourceKeys, s storage.Interface, reg *Registry) *Store {
	return &Store{t: t, keys: keys, storage: s, reg: reg}
}

// Type returns the type this Store serves.
func (s *Store) Type() *Type { return s.t }

// Registry returns the registry the Store serves in, for strategies
// whose rules reach other types (an eviction reads PodDisruptionBudgets).
func (s *Store) Registry() *Registry { return s.reg }

// Storage returns the storage under this Store (for wiring and tests).
func (s *Store) Storage() storage.Interface { return s.storage }

// decode turns stored or request bytes into an Object.
func decode(data []byte) (*api.Object, error) {
	var obj api.Object
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, fmt.Errorf("registry: decode stored object: %w", err)
	}
	return &obj, nil
}

// encode returns the canonical bytes of obj.
func encode(obj *api.Object) ([]byte, error) {
	// MarshalJSON directly: json.Marshal would scan and copy its whole
	// output again to validate and compact it, and every way a field
	// gets into an Object (its decoder, json.Marshal) leaves it valid and
	// compact already.
	return obj.MarshalJSON()
}

// encodeWithoutRV returns the canonical bytes of obj with no
// resourceVersion, the form compared to detect no-op writes.
func encodeWithoutRV(obj *api.Object) ([]byte, error) {
	rv := obj.Metadata.ResourceVersion
	obj.Metadata.ResourceVersion = ""
	defer func() { obj.Metadata.ResourceVersion = rv }()
	return encode(obj)
}

// namespaceOf returns the namespace a request addresses for this type:
// the URL's for namespaced types, "" for cluster-scoped ones.
func (s *Store) namespaceOf(ns string) string {
	if !s.t.Namespaced {
		return ""
	}
	return ns
}

// typeMetaSource says how a body came to be judged by checkTypeMeta.
type typeMetaSource int

const (
	// sourceWhole: a create or update body, judged as kube-apiserver's
	// decoder of the request judges it.
	sourceWhole typeMetaSource = iota
	// sourcePatched: the result of a patch, read back by the patch handler.
	sourcePatched
	// sourceApplied: the result of a server-side apply.
	sourceApplied
)

// checkTypeMeta makes apiVersion and kind in a body agree with the URL,
// filling them in when absent, as kube-apiserver's decoder defaults them.
// For a body sent whole, a kind whose strategy is a TypeMetaJudge says
// why one of another apiVersion or kind is refused, as kube-apiserver's
// decoder of the body does. (A patched built-in object was judged
// before: see patchedTypeMeta.) A strategy that is a TypeMetaValidator
// is left another kind, and after a patch another apiVersion, to refuse
// itself.
func (s *Store) checkTypeMeta(obj *api.Object, source typeMetaSource) error {
	want := s.t.APIVersion()
	if j, ok := s.t.Strategy.(TypeMetaJudge); source == sourceWhole && ok && s.otherTypeMeta(obj) {
		if err := j.TypeMetaError(obj.APIVersion, obj.Kind); err != nil {
			return err
		}
	}
	_, validated := s.t.Strategy.(TypeMetaValidator)
	switch {
	case obj.APIVersion == "":
		obj.APIVersion = want
	case obj.APIVersion != want && !(validated && source == sourcePatched):
		return api.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", obj.APIVersion, want))
	}
	switch {
	case obj.Kind == "":
		obj.Kind = s.t.Kind
	case obj.Kind != s.t.Kind && !(validated && source != sourceApplied):
		return api.NewBadRequest(fmt.Sprintf("the kind in the data (%s) does not match the expected kind (%s)", obj.Kind, s.t.Kind))
	}
	return nil
}

// otherTypeMeta reports whether obj names an apiVersion or kind other
// than the type's (an empty one names none).
func (s *Store) otherTypeMeta(obj *api.Object) bool {
	return obj.APIVersion != "" && obj.APIVersion != s.t.APIVersion() || obj.Kind != "" && obj.Kind != s.t.Kind
}

// checkNamespace makes the body's namespace agree with the URL's.
func (s *Store) checkNamespace(obj *api.Object, ns string) error {
	if !s.t.Namespaced {
		// kube-apiserver clears a namespace sent for a cluster-scoped object.
		obj.Metadata.Namespace = ""
		return nil
	}
	switch {
	case obj.Metadata.Namespace == "":
		obj.Metadata.Namespace = ns
	case obj.Metadata.Namespace != ns:
		return api.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return nil
}
