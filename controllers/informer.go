package controllers

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	"github.com/miniapi/miniapi/storage"
)

// meta is the part of an object the controllers decide on. Values are
// shared between the informer and its handler and never modified.
type meta struct {
	Namespace, Name, UID string
	Deleting             bool
	Finalizers           []string
	OwnerReferences      []api.OwnerReference
}

// hasFinalizer reports whether m carries finalizer f.
func (m *meta) hasFinalizer(f string) bool {
	return slices.Contains(m.Finalizers, f)
}

// storedMeta is the part of an object's metadata the controllers use.
type storedMeta struct {
	Namespace         string               `json:"namespace"`
	Name              string               `json:"name"`
	UID               string               `json:"uid"`
	DeletionTimestamp json.RawMessage      `json:"deletionTimestamp"`
	Finalizers        []string             `json:"finalizers"`
	OwnerReferences   []api.OwnerReference `json:"ownerReferences"`
}

// decodeMeta reads the metadata of a stored object. Only the metadata's
// bytes are read (scanMeta, else encoding/json over them), so informers
// over every type (the collector's) do not parse whole objects; what
// cannot be read that way is decoded whole, which also reports its
// error.
func decodeMeta(data []byte) (*meta, error) {
	var m storedMeta
	span := storage.MetadataJSON(data)
	ok := span != nil && scanMeta(span, &m)
	if !ok && span != nil {
		m = storedMeta{} // scanMeta may have stopped half way
		ok = json.Unmarshal(span, &m) == nil
	}
	if !ok {
		var w struct {
			Metadata storedMeta `json:"metadata"`
		}
		if err := json.Unmarshal(data, &w); err != nil {
			return nil, err
		}
		m = w.Metadata
	}
	dt := string(m.DeletionTimestamp)
	return &meta{
		Namespace: m.Namespace, Name: m.Name, UID: m.UID,
		Deleting:   dt != "" && dt != "null",
		Finalizers: m.Finalizers, OwnerReferences: m.OwnerReferences,
	}, nil
}

// scanMeta reads m from span, the encoded metadata, as encoding/json
// would, but skips the members it does not need (managedFields, most of
// the bytes) without parsing them: encoding/json validates and reflects
// over all of it, 3.7 µs of the collector's CPU for each object it
// lists. Keys that differ from m's only in case (encoding/json matches
// those too), values of another type and malformed spans report false,
// and decodeMeta decodes with encoding/json instead.
func scanMeta(span []byte, m *storedMeta) bool {
	str := func(v []byte, into *string) bool {
		if string(v) == "null" {
			return true // encoding/json leaves the field as it is
		}
		s, ok := storage.JSONString(v)
		*into = s
		return ok
	}
	return storage.ObjectMembers(span, func(key, v []byte) bool {
		switch string(key) {
		case "namespace":
			return str(v, &m.Namespace)
		case "name":
			return str(v, &m.Name)
		case "uid":
			return str(v, &m.UID)
		case "deletionTimestamp":
			m.DeletionTimestamp = v
			return true
		case "finalizers":
			return json.Unmarshal(v, &m.Finalizers) == nil
		case "ownerReferences":
			return json.Unmarshal(v, &m.OwnerReferences) == nil
		}
		for _, k := range storedMetaKeys {
			if bytes.EqualFold(key, k) {
				return false
			}
		}
		return true
	})
}

// storedMetaKeys are storedMeta's JSON keys.
var storedMetaKeys = [][]byte{[]byte("namespace"), []byte("name"), []byte("uid"), []byte("deletionTimestamp"), []byte("finalizers"), []byte("ownerReferences")}

// informer mirrors the objects of one Store in memory and reports every
// change to its handler, the way client-go's informers do over HTTP: it
// watches with sendInitialEvents (a list, then changes), resumes from the
// last resourceVersion when a watch ends, and lists again when that
// revision has been compacted away (410) or the watch failed.
type informer struct {
	store *registry.Store
	log   *slog.Logger
	// changed is called, on the informer's goroutine, for every change:
	// old nil for a new object, cur nil for a deleted one. It must not
	// block for long: the watch cache ends watchers that fall behind.
	changed func(old, cur *meta)
	// synced, if set, is called each time a list has been fully applied.
	synced func()

	known map[string]*meta // by namespace/name; owned by run
	// applied is the revision up to which every event has been handed
	// to changed, once a first list has been applied (0 before).
	applied atomic.Int64
}

// caughtUp reports whether the informer has handled every write this
// process made to its Store: what its controller could act on, it has
// been told of.
func (in *informer) caughtUp() bool {
	a := in.applied.Load()
	return a > 0 && a >= in.store.LastWrite()
}

// Delays between failed watches.
const (
	watchRetryBase = 50 * time.Millisecond
	watchRetryMax  = 5 * time.Second
)

// run keeps the mirror up to date until ctx ends.
func (in *informer) run(ctx context.Context) {
	in.known = map[string]*meta{}
	var rev int64 // where to resume; 0 lists again
	delay := watchRetryBase
	for {
		next, err := in.watch(ctx, rev)
		if ctx.Err() != nil {
			return
		}
		rev = next
		if err == nil {
			delay = watchRetryBase
			continue
		}
		in.log.Debug("controllers: watch failed; listing again", "resource", in.store.Type().GVR().String(), "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, watchRetryMax)
	}
}

// watch runs one watch, from rev or, when rev is 0, from a fresh list. It
// returns the revision to resume from (0 to list again) and the error
// that ended it, if any.
func (in *informer) watch(ctx context.Context, rev int64) (int64, error) {
	listing := rev == 0
	opts := registry.WatchOptions{AllowBookmarks: true, SendInitialEvents: &listing}
	if !listing {
		opts.ResourceVersion = strconv.FormatInt(rev, 10)
	}
	// During a list, the keys it has shown; at its end the others are
	// gone.
	var seen map[string]bool
	if listing {
		seen = map[string]bool{}
	}
	var ended bool // by an ErrorEvent, failed unless it was a 410
	var failed error
	err := in.store.RunWatch(ctx, "", opts, func(ev storage.Event) bool {
		switch ev.Type {
		case storage.ErrorEvent:
			ended = true
			if !storage.IsCompacted(ev.Err) {
				failed = ev.Err
			}
			return false // 410: our revision is gone; list again
		case storage.Bookmark:
			rev = max(rev, ev.Object.Revision)
			if ev.InitialEventsEnd && seen != nil {
				in.dropUnseen(seen)
				seen = nil
				if in.synced != nil {
					in.synced()
				}
			}
			if seen == nil {
				in.applied.Store(rev)
			}
		case storage.Added, storage.Modified, storage.Deleted:
			rev = max(rev, ev.Object.Revision)
			if in.apply(ev, seen) && seen == nil {
				in.applied.Store(rev)
			}
		}
		return true
	})
	switch {
	case err != nil:
		return 0, err
	case ended:
		return 0, failed
	case ctx.Err() == nil && seen != nil:
		return 0, nil // ended inside the list: it is incomplete
	}
	return rev, nil
}

// apply hands one change to changed, keeping known (and, during a list,
// seen) up to date; false for an object it cannot read.
func (in *informer) apply(ev storage.Event, seen map[string]bool) bool {
	m, err := decodeMeta(ev.Object.Data)
	if err != nil {
		in.log.Warn("controllers: undecodable object", "key", ev.Object.Key, "err", err)
		return false
	}
	key := m.Namespace + "/" + m.Name
	old := in.known[key]
	if ev.Type == storage.Deleted {
		delete(in.known, key)
		if old != nil {
			in.changed(old, nil)
		}
		return true
	}
	in.known[key] = m
	if seen != nil {
		seen[key] = true
	}
	in.changed(old, m)
	return true
}

// dropUnseen reports as deleted the objects a fresh list did not show.
func (in *informer) dropUnseen(seen map[string]bool) {
	for key, m := range in.known {
		if !seen[key] {
			delete(in.known, key)
			in.changed(m, nil)
		}
	}
}

// informerSet is the informers one controller runs, for its Idle.
type informerSet struct {
	mu  sync.Mutex
	all map[*informer]bool
}

// run runs in until ctx ends, counting it in the set meanwhile.
func (s *informerSet) run(ctx context.Context, in *informer) {
	s.mu.Lock()
	if s.all == nil {
		s.all = map[*informer]bool{}
	}
	s.all[in] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.all, in)
		s.mu.Unlock()
	}()
	in.run(ctx)
}

// caughtUp reports whether every informer in the set has caught up; an
// empty set has not started yet (every controller follows some type).
func (s *informerSet) caughtUp() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.all) == 0 {
		return false
	}
	for in := range s.all {
		if !in.caughtUp() {
			return false
		}
	}
	return true
}
