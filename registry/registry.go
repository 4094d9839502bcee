package registry

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/miniapi/miniapi/storage"
)

// StorageFactory builds the storage for one resource type. It returns the
// storage and a function that releases it (stopping a cacher, say), which
// the registry calls when the type is removed or the registry closed.
type StorageFactory func(t *Type, keys storage.ResourceKeys, attrs storage.AttrFunc) (storage.Interface, func() error, error)

// Config configures a Registry.
type Config struct {
	// Storage builds each type's storage; required.
	Storage StorageFactory
	// KeyRoot is the etcd key prefix of every object; "" means
	// storage.DefaultRoot.
	KeyRoot string
	// Logger receives the registry's logs; nil means slog.Default().
	Logger *slog.Logger
	// DisableGarbageCollection makes deletes never add the orphan or
	// foregroundDeletion finalizer (kube-apiserver's
	// --enable-garbage-collector=false); the server sets it when no
	// garbage collector would remove them, unless told otherwise.
	DisableGarbageCollection bool
}

// Registry is the live set of served resource types. Readers take an
// immutable Snapshot; Add and Remove publish a new one, so types come and go
// while requests are served.
type Registry struct {
	cfg Config

	// mu serialises Add, Remove and Close; readers never take it.
	mu     sync.Mutex
	closed bool
	snap   atomic.Pointer[Snapshot]
	// admission is the chain writes pass (SetAdmission).
	admission atomic.Pointer[Admission]
}

// New returns an empty registry.
func New(cfg Config) *Registry {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	r := &Registry{cfg: cfg}
	r.snap.Store(newSnapshot(0))
	return r
}

// Resource is one served type and the Store serving it.
type Resource struct {
	Type  Type
	Store *Store
	close func() error
}

// Snapshot is an immutable view of the registry at one moment.
type Snapshot struct {
	byGVR map[GVR]*Resource
	// sorted by group, version, plural
	all []*Resource
	// replaced is closed once a newer snapshot is published.
	replaced chan struct{}
}

func newSnapshot(size int) *Snapshot {
	return &Snapshot{byGVR: make(map[GVR]*Resource, size), replaced: make(chan struct{})}
}

// Replaced is closed once the registry has moved on from this snapshot
// (a type added, replaced or removed, or the registry closed), so readers
// that follow the set of types need not poll.
func (s *Snapshot) Replaced() <-chan struct{} { return s.replaced }

// Snapshot returns the current set of types.
func (r *Registry) Snapshot() *Snapshot { return r.snap.Load() }

// Lookup returns the resource served at group/version/plural.
func (s *Snapshot) Lookup(group, version, plural string) (*Resource, bool) {
	res, ok := s.byGVR[GVR{group, version, plural}]
	return res, ok
}

// Resources returns every served resource, ordered by group, version and
// plural. The slice must not be modified.
func (s *Snapshot) Resources() []*Resource { return s.all }

// Add starts serving t. Adding a type whose group, version and plural are
// already served is an error.
func (r *Registry) Add(t Type) error { return r.put(t, false) }

// Replace serves t in place of the type registered at the same group,
// version and plural, or adds it when there is none. When the storage
// layout is unchanged (scope, storage version and selectable fields, the
// inputs of the storage and its cache) the new type keeps the old one's
// storage, so its cache stays warm; otherwise the new storage is built
// before the switch and the old one released after it. Requests already
// in flight finish on the type they started with.
func (r *Registry) Replace(t Type) error { return r.put(t, true) }

// put publishes t, replacing a type at the same group, version and plural
// only when replace is true.
func (r *Registry) put(t Type, replace bool) error {
	t, err := t.withDefaults()
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return errors.New("registry: closed")
	}
	old := r.snap.Load()
	gvr := t.GVR()
	prev := old.byGVR[gvr]
	if prev != nil && !replace {
		return fmt.Errorf("registry: %s is already registered", gvr)
	}
	keys := storage.ResourceKeys{Root: r.cfg.KeyRoot, Group: t.storageGroup(), Resource: t.Plural, Namespaced: t.Namespaced}
	res := &Resource{Type: t}
	var st storage.Interface
	switch {
	case IsVirtual(&t):
		// Nothing is stored: the strategy answers every request.
	case prev != nil && sameStorageLayout(&prev.Type, &t):
		st, res.close = prev.Store.storage, prev.close
	default:
		st, res.close, err = r.cfg.Storage(&res.Type, keys, AttrFunc(&res.Type))
		if err != nil {
			return fmt.Errorf("registry: storage for %s: %w", gvr, err)
		}
	}
	res.Store = newStore(&res.Type, keys, st, r)
	r.publishLocked(old, res, prev)
	r.cfg.Logger.Debug("registry: type served", "resource", gvr.String(), "replaced", prev != nil)
	if prev != nil && prev.close != nil && st != prev.Store.storage {
		return prev.close()
	}
	return nil
}

// sameStorageLayout reports whether a and b can share one storage: the
// same keys, the same stored form and the same selectable attributes.
// For a type with a StorageVersion (a CRD version) the schema counts too:
// its storage applies the schema's defaults to what it reads; and so does
// the conversion webhook its storage calls.
func sameStorageLayout(a, b *Type) bool {
	return a.Namespaced == b.Namespaced && a.StorageVersion == b.StorageVersion && a.StorageGroup == b.StorageGroup &&
		slices.Equal(a.SelectableFields, b.SelectableFields) &&
		(a.StorageVersion == "" || bytes.Equal(a.Schema, b.Schema)) &&
		bytes.Equal(a.Conversion, b.Conversion)
}

// Remove stops serving the type at gvr and releases its storage. Stored
// objects stay in etcd.
func (r *Registry) Remove(gvr GVR) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.snap.Load()
	res, ok := old.byGVR[gvr]
	if !ok {
		return fmt.Errorf("registry: %s is not registered", gvr)
	}
	r.publishLocked(old, nil, res)
	if res.close != nil {
		return res.close()
	}
	return nil
}

// Close removes every type and releases their storage.
func (r *Registry) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	old := r.snap.Swap(newSnapshot(0))
	close(old.replaced)
	var errs []error
	for _, res := range old.all {
		if res.close != nil {
			errs = append(errs, res.close())
		}
	}
	return errors.Join(errs...)
}

// publishLocked stores a new snapshot: old plus add, minus remove.
func (r *Registry) publishLocked(old *Snapshot, add, remove *Resource) {
	next := newSnapshot(len(old.byGVR) + 1)
	for k, v := range old.byGVR {
		if v != remove {
			next.byGVR[k] = v
		}
	}
	if add != nil {
		next.byGVR[add.Type.GVR()] = add
	}
	for _, v := range next.byGVR {
		next.all = append(next.all, v)
	}
	slices.SortFunc(next.all, func(a, b *Resource) int {
		if c := strings.Compare(a.Type.Group, b.Type.Group); c != 0 {
			return c
		}
		if c := strings.Compare(a.Type.Version, b.Type.Version); c != 0 {
			return c
		}
		return strings.Compare(a.Type.Plural, b.Type.Plural)
	})
	r.snap.Store(next)
	close(old.replaced)
}
