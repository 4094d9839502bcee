package cacher

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/miniapi/miniapi/storage"
)

// entry is one cached object with the attributes selectors look at,
// computed once when the object entered the cache.
type entry struct {
	obj   *storage.Object
	attrs storage.Attrs
}

// watchCache holds every current object of one resource type, indexed by
// key and kept sorted for lists, and a ring of the recent events that
// watches from a resourceVersion replay. Only the reflector writes to it.
type watchCache struct {
	clock   Clock
	dynamic bool // the history grows while it holds under eventFreshDuration

	// mu protects every field below. Only watchCache's own methods take
	// it. Lock order: mu, then dispatcher.mu (register snapshots a new
	// watcher under mu and registers it with the dispatcher before mu is
	// released). Nothing blocks while holding mu.
	mu sync.RWMutex
	// byKey and sorted index the same entries: by key, and in key order.
	byKey  map[string]*entry
	sorted []*entry
	// bytes is the total size of the cached objects' encodings.
	bytes int64
	// rev is the revision the cache reflects: every change up to rev has
	// been applied. Zero until the first list.
	rev int64
	// floor is the revision after which history is complete: every event
	// with a revision above floor is in history. A watch from N can be
	// served if and only if floor <= N <= rev.
	floor int64
	// compacted is the oldest revision the underlying storage still
	// serves, when the cacher has been told (see Cacher.Compacted). The
	// cache does not list at older revisions either, so that an answer
	// does not depend on which path serves it.
	compacted int64
	// expired is the oldest revision a watch may start after (see
	// Cacher.Expire): watches are served from history whatever etcd
	// compacted, as kube-apiserver's cache serves them, unless told.
	expired int64
	history *ring[*event]
	// m records history resizes; set once before use.
	m *cacheMetrics
	// revChanged is closed and replaced whenever rev advances, waking
	// everyone waiting for a revision.
	revChanged chan struct{}
}

func newWatchCache(historySize int, clock Clock) *watchCache {
	dynamic := historySize == 0
	if dynamic {
		historySize = minHistory
	}
	return &watchCache{
		clock:      clock,
		dynamic:    dynamic,
		byKey:      map[string]*entry{},
		history:    newRing[*event](historySize),
		revChanged: make(chan struct{}),
	}
}

func compareEntryKey(e *entry, key string) int { return strings.Compare(e.obj.Key, key) }

// setRevLocked advances rev and wakes the waiters.
func (wc *watchCache) setRevLocked(rev int64) {
	if rev <= wc.rev {
		return
	}
	wc.rev = rev
	close(wc.revChanged)
	wc.revChanged = make(chan struct{})
}

// putLocked stores e in both indexes.
func (wc *watchCache) putLocked(e *entry) {
	key := e.obj.Key
	wc.bytes += int64(len(e.obj.Data))
	if old, ok := wc.byKey[key]; ok {
		wc.bytes -= int64(len(old.obj.Data))
		i, _ := slices.BinarySearchFunc(wc.sorted, key, compareEntryKey)
		wc.sorted[i] = e
	} else {
		i, _ := slices.BinarySearchFunc(wc.sorted, key, compareEntryKey)
		wc.sorted = slices.Insert(wc.sorted, i, e)
	}
	wc.byKey[key] = e
}

func (wc *watchCache) deleteLocked(key string) {
	old, ok := wc.byKey[key]
	if !ok {
		return
	}
	wc.bytes -= int64(len(old.obj.Data))
	delete(wc.byKey, key)
	i, found := slices.BinarySearchFunc(wc.sorted, key, compareEntryKey)
	if found {
		wc.sorted = slices.Delete(wc.sorted, i, i+1)
	}
}

// applyRun records the changes of one revision (one transaction's, in
// the underlying watch's order; attrs[i] is evs[i]'s, unused for
// Deleted) as one change, so that no reader sees part of the revision,
// and returns the events to dispatch: none when the revision is not
// news (already applied). Callers compute attrs before taking the lock,
// because decoding is the expensive part.
func (wc *watchCache) applyRun(evs []storage.Event, attrs []storage.Attrs) []*event {
	if len(evs) == 0 {
		return nil
	}
	now := wc.clock.Now()
	wc.mu.Lock()
	defer wc.mu.Unlock()
	rev := evs[0].Object.Revision
	if rev <= wc.rev {
		return nil
	}
	out := make([]*event, 0, len(evs))
	for i, ev := range evs {
		e := &event{typ: ev.Type, rev: rev, key: ev.Object.Key, obj: ev.Object, attrs: attrs[i], recorded: now}
		if old, ok := wc.byKey[e.key]; ok {
			e.prev, e.prevAttrs = old.obj, old.attrs
		}
		switch ev.Type {
		case storage.Added, storage.Modified:
			// The cache, not the backend, decides Added versus
			// Modified: it is what the cached state says happened.
			e.typ = storage.Added
			if e.prev != nil {
				e.typ = storage.Modified
			}
			wc.putLocked(&entry{obj: ev.Object, attrs: attrs[i]})
		case storage.Deleted:
			if e.prev == nil {
				// Nothing to delete: the cache never saw the object.
				// The revision still moves on, below.
				continue
			}
			e.attrs = e.prevAttrs
			wc.deleteLocked(e.key)
		default:
			continue
		}
		wc.appendLocked(e)
		out = append(out, e)
	}
	wc.setRevLocked(rev)
	return out
}

// appendLocked adds e to history, growing a dynamic history that would
// otherwise drop events younger than eventFreshDuration.
func (wc *watchCache) appendLocked(e *event) {
	h := wc.history
	if wc.dynamic && h.Len() == h.Cap() && h.Cap() < maxHistory {
		if _, oldest, ok := h.Oldest(); ok && e.recorded.Sub(oldest.recorded) < eventFreshDuration {
			old := h.Cap()
			h.Resize(min(2*old, maxHistory))
			wc.m.capacity(old, h.Cap())
		}
	}
	if old, evicted := h.Append(e.rev, e); evicted {
		wc.floor = old.rev
	}
}

// progress records that the underlying store has no changes up to rev.
func (wc *watchCache) progress(rev int64) {
	wc.mu.Lock()
	wc.setRevLocked(rev)
	wc.mu.Unlock()
}

// replace installs a fresh list taken at rev. The first list just fills
// the cache. A relist (after the underlying watch was compacted away)
// returns the events that turn the old state into the new one, for the
// watchers already running:
//
//   - keys that vanished: Deleted, at revision oldRev+1 (the true deletion
//     revisions were compacted; oldRev+1 is the earliest any can have had);
//   - new or changed keys: Added or Modified at the object's own revision,
//     in revision order.
//
// Intermediate states are lost, as they are in etcd. History restarts
// empty with floor = rev, so a client resuming from any revision inside
// the gap gets 410 Expired and relists rather than trusting events whose
// revisions were synthesized.
func (wc *watchCache) replace(objs []*storage.Object, attrs []storage.Attrs, rev int64) []*event {
	now := wc.clock.Now()
	byKey := make(map[string]*entry, len(objs))
	sorted := make([]*entry, len(objs))
	var bytes int64
	for i, o := range objs {
		e := &entry{obj: o, attrs: attrs[i]}
		byKey[o.Key], sorted[i] = e, e
		bytes += int64(len(o.Data))
	}
	slices.SortFunc(sorted, func(a, b *entry) int { return strings.Compare(a.obj.Key, b.obj.Key) })

	wc.mu.Lock()
	defer wc.mu.Unlock()
	var events []*event
	if wc.rev > 0 {
		oldRev := wc.rev
		for _, old := range wc.sorted {
			if _, ok := byKey[old.obj.Key]; !ok {
				events = append(events, &event{
					typ: storage.Deleted, rev: oldRev + 1, key: old.obj.Key,
					obj:   &storage.Object{Key: old.obj.Key, Revision: oldRev + 1, Data: old.obj.Data},
					attrs: old.attrs, prev: old.obj, prevAttrs: old.attrs, recorded: now,
				})
			}
		}
		// A Deleted event's Data must carry its revision; deletedPrev
		// computes exactly that encoding.
		for _, e := range events {
			e.obj = e.deletedPrev()
		}
		var changed []*event
		for _, cur := range sorted {
			old, ok := wc.byKey[cur.obj.Key]
			switch {
			case !ok:
				changed = append(changed, &event{typ: storage.Added, rev: cur.obj.Revision, key: cur.obj.Key,
					obj: cur.obj, attrs: cur.attrs, recorded: now})
			case old.obj.Revision != cur.obj.Revision:
				changed = append(changed, &event{typ: storage.Modified, rev: cur.obj.Revision, key: cur.obj.Key,
					obj: cur.obj, attrs: cur.attrs, prev: old.obj, prevAttrs: old.attrs, recorded: now})
			}
		}
		slices.SortStableFunc(changed, func(a, b *event) int { return cmp.Compare(a.rev, b.rev) })
		events = append(events, changed...)
	}
	wc.byKey, wc.sorted, wc.bytes = byKey, sorted, bytes
	wc.history.Reset()
	wc.floor = rev
	if rev < wc.rev {
		// A list older than what the cache had seen cannot happen with a
		// consistent list; keep revisions monotonic regardless.
		rev = wc.rev
	}
	wc.setRevLocked(rev)
	return events
}

// revision returns the revision the cache reflects.
func (wc *watchCache) revision() int64 {
	wc.mu.RLock()
	defer wc.mu.RUnlock()
	return wc.rev
}

// current returns the revision the cache reflects and a channel that is
// closed when it next advances.
func (wc *watchCache) current() (rev int64, changed <-chan struct{}) {
	wc.mu.RLock()
	defer wc.mu.RUnlock()
	return wc.rev, wc.revChanged
}

// size returns the cache's revision, its number of objects and their
// total size.
func (wc *watchCache) size() (rev int64, objects int, bytes int64) {
	wc.mu.RLock()
	defer wc.mu.RUnlock()
	return wc.rev, len(wc.byKey), wc.bytes
}

// stats returns the cache's part of a Cacher's Stats.
func (wc *watchCache) stats() Stats {
	wc.mu.RLock()
	defer wc.mu.RUnlock()
	return Stats{
		Revision:        wc.rev,
		Objects:         len(wc.byKey),
		ObjectBytes:     wc.bytes,
		History:         wc.history.Len(),
		HistoryCapacity: wc.history.Cap(),
	}
}

// setCompacted records that the underlying storage no longer serves
// revisions before rev (see Cacher.Compacted), and, with watches, that
// no watch may start before it either (see Cacher.Expire).
func (wc *watchCache) setCompacted(rev int64, watches bool) {
	wc.mu.Lock()
	defer wc.mu.Unlock()
	wc.compacted = max(wc.compacted, rev)
	if watches {
		wc.expired = max(wc.expired, rev)
	}
}

// compactedRev is the compaction point setCompacted recorded.
func (wc *watchCache) compactedRev() int64 {
	wc.mu.RLock()
	defer wc.mu.RUnlock()
	return wc.compacted
}

// get returns the cached object at key (nil if there is none) and the
// revision the cache reflects.
func (wc *watchCache) get(key string) (*entry, int64) {
	wc.mu.RLock()
	defer wc.mu.RUnlock()
	return wc.byKey[key], wc.rev
}

// register sets where the new watcher w starts and hands it to add (the
// dispatcher's), under mu, so that no event is lost or repeated between
// w's start and its registration: w starts at the cache's revision with
// the objects under prefix when initial; else with the history events
// after rv, or, for rv 0, with nothing. When history no longer reaches
// back to rv it registers nothing and reports false with the oldest
// revision a watch can start from.
func (wc *watchCache) register(w *cacheWatcher, prefix string, initial bool, rv int64, add func(*cacheWatcher)) (oldest int64, ok bool) {
	wc.mu.RLock()
	defer wc.mu.RUnlock()
	w.startRev = wc.rev
	switch {
	case initial:
		w.initObjs = wc.snapshotLocked(prefix)
	case rv == 0:
		// No initial events and no revision: start from now.
	case rv > wc.rev:
		// From a revision not reached yet: the events after it.
		w.startRev = rv
	default:
		if w.initEvents, ok = wc.eventsAfterLocked(rv, &w.filter); !ok {
			return wc.oldestWatchLocked(), false
		}
	}
	add(w)
	return 0, true
}

// list returns a page of the objects under prefix as the cache holds them
// now (see listLocked).
func (wc *watchCache) list(prefix string, opts storage.ListOptions) *storage.List {
	wc.mu.RLock()
	defer wc.mu.RUnlock()
	return wc.listLocked(prefix, prefix, wc.rev, opts)
}

// listAt returns the page of the objects under prefix at exactly rev,
// starting at key from, or nil when the cache cannot reconstruct rev.
func (wc *watchCache) listAt(prefix, from string, rev int64, opts storage.ListOptions) *storage.List {
	wc.mu.RLock()
	defer wc.mu.RUnlock()
	if !wc.servesAtLocked(rev) {
		return nil
	}
	return wc.listLocked(prefix, from, rev, opts)
}

// waitUntil blocks until the cache reflects at least rev, ctx is done, or
// timeout passes; the timeout yields a TooLargeResourceVersion error
// naming key. While it waits it calls poke (if not nil) at once and then
// every pokeInterval: the cacher asks etcd for a progress notification,
// which is how an idle cache learns that it is current.
func (wc *watchCache) waitUntil(ctx context.Context, rev int64, timeout time.Duration, key string, poke func()) error {
	var deadline, nextPoke <-chan time.Time
	for {
		cur, changed := wc.current()
		if cur >= rev && cur > 0 {
			return nil
		}
		if deadline == nil {
			deadline = wc.clock.After(timeout)
			if poke != nil {
				poke()
				nextPoke = wc.clock.After(pokeInterval)
			}
		}
		select {
		case <-changed:
		case <-nextPoke:
			poke()
			nextPoke = wc.clock.After(pokeInterval)
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline:
			return storage.NewError(storage.CodeTooLargeResourceVersion, key, cur,
				fmt.Errorf("too large resource version: %d, current: %d", rev, cur))
		}
	}
}

// eventsAfterLocked returns the history events after rev whose keys f
// selects. ok is false when history no longer reaches back to rev. An
// empty history is complete from floor (the last list's revision), so a
// watch from exactly the cache's revision succeeds with no events.
func (wc *watchCache) eventsAfterLocked(rev int64, f *filter) (events []*event, ok bool) {
	if rev < wc.oldestWatchLocked() {
		return nil, false
	}
	for _, e := range wc.history.AscendFrom(rev + 1) {
		if f.hasKey(e.key) {
			events = append(events, e)
		}
	}
	return events, true
}

// oldestWatchLocked is the oldest revision a watch can start from: the
// history's floor, or the revision before the point history was expired
// at (etcd serves a watch from its compacted revision on).
func (wc *watchCache) oldestWatchLocked() int64 {
	return max(wc.floor, wc.expired-1)
}

// servesAtLocked reports whether the cache can reconstruct the state at
// rev.
func (wc *watchCache) servesAtLocked(rev int64) bool {
	return rev >= wc.floor && rev >= wc.compacted && rev <= wc.rev
}

// snapshotLocked returns the cached entries under prefix (or at the exact
// key prefix names), in key order.
func (wc *watchCache) snapshotLocked(prefix string) []*entry {
	if prefix != "" && prefix[len(prefix)-1] != '/' {
		if e := wc.byKey[prefix]; e != nil {
			return []*entry{e}
		}
		return nil
	}
	lo, hi := wc.prefixRangeLocked(prefix)
	return slices.Clone(wc.sorted[lo:hi])
}

// prefixRangeLocked returns the bounds of the keys under prefix in sorted.
// Keys sharing a prefix are contiguous, so two binary searches find them.
func (wc *watchCache) prefixRangeLocked(prefix string) (lo, hi int) {
	lo, _ = slices.BinarySearchFunc(wc.sorted, prefix, compareEntryKey)
	hi = lo + sort.Search(len(wc.sorted)-lo, func(i int) bool {
		return !strings.HasPrefix(wc.sorted[lo+i].obj.Key, prefix)
	})
	return lo, hi
}

// listLocked builds one page of the objects under prefix at revision rev
// (floor <= rev <= c.rev), starting at key from, filtered by the
// predicate. Items are the cached objects themselves.
func (wc *watchCache) listLocked(prefix, from string, rev int64, opts storage.ListOptions) *storage.List {
	pred := opts.Predicate
	all := pred.Empty()
	limit := int(opts.Limit)
	l := &storage.List{Revision: rev, Items: []*storage.Object{}}
	var last string
	var more bool
	var remaining int64
	for e := range wc.entriesLocked(prefix, from, rev) {
		if !all && !pred.Matches(e.attrs) {
			continue
		}
		if limit > 0 && len(l.Items) == limit {
			more = true
			if !all {
				break
			}
			remaining++
			continue
		}
		if cap(l.Items) == 0 {
			l.Items = make([]*storage.Object, 0, wc.sizeHintLocked(prefix, limit))
		}
		l.Items = append(l.Items, e.obj)
		last = e.obj.Key
	}
	if more {
		// The next page starts just after the last key returned.
		tok, err := storage.EncodeContinue(last+"\x00", prefix, rev)
		if err == nil {
			l.Continue = tok
		}
		if all {
			l.RemainingItemCount = &remaining
		}
	}
	return l
}

// sizeHintLocked guesses the length of a page: the objects under prefix,
// at most limit.
func (wc *watchCache) sizeHintLocked(prefix string, limit int) int {
	lo, hi := wc.prefixRangeLocked(prefix)
	if limit > 0 {
		return min(limit, hi-lo+1)
	}
	return hi - lo + 1
}

// entriesLocked yields, in key order, the entries under prefix with keys
// at or after from, as they were at revision rev. For rev below the
// current revision it undoes the later events: the first event after rev
// for a key holds the key's state at rev (its previous object, or nothing
// if it was created after rev).
func (wc *watchCache) entriesLocked(prefix, from string, rev int64) iter.Seq[*entry] {
	lo, hi := wc.prefixRangeLocked(prefix)
	if from > prefix {
		i, _ := slices.BinarySearchFunc(wc.sorted[lo:hi], from, compareEntryKey)
		lo += i
	}
	cur := wc.sorted[lo:hi]
	if rev >= wc.rev {
		return slices.Values(cur)
	}
	overlay := map[string]*entry{}
	for _, e := range wc.history.AscendFrom(rev + 1) {
		if !strings.HasPrefix(e.key, prefix) || e.key < from {
			continue
		}
		if _, seen := overlay[e.key]; seen {
			continue
		}
		var then *entry
		if e.prev != nil {
			then = &entry{obj: e.prev, attrs: e.prevAttrs}
		}
		overlay[e.key] = then
	}
	// Keys that existed at rev but do not now.
	var gone []*entry
	for k, e := range overlay {
		if e != nil && wc.byKey[k] == nil {
			gone = append(gone, e)
		}
	}
	slices.SortFunc(gone, func(a, b *entry) int { return strings.Compare(a.obj.Key, b.obj.Key) })
	return func(yield func(*entry) bool) {
		i, j := 0, 0
		for i < len(cur) || j < len(gone) {
			var e *entry
			if j == len(gone) || (i < len(cur) && cur[i].obj.Key < gone[j].obj.Key) {
				e = cur[i]
				i++
				if then, ok := overlay[e.obj.Key]; ok {
					if then == nil {
						continue
					}
					e = then
				}
			} else {
				e = gone[j]
				j++
			}
			if !yield(e) {
				return
			}
		}
	}
}
