package cacher

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miniapi/miniapi/storage"
)

// Cacher is a storage.Interface that serves one resource type's reads and
// watches from memory and passes writes to the storage it wraps. See the
// package documentation for its lifecycle.
type Cacher struct {
	underlying storage.Interface
	cfg        Config
	log        *slog.Logger
	wc         *watchCache
	d          *dispatcher
	m          *cacheMetrics

	ctx    context.Context // ends when Close is called
	cancel context.CancelFunc

	// lifeMu orders Watch's starting of watcher goroutines before Close's
	// wait for them. Lock order: lifeMu, then the watch cache's mu, then
	// the dispatcher's mu.
	lifeMu sync.RWMutex
	closed bool
	wg     sync.WaitGroup

	relists atomic.Int64
}

var (
	_ storage.Interface      = (*Cacher)(nil)
	_ storage.RevisionReader = (*Cacher)(nil)
	_ storage.WatchRunner    = (*Cacher)(nil)
)

// New returns a Cacher over underlying for the resource type whose keys
// start with cfg.Prefix and starts its reflector and dispatcher. The cache
// fills in the background; Ready reports when it has. Call Close to stop.
func New(underlying storage.Interface, cfg Config) (*Cacher, error) {
	if underlying == nil {
		return nil, errors.New("cacher: nil underlying storage")
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Cacher{
		underlying: underlying,
		cfg:        cfg,
		log:        cfg.Logger,
		wc:         newWatchCache(cfg.HistorySize, cfg.Clock),
		d:          newDispatcher(cfg.Clock, cfg.Logger, cfg.DispatchBudget),
		m:          newCacheMetrics(cfg.Resource),
		ctx:        ctx,
		cancel:     cancel,
	}
	c.wc.m, c.d.m = c.m, c.m
	c.m.initialCapacity(c.wc.history.Cap())
	c.wg.Go(func() { c.reflect(ctx) })
	c.wg.Go(func() { c.d.run(ctx) })
	return c, nil
}

// Close stops the reflector, the dispatcher and every watcher, and returns
// once all their goroutines have exited. Open watches see their channels
// close. Close is idempotent; the underlying storage is not closed.
func (c *Cacher) Close() error {
	c.lifeMu.Lock()
	c.closed = true
	c.lifeMu.Unlock()
	c.cancel()
	c.wg.Wait()
	c.m.close()
	return nil
}

// Ready blocks until the cache holds its first complete list, or ctx ends.
func (c *Cacher) Ready(ctx context.Context) error {
	for {
		rev, changed := c.wc.current()
		if rev > 0 {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		case <-c.ctx.Done():
			return errClosed
		}
	}
}

// Stats is a snapshot of a Cacher's state, for metrics and tests.
type Stats struct {
	// Revision is the etcd revision the cache reflects.
	Revision int64
	// Objects is the number of cached objects, and ObjectBytes their
	// total encoded size.
	Objects     int
	ObjectBytes int64
	// History is the number of events in the history ring and
	// HistoryCapacity its current size.
	History, HistoryCapacity int
	// Watchers is the number of running watches.
	Watchers int
	// TerminatedWatchers counts watches closed because they could not
	// keep up.
	TerminatedWatchers int64
	// Relists counts relists after the underlying watch was compacted.
	Relists int64
}

// Stats returns the cacher's current counters.
func (c *Cacher) Stats() Stats {
	s := c.wc.stats()
	s.Watchers = c.d.count()
	s.TerminatedWatchers = c.d.terminated.Load()
	s.Relists = c.relists.Load()
	return s
}

// CurrentRevision returns the underlying storage's current revision, the
// one a consistent read must reach, if it can tell
// (storage.RevisionReader); otherwise errNoRevision.
func (c *Cacher) CurrentRevision(ctx context.Context) (int64, error) {
	rr, ok := c.underlying.(storage.RevisionReader)
	if !ok {
		return 0, errNoRevision
	}
	return rr.CurrentRevision(ctx)
}

// Compacted tells the cacher that the underlying storage has compacted
// its history: revisions before rev are gone there. From then on the
// cacher answers Exact lists and continue tokens at those revisions as
// the storage would (Compacted errors, 410), even while its own history
// still covers them; watches it goes on serving from its history, as
// kube-apiserver's cache does. Whatever compacts etcd calls it; the
// cacher cannot learn of a compaction from etcd's watch.
func (c *Cacher) Compacted(rev int64) {
	c.wc.setCompacted(rev, false)
}

// Expire is Compacted, and refuses watches from before rev too (410), as
// if the cache's history had rolled past it: a compaction made on demand
// for tests of what clients do with 410 (server.Server.Compact).
func (c *Cacher) Expire(rev int64) {
	c.wc.setCompacted(rev, true)
}

// Create passes through to the underlying storage; the cache learns of the
// new object from the underlying watch.
func (c *Cacher) Create(ctx context.Context, key string, data []byte) (*storage.Object, error) {
	return c.underlying.Create(ctx, key, data)
}

// GuaranteedUpdate passes through to the underlying storage.
func (c *Cacher) GuaranteedUpdate(ctx context.Context, key string, opts storage.UpdateOptions, tryUpdate storage.UpdateFunc) (*storage.Object, error) {
	return c.underlying.GuaranteedUpdate(ctx, key, opts, tryUpdate)
}

// Delete passes through to the underlying storage.
func (c *Cacher) Delete(ctx context.Context, key string, opts storage.DeleteOptions) (*storage.Object, error) {
	return c.underlying.Delete(ctx, key, opts)
}

// inPrefix reports whether key (or prefix) belongs to the cached type.
func (c *Cacher) inPrefix(key string) bool {
	return strings.HasPrefix(key, c.cfg.Prefix)
}

// Get serves resourceVersion "" from the underlying storage (a consistent
// read of one key is cheap there) and "0" or N from the cache, after
// waiting, bounded, for the cache to reach N.
func (c *Cacher) Get(ctx context.Context, key string, opts storage.GetOptions) (*storage.Object, error) {
	if opts.ResourceVersion == "" || !c.inPrefix(key) {
		return c.underlying.Get(ctx, key, opts)
	}
	rv, err := storage.ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return nil, err
	}
	if err := c.waitFresh(ctx, rv, key); err != nil {
		if rv == 0 && storage.IsTooLargeResourceVersion(err) {
			// Not yet filled: the underlying storage can answer.
			return c.underlying.Get(ctx, key, opts)
		}
		return nil, err
	}
	e, rev := c.wc.get(key)
	if e == nil {
		return nil, storage.NewError(storage.CodeNotFound, key, rev, nil)
	}
	return e.obj, nil
}

// Delivered reports whether every open watch has been passed every
// event up to rev it asked for (see storage.Deliverer): the dispatcher
// has handed them out, and each watcher has passed them on to its
// consumer, and, where the consumer reports, the consumer has written
// them out.
func (c *Cacher) Delivered(rev int64) bool {
	if c.d.dispatched.Load() < rev {
		return false
	}
	for _, w := range *c.d.watchers.Load() {
		if !w.delivered(rev) {
			return false
		}
	}
	return true
}

// Watch streams changes from the cache; see the package documentation for
// the resourceVersion rules. prefix is the type's prefix, a namespace's,
// or one object's key.
func (c *Cacher) Watch(ctx context.Context, prefix string, opts storage.WatchOptions) (storage.Watcher, error) {
	if !c.inPrefix(prefix) {
		return c.underlying.Watch(ctx, prefix, opts)
	}
	w, _, tooOld, err := c.open(ctx, prefix, opts, nil)
	switch {
	case err != nil:
		return nil, err
	case tooOld != nil:
		return newErrWatcher(tooOld), nil
	}
	return w, nil
}

// RunWatch implements storage.WatchRunner: Watch's watch, with the
// watcher's work (initial events, filtering, bookmarks) done on the
// caller's goroutine, handing each event to fn, instead of on a goroutine
// of its own. Close ends it as it ends every watch.
func (c *Cacher) RunWatch(ctx context.Context, prefix string, opts storage.WatchOptions, fn func(storage.Event) bool) error {
	if !c.inPrefix(prefix) {
		return storage.RunWatch(ctx, c.underlying, prefix, opts, fn)
	}
	_, run, tooOld, err := c.open(ctx, prefix, opts, fn)
	switch {
	case err != nil:
		return err
	case tooOld != nil:
		fn(storage.Event{Type: storage.ErrorEvent, Err: tooOld})
		return nil
	}
	run()
	return nil
}

// open registers a new watcher of prefix. Without deliver, its goroutine
// is started and it sends on its result channel; with deliver, run is
// what the caller runs to drive it (counted by Close as a goroutine of
// the Cacher's). tooOld is the Compacted error of a watch from a
// revision the history no longer holds.
func (c *Cacher) open(ctx context.Context, prefix string, opts storage.WatchOptions, deliver func(storage.Event) bool) (w *cacheWatcher, run func(), tooOld, err error) {
	rv, err := storage.ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return nil, nil, nil, err
	}
	initial := opts.SendsInitialEvents()

	wait := rv
	if rv > 0 && !initial {
		// As kube-apiserver 1.37's cacher: a watch from a revision the
		// cache has not reached is not held up, nor refused; the events
		// after it follow as they come. It waits only for a cache that
		// has not started.
		wait = 1
	}
	if opts.ResourceVersion == "" {
		// A consistent start: reach etcd's current revision first.
		// Without a revision to reach, the cache's state is the best
		// available.
		if wait, err = c.CurrentRevision(ctx); err != nil && !errors.Is(err, errNoRevision) {
			return nil, nil, nil, err
		}
	}
	if err := c.waitFresh(ctx, wait, prefix); err != nil {
		return nil, nil, nil, err
	}

	c.lifeMu.RLock()
	defer c.lifeMu.RUnlock()
	if c.closed {
		return nil, nil, nil, errClosed
	}
	wctx, cancel := context.WithCancel(c.ctx)
	// The caller's context ending also ends the watch.
	stopAfter := context.AfterFunc(ctx, cancel)
	w = &cacheWatcher{
		filter:         newFilter(prefix, opts.Predicate),
		m:              c.m,
		input:          make(chan *event, c.cfg.WatcherBuffer),
		deliver:        deliver,
		ctx:            wctx,
		cancel:         cancel,
		initialEnd:     opts.SendsInitialEventsEnd(),
		clock:          c.cfg.Clock,
		allowBookmarks: opts.AllowBookmarks,
		interval:       c.cfg.BookmarkInterval,
		bookmarkAt:     c.d.bookmarkAt,
	}
	if deliver == nil {
		w.result = make(chan storage.Event, c.cfg.WatcherBuffer)
	}
	w.flushed.Store(-1)
	if dl, ok := ctx.Deadline(); ok {
		w.deadline = dl
	}

	if oldest, ok := c.wc.register(w, prefix, initial, rv, c.d.add); !ok {
		stopAfter()
		cancel()
		return nil, nil, storage.NewError(storage.CodeCompacted, prefix, oldest,
			fmt.Errorf("too old resource version: %d (%d)", rv, oldest)), nil
	}

	if deliver == nil {
		c.wg.Go(func() {
			defer stopAfter()
			w.run(c.d.remove)
		})
		return w, nil, nil, nil
	}
	// Added under lifeMu, as wg.Go is, so that Close waits for it.
	c.wg.Add(1)
	return w, func() {
		defer c.wg.Done()
		defer stopAfter()
		w.run(c.d.remove)
	}, nil, nil
}

// waitFresh waits, bounded by FreshnessTimeout, until the cache has been
// filled and reflects rev. Meanwhile it asks the underlying storage (if it
// can) for progress notifications, so that a revision reached by writes to
// other types is reached by this idle cache too.
func (c *Cacher) waitFresh(ctx context.Context, rev int64, key string) error {
	var poke func()
	if pr, ok := c.underlying.(storage.ProgressRequester); ok && rev > 0 {
		poke = func() {
			if err := pr.RequestProgress(ctx); err != nil && ctx.Err() == nil {
				c.log.Debug("cacher: progress request failed", "err", err)
			}
		}
	}
	start := time.Now()
	err := c.wc.waitUntil(ctx, rev, c.cfg.FreshnessTimeout, key, poke)
	if rev > 0 {
		c.m.waited(time.Since(start))
	}
	return err
}

var errNoRevision = errors.New("cacher: the underlying storage cannot report its revision")
