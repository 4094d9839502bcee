package cacher

import (
	"context"
	"testing"
	"time"

	"github.com/miniapi/miniapi/storage"
)

// TestEventQueue: the queue takes maxQueued events without waiting, then
// makes the producer wait until the consumer takes them (or its context
// ends), and hands them out in order.
func TestEventQueue(t *testing.T) {
	q := newEventQueue()
	ctx := context.Background()
	for i := range maxQueued {
		if !q.put(ctx, &event{rev: int64(i + 1)}) {
			t.Fatal("put refused below the bound")
		}
	}
	select {
	case <-q.ready:
	default:
		t.Fatal("no wake-up after put")
	}

	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if q.put(short, &event{rev: -1}) {
		t.Fatal("put into a full queue returned before its context ended")
	}

	done := make(chan bool)
	go func() { done <- q.put(ctx, &event{rev: maxQueued + 1}) }()
	select {
	case <-done:
		t.Fatal("put into a full queue did not wait")
	case <-time.After(20 * time.Millisecond):
	}
	got := q.take()
	if !<-done {
		t.Fatal("the waiting put failed after take")
	}
	got = append(got, q.take()...)
	if len(got) != maxQueued+1 {
		t.Fatalf("took %d events, want %d", len(got), maxQueued+1)
	}
	for i, e := range got {
		if e.rev != int64(i+1) {
			t.Fatalf("event %d has revision %d: out of order", i, e.rev)
		}
	}
	if rest := q.take(); len(rest) != 0 {
		t.Fatalf("%d events left after taking all", len(rest))
	}
}

// TestWatcherBufferFollowsHistory: unless configured, a watcher's result
// channel holds about a second of the type's events, as kube-apiserver
// sizes it (history capacity / 75 s, between 10 and 100), so the many
// watchers of types nobody writes hold little; what the dispatcher may
// queue for it stays DefaultWatcherBuffer.
func TestWatcherBufferFollowsHistory(t *testing.T) {
	for _, tc := range []struct {
		history, buffer, queued, passed int
	}{
		{history: 0, queued: DefaultWatcherBuffer, passed: minWatcherBuffer}, // dynamic: starts at 100 events
		{history: 1500, queued: DefaultWatcherBuffer, passed: 20},
		{history: 100 * 1024, queued: DefaultWatcherBuffer, passed: DefaultWatcherBuffer},
		{history: 100 * 1024, buffer: 7, queued: 7, passed: 7},
	} {
		h := newHarness(t, Config{HistorySize: tc.history, WatcherBuffer: tc.buffer})
		w := h.watch(testPrefix, storage.WatchOptions{ResourceVersion: "0"})
		cw, ok := w.(*cacheWatcher)
		if !ok {
			t.Fatalf("Watch returned %T", w)
		}
		if cap(cw.input) != tc.queued || cap(cw.result) != tc.passed {
			t.Errorf("history %d, WatcherBuffer %d: input of %d events, result of %d, want %d and %d",
				tc.history, tc.buffer, cap(cw.input), cap(cw.result), tc.queued, tc.passed)
		}
	}
}
