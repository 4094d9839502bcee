package server

import (
	"testing"
	"time"
)

// TestQueueWatchStale checks how WaitForControllers reads work queues'
// process-wide metrics: unfinished work counts until it has shown the
// same for staleQueue (a stopped server's leftovers), and counts again
// as soon as it changes.
func TestQueueWatchStale(t *testing.T) {
	q := &queueWatch{last: map[string]queueState{}, since: map[string]time.Time{}}
	t0 := time.Unix(1000, 0)
	busy := map[string]queueState{"deployment": {depth: 1}}
	if q.idle(busy, t0) {
		t.Fatal("a queue with a key waiting is idle")
	}
	if q.idle(busy, t0.Add(staleQueue/2)) {
		t.Fatal("unchanged for less than staleQueue, yet idle")
	}
	if !q.idle(busy, t0.Add(staleQueue)) {
		t.Fatal("unchanged for staleQueue, yet not taken for left behind")
	}
	moved := map[string]queueState{"deployment": {depth: 1, unfinished: 1}}
	if q.idle(moved, t0.Add(staleQueue+time.Millisecond)) {
		t.Fatal("a queue whose work changed is idle")
	}
	if !q.idle(map[string]queueState{"deployment": {}}, t0.Add(staleQueue+2*time.Millisecond)) {
		t.Fatal("an empty queue is not idle")
	}
}
