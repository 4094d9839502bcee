package cluster

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// loop is a work queue of object keys ("namespace/name") served by its
// own workers, as kube's controllers are built, with the bookkeeping
// waitCaughtUp needs.
type loop struct {
	name  string
	log   *slog.Logger
	queue workqueue.TypedRateLimitingInterface[string]
	// sync does the work for one key; an error retries it with back-off.
	sync func(ctx context.Context, key string) error
	// busy counts the keys being synced.
	busy atomic.Int32
}

func newLoop(name string, log *slog.Logger, sync func(context.Context, string) error) *loop {
	return &loop{
		name: name, log: log, sync: sync,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: name}),
	}
}

// add queues the key of obj (a tombstone's too).
func (l *loop) add(obj any) {
	if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
		l.queue.Add(key)
	}
}

// run serves the queue with workers until ctx ends, then shuts the
// queue down (its delaying goroutine with it) and waits for them.
func (l *loop) run(ctx context.Context, workers int) {
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for l.next(ctx) {
			}
		})
	}
	<-ctx.Done()
	l.queue.ShutDown()
	wg.Wait()
}

func (l *loop) next(ctx context.Context) bool {
	key, quit := l.queue.Get()
	if quit {
		return false
	}
	l.busy.Add(1)
	defer l.busy.Add(-1)
	defer l.queue.Done(key)
	if err := l.sync(ctx, key); err != nil {
		if ctx.Err() == nil {
			l.log.Debug("cluster: retrying", "loop", l.name, "key", key, "err", err)
			l.queue.AddRateLimited(key)
		}
		return true
	}
	l.queue.Forget(key)
	return true
}

// idle reports whether no key is queued (delayed ones are not counted:
// they are work for later) or being synced.
func (l *loop) idle() bool { return l.queue.Len() == 0 && l.busy.Load() == 0 }

// pollInterval is how often waitCaughtUp looks again.
const pollInterval = 10 * time.Millisecond

// waitCaughtUp returns once the informer's store holds exactly what a
// consistent list of the server returns (every object at the same
// resourceVersion) and every loop is idle, twice in a row with nothing
// changed between: everything the loops could do with the server's
// current state is done. Work delayed on purpose (a pod's readiness
// delay, a grace period) is not waited for.
func waitCaughtUp(ctx context.Context, list func(context.Context) (map[string]string, error), store cache.Store, loops ...*loop) error {
	var last map[string]string
	for {
		cur, err := list(ctx)
		if err != nil {
			return err
		}
		if storeMatches(store, cur) && allIdle(loops) {
			if last != nil && maps.Equal(last, cur) {
				return nil
			}
			last = cur
		} else {
			last = nil
		}
		select {
		case <-ctx.Done():
			return errors.Join(errors.New("cluster: not caught up"), ctx.Err())
		case <-time.After(pollInterval):
		}
	}
}

func allIdle(loops []*loop) bool {
	for _, l := range loops {
		if !l.idle() {
			return false
		}
	}
	return true
}

// storeMatches reports whether store holds the objects of want (key →
// resourceVersion) and no others.
func storeMatches(store cache.Store, want map[string]string) bool {
	objs := store.List()
	if len(objs) != len(want) {
		return false
	}
	for _, obj := range objs {
		m, err := meta.Accessor(obj)
		if err != nil {
			return false
		}
		key, _ := cache.MetaNamespaceKeyFunc(obj)
		if want[key] != m.GetResourceVersion() {
			return false
		}
	}
	return true
}

// rvNewer reports whether resourceVersion a is newer than b. Here they
// are etcd revisions, so they compare as numbers; an unreadable one is
// never newer.
func rvNewer(a, b string) bool {
	x, err1 := strconv.ParseInt(a, 10, 64)
	y, err2 := strconv.ParseInt(b, 10, 64)
	return err1 == nil && err2 == nil && x > y
}
