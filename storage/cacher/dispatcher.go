package cacher

import (
	"context"
	"log/slog"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miniapi/miniapi/storage"
)

// dispatcher fans the cache's events out to the registered watchers. It
// runs on its own goroutine so that waiting for a slow watcher delays
// delivery, never the reflector or the watch cache's lock.
//
// A watcher is registered while the watch cache's mutex is held, with the
// revision its initial snapshot reflects (startRev). Every event appended
// after the registration reaches the dispatcher after it, so the watcher
// sees it; events already queued when it registered are at or below
// startRev and are skipped for it. That makes snapshot plus stream exact:
// no gap and no duplicate.
type dispatcher struct {
	clock  Clock
	log    *slog.Logger
	budget timeBudget
	// queue carries events from the reflector, in revision order.
	// Bookmark-typed events only advance rev.
	queue *eventQueue

	// mu serializes changes to watchers. The dispatcher reads watchers
	// without it: the slice is copied on write and never modified.
	mu       sync.Mutex
	watchers atomic.Pointer[[]*cacheWatcher]

	terminated atomic.Int64
	m          *cacheMetrics
	// dispatched is rev, published once the event is handed out.
	dispatched atomic.Int64

	// wakeAt is when the dispatcher goroutine next wakes to offer
	// bookmarks, in Unix nanoseconds: math.MaxInt64 while it has no wake
	// planned, and while it is planning one. A watcher whose next
	// bookmark is due before it kicks the goroutine (see bookmarkAt) to
	// plan again.
	wakeAt atomic.Int64
	kick   chan struct{}

	// Owned by the dispatcher goroutine.
	rev     int64           // every event up to rev has been dispatched
	blocked []*cacheWatcher // scratch space for dispatch
}

func newDispatcher(clock Clock, log *slog.Logger, budget time.Duration) *dispatcher {
	d := &dispatcher{
		clock:  clock,
		log:    log,
		budget: timeBudget{clock: clock, max: budget, left: budget, refilled: clock.Now()},
		queue:  newEventQueue(),
		kick:   make(chan struct{}, 1),
	}
	d.watchers.Store(new([]*cacheWatcher))
	d.wakeAt.Store(math.MaxInt64)
	return d
}

// add registers w; the caller holds the watch cache's mutex (see the type
// comment).
func (d *dispatcher) add(w *cacheWatcher) {
	d.mu.Lock()
	defer d.mu.Unlock()
	ws := append(slices.Clip(*d.watchers.Load()), w)
	d.watchers.Store(&ws)
}

// remove unregisters w; a no-op if it is not registered.
func (d *dispatcher) remove(w *cacheWatcher) {
	d.mu.Lock()
	defer d.mu.Unlock()
	old := *d.watchers.Load()
	i := slices.Index(old, w)
	if i < 0 {
		return
	}
	ws := slices.Delete(slices.Clone(old), i, i+1)
	d.watchers.Store(&ws)
}

// count is the number of registered watchers.
func (d *dispatcher) count() int { return len(*d.watchers.Load()) }

// enqueue hands e to the dispatcher goroutine, waiting while its queue is
// full (back-pressure on the reflector) unless ctx is done.
func (d *dispatcher) enqueue(ctx context.Context, e *event) bool {
	return d.queue.put(ctx, e)
}

// run dispatches until ctx is done. It wakes for bookmarks only when one
// is due, not on a fixed tick: a server serves some sixty types, each
// with its dispatcher, and on an idle one those ticks were the most
// frequent cause of the process waking up.
func (d *dispatcher) run(ctx context.Context) {
	tick := d.planBookmarks()
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.queue.ready:
			for _, e := range d.queue.take() {
				if ctx.Err() != nil {
					return
				}
				d.rev = max(d.rev, e.rev)
				if e.typ != storage.Bookmark {
					d.dispatch(ctx, e)
					d.m.eventDispatched()
				}
				d.dispatched.Store(d.rev)
			}
		case <-tick:
			d.offerBookmarks()
			tick = d.planBookmarks()
		case <-d.kick:
			tick = d.planBookmarks()
		}
	}
}

// planBookmarks returns a channel that fires when bookmarks are next to
// be offered: when the earliest is due, but not sooner than bookmarkTick
// from now (a watcher offered one reschedules on its own goroutine, and
// one whose buffer was full is offered it again then); nil when no
// watcher wants one. wakeAt is MaxInt64 while it reads the watchers, so
// that a watcher scheduling meanwhile kicks it to plan again.
func (d *dispatcher) planBookmarks() <-chan time.Time {
	d.wakeAt.Store(math.MaxInt64)
	next := int64(math.MaxInt64)
	for _, w := range *d.watchers.Load() {
		if due := w.nextBookmark.Load(); due != 0 && due < next {
			next = due
		}
	}
	if next == math.MaxInt64 {
		return nil
	}
	now := d.clock.Now()
	wait := max(time.Duration(next-now.UnixNano()), bookmarkTick)
	d.wakeAt.Store(now.Add(wait).UnixNano())
	return d.clock.After(wait)
}

// bookmarkAt tells the dispatcher that a watcher's next bookmark is due
// at due (Unix nanoseconds), waking it if it planned to sleep past that.
// Watchers call it after they store nextBookmark.
func (d *dispatcher) bookmarkAt(due int64) {
	if due < d.wakeAt.Load() {
		select {
		case d.kick <- struct{}{}:
		default:
		}
	}
}

// dispatch offers e to every watcher that may want it without blocking,
// then gives the ones whose buffers are full one shared time budget to make
// room. Watchers still full after that are terminated.
func (d *dispatcher) dispatch(ctx context.Context, e *event) {
	blocked := d.blocked[:0]
	for _, w := range *d.watchers.Load() {
		if e.rev <= w.startRev || !w.filter.hasKey(e.key) {
			continue
		}
		w.offered.Store(e.rev)
		select {
		case w.input <- e:
		default:
			blocked = append(blocked, w)
		}
	}
	if len(blocked) > 0 {
		d.waitForBlocked(ctx, e, blocked)
	}
	clear(blocked)
	d.blocked = blocked[:0]
}

func (d *dispatcher) waitForBlocked(ctx context.Context, e *event, blocked []*cacheWatcher) {
	budget := d.budget.take()
	start := d.clock.Now()
	expired := budget <= 0
	var timeout <-chan time.Time
	if !expired {
		timeout = d.clock.After(budget)
	}
	for _, w := range blocked {
		if !expired {
			select {
			case w.input <- e:
				continue
			case <-w.ctx.Done():
				continue
			case <-ctx.Done():
				return
			case <-timeout:
				expired = true
			}
		}
		// Out of budget: one last look, then terminate.
		select {
		case w.input <- e:
		default:
			d.terminate(w, e.rev)
		}
	}
	d.budget.giveBack(budget - d.clock.Now().Sub(start))
}

// terminate stops a watcher that cannot keep up. Its channel closes without
// an error event, as kube-apiserver does: the client re-watches from the
// last resourceVersion it received and loses nothing.
func (d *dispatcher) terminate(w *cacheWatcher, rev int64) {
	if !w.terminate() {
		return
	}
	d.terminated.Add(1)
	d.m.watcherTerminated()
	d.remove(w)
	d.log.Debug("cacher: terminated a watcher that could not keep up",
		"prefix", w.filter.prefix, "startRevision", w.startRev, "eventRevision", rev)
}

// offerBookmarks sends a bookmark at the dispatched revision to every
// watcher whose next bookmark is due. It never waits: a watcher with a
// full buffer is busy with events and gets the next one.
func (d *dispatcher) offerBookmarks() {
	now := d.clock.Now().UnixNano()
	var bm *event
	for _, w := range *d.watchers.Load() {
		due := w.nextBookmark.Load()
		if due == 0 || due > now {
			continue
		}
		if bm == nil {
			bm = &event{typ: storage.Bookmark, rev: d.rev}
		}
		select {
		case w.input <- bm:
		default:
		}
	}
}

// timeBudget is the dispatcher's allowance for waiting on full watchers:
// at most max at once, refilled at max per second, so a persistently slow
// watcher costs the other watchers at most a tenth of the dispatcher's
// time. Only the dispatcher goroutine uses it.
type timeBudget struct {
	clock    Clock
	max      time.Duration
	left     time.Duration
	refilled time.Time
}

// take returns everything left (after refilling) and leaves nothing.
func (b *timeBudget) take() time.Duration {
	now := b.clock.Now()
	elapsed := now.Sub(b.refilled)
	b.refilled = now
	b.left = min(b.max, b.left+time.Duration(float64(b.max)*elapsed.Seconds()))
	t := b.left
	b.left = 0
	return t
}

// giveBack returns the unused part of what take returned.
func (b *timeBudget) giveBack(unused time.Duration) {
	if unused > 0 {
		b.left = min(b.max, b.left+unused)
	}
}
