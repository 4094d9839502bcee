package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/miniapi/miniapi/storage"
	"k8s.io/kubernetes/pkg/registry/core/service/allocator"
)

// rangeStore is a kube allocator (allocator.Interface) whose bitmap is
// kept in etcd, as kube-apiserver keeps a Service NodePort range's: one
// RangeAllocation object at a key of its own, read and written with a
// compare-and-swap on every change, so several servers on one etcd, and
// a restart, never hand out a used port. It follows kube's etcd-backed
// allocator (pkg/registry/core/service/allocator/storage), which is
// bound to kube's storage layer, over ours.
type rangeStore struct {
	// mu serialises changes; alloc mirrors the stored bitmap as of last.
	mu    sync.Mutex
	alloc allocator.Snapshottable
	last  int64

	storage storage.Interface
	key     string
}

var _ allocator.Interface = (*rangeStore)(nil)

// rangeAllocation is core/v1 RangeAllocation as stored.
type rangeAllocation struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		ResourceVersion   string `json:"resourceVersion,omitempty"`
		CreationTimestamp any    `json:"creationTimestamp"`
	} `json:"metadata"`
	Range string `json:"range"`
	Data  []byte `json:"data"`
}

// errUnableToAllocate makes an update write nothing when the bitmap has
// no room or the item is taken.
var errUnableToAllocate = errors.New("builtin: unable to allocate")

// newRangeStore returns an allocator over alloc (kube's in-memory
// bitmap for the range) whose state lives at key, creating the stored
// object for an empty range when there is none yet.
func newRangeStore(ctx context.Context, st storage.Interface, key string, alloc allocator.Snapshottable) (*rangeStore, error) {
	r := &rangeStore{alloc: alloc, storage: st, key: key}
	spec, data := alloc.Snapshot()
	init := rangeAllocation{APIVersion: "v1", Kind: "RangeAllocation", Range: spec, Data: data}
	body, err := json.Marshal(&init)
	if err != nil {
		return nil, err
	}
	if _, err := st.Create(ctx, key, body); err != nil && !storage.IsExists(err) {
		return nil, fmt.Errorf("builtin: initialise range %s: %w", key, err)
	}
	return r, nil
}

// Allocate reserves item.
func (r *rangeStore) Allocate(item int) (bool, error) {
	err := r.update(func() error {
		ok, err := r.alloc.Allocate(item)
		if err == nil && !ok {
			err = errUnableToAllocate
		}
		return err
	})
	if errors.Is(err, errUnableToAllocate) {
		return false, nil
	}
	return err == nil, err
}

// AllocateNext reserves some free item.
func (r *rangeStore) AllocateNext() (int, bool, error) {
	var item int
	err := r.update(func() error {
		var ok bool
		var err error
		item, ok, err = r.alloc.AllocateNext()
		if err == nil && !ok {
			err = errUnableToAllocate
		}
		return err
	})
	if errors.Is(err, errUnableToAllocate) {
		return item, false, nil
	}
	return item, err == nil, err
}

// Release frees item.
func (r *rangeStore) Release(item int) error {
	return r.update(func() error { return r.alloc.Release(item) })
}

// ForEach calls fn for every reserved item, as of the last change.
func (r *rangeStore) ForEach(fn func(int)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.alloc.ForEach(fn)
}

// Has reports whether item is reserved, as of the last change.
func (r *rangeStore) Has(item int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.alloc.Has(item)
}

// Free is how many items are free, as of the last change.
func (r *rangeStore) Free() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.alloc.Free()
}

// Destroy releases nothing: the storage is the server's.
func (r *rangeStore) Destroy() {}

// update applies change to the stored bitmap: the in-memory one is first
// brought to the stored state when another writer moved it.
func (r *rangeStore) update(change func() error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	out, err := r.storage.GuaranteedUpdate(context.Background(), r.key, storage.UpdateOptions{}, func(cur *storage.Object) ([]byte, error) {
		var ra rangeAllocation
		if err := json.Unmarshal(cur.Data, &ra); err != nil {
			return nil, fmt.Errorf("builtin: decode range %s: %w", r.key, err)
		}
		if cur.Revision != r.last {
			if err := r.alloc.Restore(ra.Range, ra.Data); err != nil {
				return nil, err
			}
			r.last = cur.Revision
		}
		if err := change(); err != nil {
			return nil, err
		}
		ra.Range, ra.Data = r.alloc.Snapshot()
		ra.Metadata.ResourceVersion = ""
		return json.Marshal(&ra)
	})
	if err != nil {
		// Writes that failed leave alloc ahead of storage: read it again
		// next time.
		r.last = 0
		return err
	}
	r.last = out.Revision
	return nil
}
