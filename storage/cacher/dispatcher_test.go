package cacher

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/miniapi/miniapi/storage"
)

// instantClock is a Clock in which every wait ends at once: After advances
// the time by d and returns a channel that is already ready. It makes the
// dispatcher's budget deterministic.
type instantClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *instantClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *instantClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

func (c *instantClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func TestTimeBudget(t *testing.T) {
	clock := &instantClock{now: time.Unix(0, 0)}
	b := timeBudget{clock: clock, max: 100 * time.Millisecond, left: 100 * time.Millisecond, refilled: clock.Now()}
	steps := []struct {
		name     string
		advance  time.Duration
		giveBack time.Duration
		want     time.Duration
	}{
		{"starts full", 0, 0, 100 * time.Millisecond},
		{"spent, no time passed", 0, 0, 0},
		{"refills at max per second", 500 * time.Millisecond, 0, 50 * time.Millisecond},
		{"unused time comes back", 0, 30 * time.Millisecond, 30 * time.Millisecond},
		{"capped at max", time.Hour, 0, 100 * time.Millisecond},
	}
	var prev time.Duration
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			b.giveBack(s.giveBack)
			clock.advance(s.advance)
			if got := b.take(); got != s.want {
				t.Fatalf("take = %v, want %v (previous %v)", got, s.want, prev)
			}
			prev = s.want
		})
	}
}

// channelWatcher registers a bare cacheWatcher whose input the test reads
// directly: no goroutine, so the test controls when it is full.
func channelWatcher(d *dispatcher, prefix string, startRev int64, buffer int) *cacheWatcher {
	ctx, cancel := context.WithCancel(context.Background())
	w := &cacheWatcher{
		filter:   newFilter(prefix, storage.Predicate{}),
		startRev: startRev,
		input:    make(chan *event, buffer),
		ctx:      ctx,
		cancel:   cancel,
	}
	d.add(w)
	return w
}

func TestDispatchSelectsAndTerminates(t *testing.T) {
	clock := &instantClock{now: time.Unix(0, 0)}
	d := newDispatcher(clock, quietLogger(), 100*time.Millisecond)
	ctx := context.Background()
	all := channelWatcher(d, testPrefix, 0, 10)
	late := channelWatcher(d, testPrefix, 5, 10) // snapshot already covers revisions up to 5
	nsB := channelWatcher(d, testPrefix+"b/", 0, 10)
	full := channelWatcher(d, testPrefix, 0, 1)
	full.input <- &event{} // fills it

	e := &event{typ: storage.Added, rev: 5, key: testPrefix + "a/x"}
	d.dispatch(ctx, e)
	if len(all.input) != 1 || len(late.input) != 0 || len(nsB.input) != 0 {
		t.Fatalf("inputs: all %d late %d nsB %d", len(all.input), len(late.input), len(nsB.input))
	}
	if full.ctx.Err() == nil || d.terminated.Load() != 1 || d.count() != 3 {
		t.Fatalf("the full watcher must be terminated and unregistered: %v, %d, %d", full.ctx.Err(), d.terminated.Load(), d.count())
	}
	// The budget is spent: the next full watcher gets only what refilled
	// while the dispatcher waited for the first (100 ms at 100 ms per
	// second: 10 ms).
	before := clock.Now()
	all.input <- &event{}
	for len(all.input) < cap(all.input) {
		all.input <- &event{}
	}
	d.dispatch(ctx, &event{typ: storage.Added, rev: 6, key: testPrefix + "b/y"})
	if all.ctx.Err() == nil || d.terminated.Load() != 2 || clock.Now().Sub(before) != 10*time.Millisecond {
		t.Fatalf("second full watcher: %v, terminated %d, waited %v", all.ctx.Err(), d.terminated.Load(), clock.Now().Sub(before))
	}
	if len(late.input) != 1 || len(nsB.input) != 1 {
		t.Fatalf("others must get the event: late %d nsB %d", len(late.input), len(nsB.input))
	}
	// Terminating twice counts once.
	d.terminate(all, 7)
	if d.terminated.Load() != 2 {
		t.Fatal("a watcher was counted twice")
	}
}

func TestOfferBookmarksOnlyWhenDue(t *testing.T) {
	clock := &instantClock{now: time.Unix(100, 0)}
	d := newDispatcher(clock, quietLogger(), time.Millisecond)
	d.rev = 42
	never := channelWatcher(d, testPrefix, 0, 2)
	due := channelWatcher(d, testPrefix, 0, 2)
	due.nextBookmark.Store(clock.Now().UnixNano())
	later := channelWatcher(d, testPrefix, 0, 2)
	later.nextBookmark.Store(clock.Now().Add(time.Minute).UnixNano())
	full := channelWatcher(d, testPrefix, 0, 1)
	full.nextBookmark.Store(1)
	full.input <- &event{}

	d.offerBookmarks()
	if len(never.input) != 0 || len(later.input) != 0 {
		t.Fatal("bookmark offered to a watcher that is not due")
	}
	if len(due.input) != 1 || (<-due.input).rev != 42 {
		t.Fatal("the due watcher must get a bookmark at the dispatched revision")
	}
	if full.ctx.Err() != nil {
		t.Fatal("a full watcher misses a bookmark; it is not terminated for it")
	}
}

// TestPlanBookmarks checks that the dispatcher sleeps until the earliest
// bookmark is due (and not at all when none is wanted), no less than
// bookmarkTick, and that a watcher due sooner than planned wakes it.
func TestPlanBookmarks(t *testing.T) {
	clock := &instantClock{now: time.Unix(100, 0)}
	d := newDispatcher(clock, quietLogger(), time.Millisecond)
	// plan returns the wait it planned: instantClock.After advances the
	// time by it.
	plan := func() (time.Duration, bool) {
		before := clock.Now()
		ch := d.planBookmarks()
		return clock.Now().Sub(before), ch != nil
	}

	channelWatcher(d, testPrefix, 0, 1) // wants no bookmarks
	if _, ok := plan(); ok {
		t.Fatal("planned a wake with no watcher wanting bookmarks")
	}
	soon := channelWatcher(d, testPrefix, 0, 1)
	soon.nextBookmark.Store(clock.Now().Add(time.Minute).UnixNano())
	later := channelWatcher(d, testPrefix, 0, 1)
	later.nextBookmark.Store(clock.Now().Add(time.Hour).UnixNano())
	if wait, ok := plan(); !ok || wait != time.Minute {
		t.Fatalf("planned %v (%v), want the earliest bookmark's minute", wait, ok)
	}
	soon.nextBookmark.Store(clock.Now().UnixNano() - 1) // due, not yet taken
	if wait, ok := plan(); !ok || wait != bookmarkTick {
		t.Fatalf("planned %v (%v), want bookmarkTick for a bookmark already due", wait, ok)
	}

	planned := d.wakeAt.Load()
	d.bookmarkAt(planned + 1)
	if len(d.kick) != 0 {
		t.Fatal("a bookmark due after the planned wake kicked the dispatcher")
	}
	d.bookmarkAt(planned - 1)
	if len(d.kick) != 1 {
		t.Fatal("a bookmark due before the planned wake did not kick the dispatcher")
	}
}
