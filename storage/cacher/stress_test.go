package cacher

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miniapi/miniapi/storage"
)

// logged is one acknowledged write as its writer saw it.
type logged struct {
	rev int64
	key string
	typ storage.EventType
}

func (l logged) String() string { return fmt.Sprintf("%s %s@%d", l.typ, l.key, l.rev) }

// TestConcurrentWritersAndWatchers is requirement 7(a): 8 writers and 50
// watchers started at different resourceVersions while the writes happen.
// Every watcher must receive exactly the writes after its start, in
// revision order: compared with the full ordered write log.
func TestConcurrentWritersAndWatchers(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	h := newHarness(t, Config{HistorySize: 100000})
	const writers, opsPerWriter, watchers = 8, 40, 50

	var mu sync.Mutex
	var log []logged
	record := func(o *storage.Object, typ storage.EventType) {
		mu.Lock()
		log = append(log, logged{o.Revision, o.Key, typ})
		mu.Unlock()
	}
	startRev := h.c.Stats().Revision

	var wg sync.WaitGroup
	for wr := range writers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(wr), 1))
			live := map[string]bool{}
			for i := range opsPerWriter {
				name := fmt.Sprintf("w%d-%d", wr, r.IntN(5))
				ns := fmt.Sprintf("ns%d", wr%3)
				key := testPrefix + ns + "/" + name
				switch {
				case !live[key]:
					o, err := h.c.Create(h.ctx, key, cmData(ns, name, nil, "0"))
					if err != nil {
						t.Error(err)
						return
					}
					live[key] = true
					record(o, storage.Added)
				case r.IntN(4) == 0:
					o, err := h.c.Delete(h.ctx, key, storage.DeleteOptions{})
					if err != nil {
						t.Error(err)
						return
					}
					delete(live, key)
					record(o, storage.Deleted)
				default:
					o, err := h.c.GuaranteedUpdate(h.ctx, key, storage.UpdateOptions{},
						func(*storage.Object) ([]byte, error) { return cmData(ns, name, nil, fmt.Sprint(i)), nil })
					if err != nil {
						t.Error(err)
						return
					}
					record(o, storage.Modified)
				}
			}
		})
	}

	// Watchers start while the writes go on, each from a revision some
	// write already got (or the start), so each replays a different part
	// of history before following live events.
	type result struct {
		from   int64
		events []storage.Event
		err    string
	}
	results := make([]result, watchers)
	sentinelKey := testPrefix + "zz/sentinel"
	var readers sync.WaitGroup
	for i := range watchers {
		mu.Lock()
		from := startRev
		if len(log) > 0 {
			from = log[rand.IntN(len(log))].rev
		}
		mu.Unlock()
		w := h.watch(testPrefix, storage.WatchOptions{ResourceVersion: fmt.Sprint(from)})
		results[i].from = from
		readers.Go(func() {
			deadline := time.After(3 * waitLimit)
			for {
				select {
				case ev, ok := <-w.ResultChan():
					if !ok {
						results[i].err = "channel closed"
						return
					}
					if ev.Object != nil && ev.Object.Key == sentinelKey {
						return
					}
					results[i].events = append(results[i].events, ev)
				case <-deadline:
					results[i].err = "no sentinel"
					return
				}
			}
		})
		time.Sleep(time.Millisecond) // spread the starts over the writes
	}
	wg.Wait()
	h.create("zz", "sentinel", nil)
	readers.Wait()

	slices.SortFunc(log, func(a, b logged) int { return int(a.rev - b.rev) })
	for i, r := range results {
		if r.err != "" {
			t.Fatalf("watcher %d from %d: %s", i, r.from, r.err)
		}
		var want, got []string
		for _, l := range log {
			if l.rev > r.from {
				want = append(want, l.String())
			}
		}
		for _, ev := range r.events {
			got = append(got, logged{ev.Object.Revision, ev.Object.Key, ev.Type}.String())
		}
		if !slices.Equal(got, want) {
			t.Fatalf("watcher %d from %d: %d events, want %d\ngot  %v\nwant %v", i, r.from, len(got), len(want), got, want)
		}
	}
	if n := h.c.Stats().TerminatedWatchers; n != 0 {
		t.Fatalf("%d watchers were terminated", n)
	}
}

// TestSlowWatcherTerminated is requirement 7(e): a watcher that never
// reads is closed, without an error event, while 100 watchers that read
// receive every event.
func TestSlowWatcherTerminated(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	const buffer, writes, fast = 50, 300, 100
	h := newHarness(t, Config{WatcherBuffer: buffer, DispatchBudget: 20 * time.Millisecond})
	start := fmt.Sprint(h.c.Stats().Revision)
	slow := h.watch(testPrefix, storage.WatchOptions{ResourceVersion: start})

	counts := make([]atomic.Int64, fast)
	var readers sync.WaitGroup
	for i := range fast {
		w := h.watch(testPrefix, storage.WatchOptions{ResourceVersion: start})
		readers.Go(func() {
			deadline := time.After(3 * waitLimit)
			for counts[i].Load() < writes {
				select {
				case ev, ok := <-w.ResultChan():
					if !ok {
						return
					}
					if ev.Type == storage.Added {
						counts[i].Add(1)
					}
				case <-deadline:
					return
				}
			}
		})
	}
	// The writer lets the fast watchers fall at most buffer/2 events
	// behind, so that they are fast by construction even on a loaded
	// machine (under -race, 100 watchers can be slower than etcd). A
	// watcher that stopped counting ends the wait at the deadline.
	deadline := time.Now().Add(3 * waitLimit)
	for i := range writes {
		for time.Now().Before(deadline) && minCount(counts) < int64(i-buffer/2) {
			time.Sleep(time.Millisecond)
		}
		h.create("ns", fmt.Sprint(i), nil)
	}
	readers.Wait()
	for i := range counts {
		if n := counts[i].Load(); n != writes {
			t.Fatalf("fast watcher %d got %d of %d events; %+v", i, n, writes, h.c.Stats())
		}
	}
	evs := expectClosed(t, slow)
	if len(evs) > 2*buffer+1 {
		t.Fatalf("slow watcher got %d events, more than its buffers hold", len(evs))
	}
	for i, ev := range evs {
		if ev.Type != storage.Added || ev.Object.Revision != evs[0].Object.Revision+int64(i) {
			t.Fatalf("slow watcher's events must be a gap-free prefix; event %d is %s", i, describe(ev))
		}
	}
	if s := h.c.Stats(); s.TerminatedWatchers != 1 || s.Watchers != fast {
		t.Fatalf("stats %+v", s)
	}
}

// TestNoGoroutineLeaks is requirement 7(f): stopping watches and closing
// the cacher leave none of the pipeline's goroutines behind. TestMain's
// goleak check covers everything else once etcd has stopped; here etcd is
// still running, so the check looks for the pipeline's own functions.
func TestNoGoroutineLeaks(t *testing.T) {
	h := newHarness(t, Config{BookmarkInterval: 10 * time.Millisecond})
	h.create("ns", "a", nil)
	h.waitRevision(h.c.Stats().Revision)

	var ws []storage.Watcher
	for i := range 20 {
		opts := storage.WatchOptions{AllowBookmarks: i%2 == 0}
		if i%3 == 0 {
			opts.ResourceVersion = "0"
		}
		ws = append(ws, h.watch(testPrefix, opts))
	}
	ctx, cancel := context.WithCancel(h.ctx)
	byCtx, err := h.c.Watch(ctx, testPrefix, storage.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h.create("ns", "b", nil)
	for i, w := range ws {
		if i%2 == 0 {
			next(t, w) // some watchers have delivered, some are blocked sending
		}
		w.Stop()
		w.Stop() // idempotent
		expectClosed(t, w)
	}
	cancel() // a client that goes away
	expectClosed(t, byCtx)
	waitGone(t, "(*cacheWatcher).run")
	if n := h.c.Stats().Watchers; n != 0 {
		t.Fatalf("%d watchers still registered", n)
	}

	// Watchers left running end with Close, which waits for them.
	var open []storage.Watcher
	for range 5 {
		open = append(open, h.watch(testPrefix, storage.WatchOptions{AllowBookmarks: true}))
	}
	if err := h.c.Close(); err != nil {
		t.Fatal(err)
	}
	// Close returned, so the cacher's goroutines are gone already.
	if stacks := pipelineGoroutines("storage/cacher.(*"); len(stacks) > 0 {
		t.Fatalf("goroutines left after Close:\n%s", strings.Join(stacks, "\n\n"))
	}
	h.c.Close() // idempotent
	for _, w := range open {
		expectClosed(t, w)
	}
	if _, err := h.c.Watch(h.ctx, testPrefix, storage.WatchOptions{}); err == nil {
		t.Fatal("Watch after Close must fail")
	}
	// The etcd3 watch the reflector stopped ends on its own goroutine.
	waitGone(t, "etcd3.(*watcher).run")
}

// pipelineGoroutines returns the stacks of other goroutines that contain
// fn.
func pipelineGoroutines(fn string) []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var found []string
	for i, g := range strings.Split(string(buf), "\n\n") {
		if i > 0 && strings.Contains(g, fn) { // the first stack is ours
			found = append(found, g)
		}
	}
	return found
}

// waitGone waits until no goroutine runs fn, failing after waitLimit.
func waitGone(t *testing.T, fn string) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		stacks := pipelineGoroutines(fn)
		if len(stacks) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines still run %s:\n%s", len(stacks), fn, strings.Join(stacks, "\n\n"))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func minCount(counts []atomic.Int64) int64 {
	m := counts[0].Load()
	for i := range counts {
		m = min(m, counts[i].Load())
	}
	return m
}
