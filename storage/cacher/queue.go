package cacher

import (
	"context"
	"sync"
)

// maxQueued is how many events the reflector may queue ahead of the
// dispatcher before it waits (back-pressure).
const maxQueued = 1024

// eventQueue is the dispatcher's input: events in revision order, at most
// maxQueued of them. It holds memory only for what is queued, where a
// channel of that capacity would hold 8 KB for every type of every
// cluster whether anything is written or not (most types of a test's
// cluster never are).
type eventQueue struct {
	mu    sync.Mutex
	items []*event
	// ready has a value while items may be non-empty: the consumer's
	// wake-up, never blocking the producer.
	ready chan struct{}
	// space is closed, and replaced, when the consumer takes the items
	// while a producer waits for room (waiting).
	space   chan struct{}
	waiting bool
}

func newEventQueue() *eventQueue {
	return &eventQueue{ready: make(chan struct{}, 1)}
}

// put appends e, waiting while the queue is full unless ctx ends first.
func (q *eventQueue) put(ctx context.Context, e *event) bool {
	for {
		q.mu.Lock()
		if len(q.items) < maxQueued {
			q.items = append(q.items, e)
			q.mu.Unlock()
			select {
			case q.ready <- struct{}{}:
			default: // a wake-up is pending already
			}
			return true
		}
		if !q.waiting {
			q.waiting, q.space = true, make(chan struct{})
		}
		space := q.space
		q.mu.Unlock()
		select {
		case <-space:
		case <-ctx.Done():
			return false
		}
	}
}

// take removes and returns everything queued, oldest first; the consumer
// calls it when ready fires.
func (q *eventQueue) take() []*event {
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.items
	q.items = nil
	if q.waiting {
		q.waiting = false
		close(q.space)
	}
	return items
}
