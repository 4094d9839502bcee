package cacher

import (
	"context"
	"testing"
	"time"
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
