package cacher

import (
	"context"
	"fmt"
	"strings"

	"github.com/miniapi/miniapi/storage"
)

// List serves a list from the cache whenever the cache can answer it
// exactly, and from the underlying storage otherwise:
//
//   - resourceVersion "0", or N with match "" or NotOlderThan: from the
//     cache once it has reached N (waiting at most FreshnessTimeout, then
//     failing with TooLargeResourceVersion); at "0" whole, whatever the
//     limit, as kube's cacher answers it;
//   - resourceVersion "" (consistent): the underlying storage's current
//     revision is read, a progress notification requested, and the list
//     served from the cache once it has caught up; if it does not within
//     FreshnessTimeout, or the storage cannot tell its revision, the list
//     goes to the underlying storage;
//   - match Exact N, and continue tokens (pinned to their revision): from
//     the cache when N is still covered by history (the state at N is the
//     current state with the later events undone), otherwise from the
//     underlying storage, which answers or says the revision was compacted.
//
// Pages are in key order and continue tokens have the format
// storage.EncodeContinue defines, so a list may start on one path and
// continue on another.
func (c *Cacher) List(ctx context.Context, prefix string, opts storage.ListOptions) (*storage.List, error) {
	if !c.inPrefix(prefix) || !strings.HasSuffix(prefix, "/") {
		return c.underlying.List(ctx, prefix, opts)
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.Continue != "" {
		from, rev, err := storage.DecodeContinue(opts.Continue, prefix)
		if err != nil {
			return nil, err
		}
		if rev == 0 {
			// A token for the latest revision: the underlying
			// storage reads it and pins the pages after.
			return c.underlying.List(ctx, prefix, opts)
		}
		if l := c.listAt(ctx, prefix, from, rev, opts); l != nil {
			return l, nil
		}
		if err := c.compactedBefore(prefix, rev, true); err != nil {
			return nil, err
		}
		return c.underlying.List(ctx, prefix, opts)
	}
	rv, _ := storage.ParseResourceVersion(opts.ResourceVersion) // valid: Validate parsed it
	switch {
	case opts.Exact():
		if l := c.listAt(ctx, prefix, prefix, rv, opts); l != nil {
			return l, nil
		}
		if err := c.compactedBefore(prefix, rv, false); err != nil {
			return nil, err
		}
		return c.underlying.List(ctx, prefix, opts)
	case opts.ResourceVersion == "":
		rev, err := c.CurrentRevision(ctx)
		if err != nil {
			return c.readThrough(ctx, prefix, opts)
		}
		if err := c.waitFresh(ctx, rev, prefix); err != nil {
			if ctx.Err() != nil {
				c.m.consistentRead(false, ctx.Err())
				return nil, ctx.Err()
			}
			c.log.Debug("cacher: cache not fresh enough for a consistent list; reading through",
				"prefix", prefix, "revision", rev)
			return c.readThrough(ctx, prefix, opts)
		}
		c.m.consistentRead(false, nil)
	default:
		if err := c.waitFresh(ctx, rv, prefix); err != nil {
			if rv == 0 && storage.IsTooLargeResourceVersion(err) {
				// Not yet filled: the underlying storage can answer.
				return c.underlying.List(ctx, prefix, opts)
			}
			return nil, err
		}
		if opts.ResourceVersion == "0" {
			// kube's cacher ignores the limit of a list at "0"
			// (computeListLimit): the whole list, in one answer.
			opts.Limit = 0
		}
	}
	return c.wc.list(prefix, opts), nil
}

// compactedBefore refuses a read pinned to rev when rev is older than
// the compaction the cacher was told of, as etcd refuses it: the
// underlying storage may still hold that revision when the compaction
// was a logical cluster's own (see server.Server.Compact), and the read
// must not see past it.
func (c *Cacher) compactedBefore(prefix string, rev int64, continuing bool) error {
	compacted := c.wc.compactedRev()
	if rev == 0 || rev >= compacted {
		return nil
	}
	if continuing {
		return storage.NewError(storage.CodeCompacted, prefix, compacted,
			fmt.Errorf("the provided continue parameter is too old to display a consistent list result, start a new list: revision %d is before the compaction at %d", rev, compacted))
	}
	return storage.NewError(storage.CodeCompacted, prefix, compacted,
		fmt.Errorf("required revision %d has been compacted (at %d)", rev, compacted))
}

// readThrough serves a consistent list the cache could not from the
// underlying storage.
func (c *Cacher) readThrough(ctx context.Context, prefix string, opts storage.ListOptions) (*storage.List, error) {
	l, err := c.underlying.List(ctx, prefix, opts)
	c.m.consistentRead(true, err)
	return l, err
}

// listAt returns the page of the list at exactly rev starting at key from,
// or nil when the cache cannot reconstruct that revision.
func (c *Cacher) listAt(ctx context.Context, prefix, from string, rev int64, opts storage.ListOptions) *storage.List {
	if c.wc.revision() < rev && c.waitFresh(ctx, rev, prefix) != nil {
		return nil
	}
	return c.wc.listAt(prefix, from, rev, opts)
}
