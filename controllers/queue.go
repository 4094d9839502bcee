package controllers

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/miniapi/miniapi/api"
)

// queue holds keys waiting to be worked on, each at most once: adding a
// key that is already waiting does nothing. Keys may wait for a time
// (addAfter, retry) before they are handed out. It is safe for concurrent
// use; the controllers here run one worker per queue, so a key is never
// worked on twice at once.
type queue[K comparable] struct {
	// base and max bound retry's exponential delays.
	base, max time.Duration

	// mu guards the fields below.
	mu     sync.Mutex
	ready  []K
	queued map[K]bool      // keys in ready
	later  map[K]time.Time // keys waiting until a time, not in ready
	fails  map[K]int       // retries since the key last succeeded
	// working counts keys handed out by get and not yet given back by
	// done: with ready empty, the queue is idle.
	working int
	// kick wakes a waiting get (1-buffered, coalescing): a key became
	// ready or an earlier due time appeared.
	kick chan struct{}
}

func newQueue[K comparable](base, max time.Duration) *queue[K] {
	return &queue[K]{
		base: base, max: max,
		queued: map[K]bool{}, later: map[K]time.Time{}, fails: map[K]int{},
		kick: make(chan struct{}, 1),
	}
}

// add makes k ready now.
func (q *queue[K]) add(k K) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.addLocked(k)
}

func (q *queue[K]) addLocked(k K) {
	delete(q.later, k)
	if q.queued[k] {
		return
	}
	q.queued[k] = true
	q.ready = append(q.ready, k)
	q.wake()
}

// addAfter makes k ready after d, unless it is ready or due sooner.
func (q *queue[K]) addAfter(k K, d time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.queued[k] {
		return
	}
	at := time.Now().Add(d)
	if due, ok := q.later[k]; ok && !at.Before(due) {
		return
	}
	q.later[k] = at
	q.wake()
}

// retry makes k ready again after a delay that doubles with each retry
// since the key last succeeded (forget), from base up to max.
func (q *queue[K]) retry(k K) {
	q.mu.Lock()
	n := q.fails[k]
	q.fails[k] = n + 1
	q.mu.Unlock()
	d := q.base
	for ; n > 0 && d < q.max; n-- {
		d *= 2
	}
	q.addAfter(k, min(d, q.max))
}

// forget resets k's retry delay.
func (q *queue[K]) forget(k K) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.fails, k)
}

// get waits for a ready key and returns it; ok is false once ctx ends.
func (q *queue[K]) get(ctx context.Context) (k K, ok bool) {
	for {
		q.mu.Lock()
		now := time.Now()
		var next time.Time
		for key, due := range q.later {
			if !due.After(now) {
				q.addLocked(key)
			} else if next.IsZero() || due.Before(next) {
				next = due
			}
		}
		if len(q.ready) > 0 {
			k = q.ready[0]
			var zero K
			q.ready[0] = zero
			q.ready = q.ready[1:]
			delete(q.queued, k)
			q.working++
			q.mu.Unlock()
			return k, true
		}
		q.mu.Unlock()

		var timer *time.Timer
		var due <-chan time.Time
		if !next.IsZero() {
			timer = time.NewTimer(time.Until(next))
			due = timer.C
		}
		select {
		case <-ctx.Done():
		case <-q.kick:
		case <-due:
		}
		if timer != nil {
			timer.Stop()
		}
		if ctx.Err() != nil {
			return k, false
		}
	}
}

// done says the worker has finished with a key get handed out (after
// any retry, forget or addAfter for it).
func (q *queue[K]) done() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.working--
}

// idle reports whether no key is ready or being worked on. Keys waiting
// for a time (a retry's delay) are work for later and do not count.
func (q *queue[K]) idle() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.ready) == 0 && q.working == 0
}

// wake nudges a waiting get without blocking.
func (q *queue[K]) wake() {
	select {
	case q.kick <- struct{}{}:
	default:
	}
}

// logSyncError logs a failed sync that will be retried. A conflict is
// another writer winning a race: expected, and the retry sees its result,
// so it is logged at debug level; anything else is a warning.
func logSyncError(ctx context.Context, log *slog.Logger, msg, keyName string, key any, err error) {
	level := slog.LevelWarn
	if api.IsConflict(err) {
		level = slog.LevelDebug
	}
	log.Log(ctx, level, msg, keyName, key, "err", err)
}
