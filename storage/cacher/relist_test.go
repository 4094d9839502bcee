package cacher

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"testing"

	"github.com/miniapi/miniapi/storage"
	"github.com/miniapi/miniapi/storage/etcd3"
	"github.com/miniapi/miniapi/storage/etcd3/etcd3test"
)

// breakable is the real etcd3 Store with one seam for fault injection: the
// test can end the watch the reflector holds and hold the reflector's next
// Watch call until it has compacted etcd past the reflector's revision.
// Everything else, including the Watch itself, is the Store's.
type breakable struct {
	*etcd3.Store
	mu      sync.Mutex
	gate    chan struct{} // non-nil: Watch waits for it to close
	waiting chan struct{} // closed when a Watch is held at the gate
	current func()        // ends the running watch
}

// hold waits at the gate, if one is set.
func (b *breakable) hold(ctx context.Context) error {
	b.mu.Lock()
	gate, waiting := b.gate, b.waiting
	b.mu.Unlock()
	if gate != nil {
		close(waiting)
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (b *breakable) Watch(ctx context.Context, prefix string, opts storage.WatchOptions) (storage.Watcher, error) {
	if err := b.hold(ctx); err != nil {
		return nil, err
	}
	w, err := b.Store.Watch(ctx, prefix, opts)
	if err == nil {
		b.mu.Lock()
		b.current = w.Stop
		b.mu.Unlock()
	}
	return w, err
}

// RunWatch is the watch the reflector runs on its goroutine.
func (b *breakable) RunWatch(ctx context.Context, prefix string, opts storage.WatchOptions, fn func(storage.Event) bool) error {
	if err := b.hold(ctx); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	b.mu.Lock()
	b.current = cancel
	b.mu.Unlock()
	return b.Store.RunWatch(ctx, prefix, opts, fn)
}

// pauseAndBreak ends the reflector's watch and returns once the
// reflector is held trying to watch again.
func (b *breakable) pauseAndBreak(t *testing.T) {
	b.mu.Lock()
	b.gate, b.waiting = make(chan struct{}), make(chan struct{})
	cur, waiting := b.current, b.waiting
	b.mu.Unlock()
	cur()
	<-waiting
}

func (b *breakable) resume() {
	b.mu.Lock()
	close(b.gate)
	b.gate = nil
	b.mu.Unlock()
}

// state applies watch events to a model of the objects.
type state map[string]int64

func (s state) apply(t *testing.T, ev storage.Event) {
	t.Helper()
	switch ev.Type {
	case storage.Added, storage.Modified:
		s[ev.Object.Key] = ev.Object.Revision
	case storage.Deleted:
		if _, ok := s[ev.Object.Key]; !ok {
			t.Fatalf("DELETED for %s, which the watcher never had", ev.Object.Key)
		}
		delete(s, ev.Object.Key)
	}
}

// TestReflectorSurvivesCompaction is requirement 7(b) for the reflector:
// its watch breaks, etcd compacts past it meanwhile, and it relists. The
// running watchers receive events that bring them exactly to etcd's
// state, a watch from inside the lost range is told to relist (410), and
// the stream goes on.
func TestReflectorSurvivesCompaction(t *testing.T) {
	client := etcd3test.Start(t)
	store := etcd3.New(etcd3.Config{Client: client})
	b := &breakable{Store: store}
	h := newHarnessOver(t, client, store, b, Config{})
	h.create("ns", "keep", nil)
	h.create("ns", "change", nil)
	h.create("ns", "remove", nil)
	last := h.create("other", "remove", nil)
	h.waitRevision(last.Revision)

	w := h.watch(testPrefix, storage.WatchOptions{AllowBookmarks: true})
	nsOnly := h.watch(testPrefix+"ns/", storage.WatchOptions{})
	model, nsModel := state{}, state{}
	for range 4 {
		model.apply(t, next(t, w))
	}
	for range 3 {
		nsModel.apply(t, next(t, nsOnly))
	}
	before := h.c.Stats().Revision

	b.pauseAndBreak(t)
	h.update("ns", "change", nil, "1")
	h.del("ns", "remove")
	h.del("other", "remove")
	h.create("ns", "added", nil)
	h.create("ns", "transient", nil)
	h.del("ns", "transient")
	final := h.update("ns", "change", nil, "2")
	if err := etcd3test.Compact(h.ctx, client, final.Revision); err != nil {
		t.Fatal(err)
	}
	b.resume()
	h.waitRevision(final.Revision)
	if s := h.c.Stats(); s.Relists != 1 {
		t.Fatalf("stats %+v: want one relist", s)
	}

	want := func(prefix string) state {
		l, err := store.List(h.ctx, prefix, storage.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s := state{}
		for _, o := range l.Items {
			s[o.Key] = o.Revision
		}
		return s
	}
	follow := func(w storage.Watcher, m state, prefix string) {
		t.Helper()
		var lastRev int64
		for !maps.Equal(m, want(prefix)) {
			ev := next(t, w)
			if ev.Type == storage.Bookmark {
				continue
			}
			if ev.Object.Revision < lastRev || ev.Object.Revision <= before {
				t.Fatalf("event %s out of order (after %d, cache was at %d)", describe(ev), lastRev, before)
			}
			if ev.Object.Key == testPrefix+"ns/transient" {
				t.Fatalf("an object created and deleted inside the gap must not appear: %s", describe(ev))
			}
			lastRev = ev.Object.Revision
			m.apply(t, ev)
		}
	}
	follow(w, model, testPrefix)
	follow(nsOnly, nsModel, testPrefix+"ns/")

	// A client resuming from inside the gap cannot be served exactly.
	gap := h.watch(testPrefix, storage.WatchOptions{ResourceVersion: fmt.Sprint(before + 1)})
	if evs := expectClosed(t, gap); len(evs) != 1 || !storage.IsCompacted(evs[0].Err) {
		t.Fatalf("watch from inside the gap: %v", evs)
	}
	// Live events continue, and resuming from the relist revision works.
	resumed := h.watch(testPrefix, storage.WatchOptions{ResourceVersion: fmt.Sprint(h.c.Stats().Revision)})
	o := h.update("ns", "keep", nil, "1")
	for _, x := range []storage.Watcher{w, nsOnly, resumed} {
		if ev := nextNonBookmark(t, x); ev.Type != storage.Modified || ev.Object.Revision != o.Revision {
			t.Fatalf("after the relist: %s", describe(ev))
		}
	}
	if h.c.Stats().TerminatedWatchers != 0 {
		t.Fatal("no watcher should have been terminated")
	}
}

// TestCompactionWhileCurrent compacts etcd while the reflector is up to
// date: nothing breaks and no relist happens. A watch from below the
// cache's history is still answered with exactly one 410 error.
func TestCompactionWhileCurrent(t *testing.T) {
	h := newHarness(t, Config{HistorySize: 2})
	first := h.create("ns", "a", nil)
	for i := range 4 {
		h.update("ns", "a", nil, fmt.Sprint(i))
	}
	last := h.update("ns", "a", nil, "x")
	// The reflector has seen every write, so its etcd watch is synced
	// (an etcd watch still catching up would be compacted, rightly).
	h.waitRevision(last.Revision)
	if err := etcd3test.Compact(h.ctx, h.client, last.Revision); err != nil {
		t.Fatal(err)
	}
	w := h.watch(testPrefix, storage.WatchOptions{ResourceVersion: fmt.Sprint(last.Revision)})
	o := h.update("ns", "a", nil, "y")
	if ev := next(t, w); ev.Object.Revision != o.Revision {
		t.Fatalf("got %s", describe(ev))
	}
	old := h.watch(testPrefix, storage.WatchOptions{ResourceVersion: fmt.Sprint(first.Revision)})
	if evs := expectClosed(t, old); len(evs) != 1 || evs[0].Type != storage.ErrorEvent || !storage.IsCompacted(evs[0].Err) {
		t.Fatalf("watch from a compacted revision: %v", evs)
	}
	// Exact lists below the history go to etcd, which reports compaction.
	_, err := h.c.List(h.ctx, testPrefix, storage.ListOptions{ResourceVersion: fmt.Sprint(first.Revision), ResourceVersionMatch: storage.MatchExact})
	if !storage.IsCompacted(err) {
		t.Fatalf("exact list at a compacted revision: %v", err)
	}
	if s := h.c.Stats(); s.Relists != 0 {
		t.Fatalf("stats %+v", s)
	}
}

// TestCompactedWithoutEtcd: told of a compaction etcd has not made (a
// logical cluster's own), the cacher refuses exact lists and continue
// tokens older than it, though etcd could still answer them, and serves
// the newer ones.
func TestCompactedWithoutEtcd(t *testing.T) {
	h := newHarness(t, Config{HistorySize: 2})
	h.create("ns", "a", nil)
	h.create("ns", "b", nil)
	first := h.update("ns", "a", nil, "first")
	for i := range 4 {
		h.update("ns", "a", nil, fmt.Sprint(i+1))
	}
	last := h.update("ns", "a", nil, "x")
	h.waitRevision(last.Revision)
	exact := func(rev int64) error {
		_, err := h.c.List(h.ctx, testPrefix, storage.ListOptions{ResourceVersion: fmt.Sprint(rev), ResourceVersionMatch: storage.MatchExact})
		return err
	}
	// Below the cache's history: etcd answers.
	if err := exact(first.Revision); err != nil {
		t.Fatalf("exact list before any compaction: %v", err)
	}
	page, err := h.c.List(h.ctx, testPrefix, storage.ListOptions{ResourceVersion: fmt.Sprint(first.Revision), ResourceVersionMatch: storage.MatchExact, Limit: 1})
	if err != nil || page.Continue == "" {
		t.Fatalf("first page: %+v, %v", page, err)
	}
	h.c.Compacted(last.Revision)
	if err := exact(first.Revision); !storage.IsCompacted(err) {
		t.Fatalf("exact list before the compaction: %v, want compacted", err)
	}
	_, err = h.c.List(h.ctx, testPrefix, storage.ListOptions{Continue: page.Continue, Limit: 1})
	if !storage.IsCompacted(err) {
		t.Fatalf("continue token from before the compaction: %v, want compacted", err)
	}
	if err := exact(last.Revision); err != nil {
		t.Fatalf("exact list at the compaction point: %v", err)
	}
}

// TestReflectorOverWatchChannel: a backend that cannot run a watch on the
// reflector's goroutine (no storage.WatchRunner: here the etcd3 Store
// behind an interface that hides it) is followed through its Watch
// channel, with the same result: a transaction's events applied as one
// change, and watchers told of every change in order.
func TestReflectorOverWatchChannel(t *testing.T) {
	client := etcd3test.Start(t)
	store := etcd3.New(etcd3.Config{Client: client})
	h := newHarnessOver(t, client, store, struct{ storage.Interface }{store}, Config{})
	if _, ok := h.c.underlying.(storage.WatchRunner); ok {
		t.Fatal("the wrapped store still runs watches")
	}
	w := h.watch(testPrefix, storage.WatchOptions{ResourceVersion: "0"})
	h.create("ns", "a", nil)
	h.update("ns", "a", nil, "1")
	last := h.del("ns", "a")
	for _, want := range []storage.EventType{storage.Added, storage.Modified, storage.Deleted} {
		if ev := next(t, w); ev.Type != want {
			t.Fatalf("event %s, want %s", ev.Type, want)
		}
	}
	h.waitRevision(last.Revision)
}
