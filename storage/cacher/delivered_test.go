package cacher

import (
	"context"
	"testing"
	"time"

	"github.com/miniapi/miniapi/storage"
)

// TestDelivered checks what Delivered knows of each watch: for one whose
// consumer does not report flushes, an event counts once it is in the
// result channel; for one whose consumer does, once the consumer says it
// has written it out; a watch of another prefix does not hold it up.
func TestDelivered(t *testing.T) {
	h := newHarness(t, Config{})
	plain := h.watch(testPrefix+"ns/", storage.WatchOptions{ResourceVersion: "0"})
	reporting := h.watch(testPrefix+"ns/", storage.WatchOptions{ResourceVersion: "0"})
	other := h.watch(testPrefix+"elsewhere/", storage.WatchOptions{ResourceVersion: "0"})
	defer plain.Stop()
	defer reporting.Stop()
	defer other.Stop()
	fr, ok := reporting.(storage.FlushReporter)
	if !ok {
		t.Fatal("a cache watcher is not a storage.FlushReporter")
	}
	fr.ConsumerFlushes()

	var last *storage.Object
	for _, name := range []string{"a", "b", "c"} {
		last = h.create("ns", name, nil)
	}
	// The reporting consumer has written nothing out: not delivered,
	// however long the events wait in its channel.
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	for !h.c.d.allOffered(last.Revision) {
		sleepOrFail(t, ctx)
	}
	if h.c.Delivered(last.Revision) {
		t.Fatal("Delivered before the reporting consumer wrote anything out")
	}

	// It reads and writes out two of three: still not delivered.
	next(t, reporting)
	second := next(t, reporting)
	fr.Flushed(second.Object.Revision)
	if h.c.Delivered(last.Revision) {
		t.Fatal("Delivered with one event not written out")
	}
	third := next(t, reporting)
	fr.Flushed(third.Object.Revision)
	for !h.c.Delivered(last.Revision) {
		sleepOrFail(t, ctx)
	}
	// The plain watch's events were delivered once in its channel: all
	// three are there now, without waiting.
	for i := range 3 {
		select {
		case ev := <-plain.ResultChan():
			if ev.Type != storage.Added {
				t.Fatalf("plain watch event %d: %v", i, ev.Type)
			}
		default:
			t.Fatalf("Delivered, yet the plain watch holds only %d of 3 events", i)
		}
	}
}

// allOffered reports whether the dispatcher has handed out every event
// up to rev.
func (d *dispatcher) allOffered(rev int64) bool { return d.dispatched.Load() >= rev }

func sleepOrFail(t *testing.T, ctx context.Context) {
	t.Helper()
	select {
	case <-ctx.Done():
		t.Fatal("timed out")
	case <-time.After(5 * time.Millisecond):
	}
}
