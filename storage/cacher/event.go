package cacher

import (
	"sync"
	"time"

	"github.com/miniapi/miniapi/storage"
)

// event is one change as the watch cache recorded it. It is created once by
// the reflector and shared, read-only, by the history ring and by every
// watcher it is dispatched to; the *storage.Object values in it are the
// ones the cache stores, so no watcher copies or re-encodes them.
type event struct {
	typ storage.EventType // Added, Modified, Deleted, or Bookmark
	rev int64
	key string
	// obj is the new state; for Deleted the last state at the deletion's
	// revision, as the underlying watch reports it.
	obj   *storage.Object
	attrs storage.Attrs
	// prev is the state before the change (nil for Added).
	prev      *storage.Object
	prevAttrs storage.Attrs
	// recorded is when the cache appended the event, for history sizing.
	recorded time.Time

	// A watcher whose selector the object stops matching receives Deleted
	// with the previous state at this event's revision. That encoding is
	// made at most once per event, by the first watcher that needs it.
	prevAsDeletedOnce sync.Once
	prevAsDeleted     *storage.Object
}

// deletedPrev returns prev with its resourceVersion set to the event's
// revision, computed once and shared by every watcher that asks.
func (e *event) deletedPrev() *storage.Object {
	e.prevAsDeletedOnce.Do(func() {
		data, err := storage.SetResourceVersion(e.prev.Data, e.rev)
		if err != nil {
			// The cache only holds objects a backend encoded; sending the
			// previous revision's bytes is the least wrong fallback.
			data = e.prev.Data
		}
		e.prevAsDeleted = &storage.Object{Key: e.prev.Key, Revision: e.rev, Data: data}
	})
	return e.prevAsDeleted
}

// filter is what one watcher selects: a key prefix (or one exact key) and
// a predicate over precomputed attributes.
type filter struct {
	prefix string
	exact  bool // prefix is one object's key
	pred   storage.Predicate
	all    bool // pred matches everything
}

func newFilter(prefix string, pred storage.Predicate) filter {
	return filter{
		prefix: prefix,
		exact:  prefix != "" && prefix[len(prefix)-1] != '/',
		pred:   pred,
		all:    pred.Empty(),
	}
}

// hasKey reports whether key is within the filter's prefix.
func (f *filter) hasKey(key string) bool {
	if f.exact {
		return key == f.prefix
	}
	return len(key) >= len(f.prefix) && key[:len(f.prefix)] == f.prefix
}

func (f *filter) matches(key string, a storage.Attrs) bool {
	return f.hasKey(key) && (f.all || f.pred.Matches(a))
}

// convert turns a cache event into what a watcher with this filter sees,
// as kube-apiserver's cacheWatcher does: an object that starts matching
// arrives as Added, one that stops matching as Deleted (its previous state
// at the event's revision). ok is false when the watcher sees nothing.
func (f *filter) convert(e *event) (storage.Event, bool) {
	cur := e.typ != storage.Deleted && f.matches(e.key, e.attrs)
	was := e.prev != nil && f.matches(e.key, e.prevAttrs)
	switch {
	case e.typ == storage.Deleted:
		if !f.matches(e.key, e.attrs) {
			return storage.Event{}, false
		}
		return storage.Event{Type: storage.Deleted, Object: e.obj, PrevObject: e.prev}, true
	case cur && was:
		return storage.Event{Type: storage.Modified, Object: e.obj, PrevObject: e.prev}, true
	case cur:
		return storage.Event{Type: storage.Added, Object: e.obj}, true
	case was:
		return storage.Event{Type: storage.Deleted, Object: e.deletedPrev(), PrevObject: e.prev}, true
	}
	return storage.Event{}, false
}
