package cacher

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/miniapi/miniapi/storage"
)

// cacheWatcher is one client's watch. Its goroutine sends the initial
// events, then moves events from input (filled by the dispatcher) through
// its filter to result. It is the only sender on result and closes it when
// it exits; Stop and terminate only cancel its context. A watch run by
// its consumer (RunWatch) has no result: run, on the consumer's
// goroutine, hands each event to deliver.
type cacheWatcher struct {
	filter filter
	// startRev is the revision the initial events bring the client to;
	// the dispatcher skips events at or below it.
	startRev int64
	input    chan *event
	result   chan storage.Event
	deliver  func(storage.Event) bool

	ctx    context.Context
	cancel context.CancelFunc
	// slow is set when the dispatcher terminated the watcher.
	slow atomic.Bool
	// m counts the initial events sent.
	m *cacheMetrics

	// Initial events, sent before anything from input: current objects
	// (as Added) or history (converted by the filter), and then, if
	// initialEnd, the bookmark that ends them.
	initObjs   []*entry
	initEvents []*event
	initialEnd bool

	// Bookmarks: the dispatcher offers one when nextBookmark (Unix
	// nanoseconds, 0 for never) has passed.
	clock          Clock
	allowBookmarks bool
	interval       time.Duration
	deadline       time.Time // the watch context's deadline, or zero
	nextBookmark   atomic.Int64
	// bookmarkAt, if set, is told each nextBookmark stored (the
	// dispatcher's, which sleeps until the earliest).
	bookmarkAt func(due int64)
	lastRev    int64 // highest revision the client has been told about

	// Delivery, for Delivered. offered is the newest revision the
	// dispatcher has put in input; handed the newest taken from input
	// and passed on (or filtered out); sent the newest put in result;
	// flushed the newest the consumer has written out, -1 while the
	// consumer does not report (then result is as far as we can see).
	offered  atomic.Int64
	handed   atomic.Int64
	sent     atomic.Int64
	flushed  atomic.Int64
	initDone atomic.Bool
}

// ConsumerFlushes says the consumer will report what it writes out.
func (w *cacheWatcher) ConsumerFlushes() { w.flushed.CompareAndSwap(-1, 0) }

// Flushed records that the consumer has written out every event up to
// rev.
func (w *cacheWatcher) Flushed(rev int64) {
	for {
		cur := w.flushed.Load()
		if rev <= cur || w.flushed.CompareAndSwap(cur, rev) {
			return
		}
	}
}

// delivered reports whether every event up to target meant for this
// watch has been passed on: taken from input, put in result, and, where
// the consumer reports, written out. A watch that has ended has nothing
// more to deliver.
func (w *cacheWatcher) delivered(target int64) bool {
	if w.ctx.Err() != nil {
		return true
	}
	if !w.initDone.Load() {
		return false
	}
	if h := w.handed.Load(); h < target && h < w.offered.Load() {
		return false
	}
	if f := w.flushed.Load(); f >= 0 && f < min(target, w.sent.Load()) {
		return false
	}
	return true
}

// ResultChan returns the channel events arrive on; it is closed when the
// watch ends.
func (w *cacheWatcher) ResultChan() <-chan storage.Event { return w.result }

// Stop ends the watch. It is idempotent and safe to call at any time; the
// result channel closes soon after.
func (w *cacheWatcher) Stop() { w.cancel() }

// terminate stops a watcher the dispatcher gave up on and reports whether
// this call stopped it.
func (w *cacheWatcher) terminate() bool {
	if w.ctx.Err() != nil || !w.slow.CompareAndSwap(false, true) {
		return false
	}
	w.cancel()
	return true
}

// run is the watcher's goroutine. unregister is called when it exits,
// before result is closed.
func (w *cacheWatcher) run(unregister func(*cacheWatcher)) {
	if w.result != nil {
		defer close(w.result)
	}
	defer unregister(w)
	defer w.cancel()

	w.lastRev = w.startRev
	initial := 0
	for _, e := range w.initObjs {
		if w.filter.matches(e.obj.Key, e.attrs) {
			if !w.send(storage.Event{Type: storage.Added, Object: e.obj}) {
				return
			}
			initial++
		}
	}
	w.initObjs = nil
	for _, e := range w.initEvents {
		if ev, ok := w.filter.convert(e); ok {
			if !w.send(ev) {
				return
			}
			initial++
		}
	}
	w.initEvents = nil
	w.m.initialEvents(initial)
	if w.initialEnd {
		if !w.send(storage.Event{Type: storage.Bookmark, Object: &storage.Object{Revision: w.startRev}, InitialEventsEnd: true}) {
			return
		}
	}
	w.scheduleBookmark()
	w.initDone.Store(true)

	for {
		select {
		case <-w.ctx.Done():
			return
		case e := <-w.input:
			if e.typ == storage.Bookmark {
				if !w.maybeBookmark(e.rev) {
					return
				}
				w.handed.Store(max(w.handed.Load(), e.rev))
				continue
			}
			w.lastRev = max(w.lastRev, e.rev)
			if ev, ok := w.filter.convert(e); ok && !w.send(ev) {
				return
			}
			w.handed.Store(max(w.handed.Load(), e.rev))
		}
	}
}

// send delivers ev unless the watch is stopped. It checks for a stop first
// so that a stopped watcher sends nothing more even when the client is also
// ready to receive.
func (w *cacheWatcher) send(ev storage.Event) bool {
	select {
	case <-w.ctx.Done():
		return false
	default:
	}
	if ev.Object != nil {
		// Before the send: the consumer may report it flushed at once.
		w.sent.Store(max(w.sent.Load(), ev.Object.Revision))
	}
	if w.deliver != nil {
		return w.deliver(ev)
	}
	select {
	case w.result <- ev:
		return true
	case <-w.ctx.Done():
		return false
	}
}

// scheduleBookmark sets when the next bookmark is due: after the interval,
// or bookmarkBeforeDeadline before the watch context's deadline if that
// comes first, so a client whose watch times out resumes from a recent
// revision. Once that moment has passed (sent, or already past when the
// watch began) no bookmark is due any more, as kube's cacheWatcher's
// nextBookmarkTime decides: a watch of two seconds or less gets none.
func (w *cacheWatcher) scheduleBookmark() {
	if !w.allowBookmarks {
		return
	}
	now := w.clock.Now()
	next := now.Add(w.interval)
	if !w.deadline.IsZero() {
		if at := w.deadline.Add(-bookmarkBeforeDeadline); at.Before(next) {
			next = at
		}
	}
	if !next.After(now) {
		w.nextBookmark.Store(0)
		return
	}
	w.nextBookmark.Store(next.UnixNano())
	if w.bookmarkAt != nil {
		w.bookmarkAt(next.UnixNano())
	}
}

// maybeBookmark handles a bookmark offered by the dispatcher at rev: all
// events up to rev that concern this watcher are already behind it in
// input, so it may tell the client it is at rev.
func (w *cacheWatcher) maybeBookmark(rev int64) bool {
	now := w.clock.Now()
	due := w.nextBookmark.Load()
	if due == 0 || now.UnixNano() < due {
		return true
	}
	w.lastRev = max(w.lastRev, rev)
	if !w.send(storage.Event{Type: storage.Bookmark, Object: &storage.Object{Revision: w.lastRev}}) {
		return false
	}
	w.scheduleBookmark()
	return true
}

// errWatcher is a watch that failed after it was accepted: it delivers one
// ErrorEvent and is closed.
type errWatcher struct{ ch chan storage.Event }

func newErrWatcher(err error) *errWatcher {
	ch := make(chan storage.Event, 1)
	ch <- storage.Event{Type: storage.ErrorEvent, Err: err}
	close(ch)
	return &errWatcher{ch: ch}
}

// ResultChan returns the channel holding the one ErrorEvent.
func (w *errWatcher) ResultChan() <-chan storage.Event { return w.ch }

// Stop does nothing: the watch has already ended.
func (w *errWatcher) Stop() {}
