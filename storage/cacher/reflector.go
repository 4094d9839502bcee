package cacher

import (
	"context"
	"errors"
	"time"

	"github.com/miniapi/miniapi/storage"
)

const (
	// listPageSize keeps each page of the reflector's list bounded.
	listPageSize = 5000
	// Backoff between failed attempts to list or watch the underlying
	// storage.
	minBackoff = 50 * time.Millisecond
	maxBackoff = 5 * time.Second
)

// reflect is the reflector's goroutine: it lists the prefix into the watch
// cache, then follows the underlying watch from the list's revision,
// re-watching from the last revision it applied when the watch ends and
// relisting only when that revision has been compacted away. It returns
// when ctx is done.
func (c *Cacher) reflect(ctx context.Context) {
	backoff := minBackoff
	needList := true
	for ctx.Err() == nil {
		if needList {
			if err := c.relist(ctx); err != nil {
				if ctx.Err() != nil {
					return
				}
				c.log.Warn("cacher: list failed", "prefix", c.cfg.Prefix, "err", err)
				if !c.sleep(ctx, &backoff) {
					return
				}
				continue
			}
			needList = false
		}
		compacted, progressed := c.watchOnce(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case compacted:
			c.relists.Add(1)
			needList = true
			backoff = minBackoff
		case progressed:
			backoff = minBackoff
		default:
			if !c.sleep(ctx, &backoff) {
				return
			}
		}
	}
}

// sleep waits for the current backoff, doubling it for next time, and
// reports false if ctx ended first.
func (c *Cacher) sleep(ctx context.Context, backoff *time.Duration) bool {
	select {
	case <-c.cfg.Clock.After(*backoff):
		*backoff = min(2**backoff, maxBackoff)
		return true
	case <-ctx.Done():
		return false
	}
}

// relist reads every object under the prefix at one revision and installs
// it in the watch cache, dispatching the difference to running watchers.
func (c *Cacher) relist(ctx context.Context) (err error) {
	start := time.Now()
	defer func() {
		if ctx.Err() == nil {
			c.m.listed(start, err)
		}
	}()
	var objs []*storage.Object
	opts := storage.ListOptions{Limit: listPageSize}
	var rev int64
	for {
		l, err := c.underlying.List(ctx, c.cfg.Prefix, opts)
		if err != nil {
			return err
		}
		objs = append(objs, l.Items...)
		rev = l.Revision
		if l.Continue == "" {
			break
		}
		opts.Continue = l.Continue
	}
	attrs := make([]storage.Attrs, len(objs))
	for i, o := range objs {
		a, err := c.cfg.Attrs(o.Data)
		if err != nil {
			// An object the type's AttrFunc cannot read still exists; it
			// matches only selectors that need no attributes.
			c.log.Warn("cacher: cannot compute selectable attributes", "key", o.Key, "err", err)
		}
		attrs[i] = a
	}
	for _, e := range c.wc.replace(objs, attrs, rev) {
		if !c.d.enqueue(ctx, e) {
			return ctx.Err()
		}
	}
	c.d.enqueue(ctx, &event{typ: storage.Bookmark, rev: c.wc.revision()})
	c.recordState()
	c.log.Debug("cacher: listed", "prefix", c.cfg.Prefix, "objects", len(objs), "revision", rev)
	return nil
}

// watchOnce follows one underlying watch from the cache's revision until
// it ends. compacted says a relist is needed; progressed says the watch
// delivered something, so a retry need not back off. The watch runs on
// this goroutine where the backend can run it (storage.WatchRunner).
func (c *Cacher) watchOnce(ctx context.Context) (compacted, progressed bool) {
	from := c.wc.revision()
	opts := storage.WatchOptions{ResourceVersion: storage.FormatResourceVersion(from), ProgressNotify: true}
	f := &follower{c: c, ctx: ctx}
	if err := storage.RunWatch(ctx, c.underlying, c.cfg.Prefix, opts, f.handle); err != nil {
		if storage.IsCompacted(err) {
			return true, false
		}
		if ctx.Err() == nil {
			c.log.Warn("cacher: watch failed", "prefix", c.cfg.Prefix, "revision", from, "err", err)
		}
		return false, false
	}
	return f.compacted, f.progressed
}

// follower applies one underlying watch's events to the cache and hands
// them to the dispatcher.
type follower struct {
	c   *Cacher
	ctx context.Context
	// run collects the events of one revision until its last arrives;
	// a watch that ends in the middle of one leaves it unapplied, and
	// the next watch, from the cache's revision, brings it whole.
	run      []storage.Event
	runAttrs []storage.Attrs
	// compacted says the watch ended because its revision is gone;
	// progressed that it delivered something.
	compacted, progressed bool
}

// handle applies ev; false when the watch is over.
func (f *follower) handle(ev storage.Event) bool {
	c := f.c
	switch ev.Type {
	case storage.ErrorEvent:
		if storage.IsCompacted(ev.Err) {
			f.compacted = true
			return false
		}
		c.log.Warn("cacher: watch error", "prefix", c.cfg.Prefix, "err", ev.Err)
		return false
	case storage.Bookmark:
		if ev.Object == nil {
			return true
		}
		c.wc.progress(ev.Object.Revision)
		c.m.revision(ev.Object.Revision)
		if !c.d.enqueue(f.ctx, &event{typ: storage.Bookmark, rev: ev.Object.Revision}) {
			return false
		}
	case storage.Added, storage.Modified, storage.Deleted:
		if ev.Object == nil {
			return true
		}
		var attrs storage.Attrs
		if ev.Type != storage.Deleted {
			a, err := c.cfg.Attrs(ev.Object.Data)
			if err != nil {
				c.log.Warn("cacher: cannot compute selectable attributes", "key", ev.Object.Key, "err", err)
			}
			attrs = a
		}
		c.m.eventReceived()
		f.run, f.runAttrs = append(f.run, ev), append(f.runAttrs, attrs)
		if ev.MoreAtRevision {
			return true
		}
		events := c.wc.applyRun(f.run, f.runAttrs)
		clear(f.run)
		clear(f.runAttrs)
		f.run, f.runAttrs = f.run[:0], f.runAttrs[:0]
		if len(events) > 0 {
			c.recordState()
		}
		for _, e := range events {
			if !c.d.enqueue(f.ctx, e) {
				return false
			}
		}
	}
	f.progressed = true
	return true
}

// recordState records the cache's revision and contents in its metrics.
func (c *Cacher) recordState() {
	if c.m == nil {
		return
	}
	rev, n, bytes := c.wc.size()
	c.m.revision(rev)
	c.m.objects(n, bytes)
}

// errClosed is returned by calls on a closed Cacher.
var errClosed = errors.New("cacher: closed")
