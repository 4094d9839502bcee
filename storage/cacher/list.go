package cacher

import (
	"context"
	"iter"
	"slices"
	"strings"

	"github.com/miniapi/miniapi/storage"
)

// List serves a list from the cache whenever the cache can answer it
// exactly, and from the underlying storage otherwise:
//
//   - resourceVersion "0", or N with match "" or NotOlderThan: from the
//     cache once it has reached N (waiting at most FreshnessTimeout, then
//     failing with TooLargeResourceVersion);
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
		if l := c.listAt(ctx, prefix, from, rev, opts); l != nil {
			return l, nil
		}
		return c.underlying.List(ctx, prefix, opts)
	}
	rv, _ := storage.ParseResourceVersion(opts.ResourceVersion) // valid: Validate parsed it
	switch {
	case opts.Exact():
		if l := c.listAt(ctx, prefix, prefix, rv, opts); l != nil {
			return l, nil
		}
		return c.underlying.List(ctx, prefix, opts)
	case opts.ResourceVersion == "":
		rev, err := c.CurrentRevision(ctx)
		if err != nil {
			return c.underlying.List(ctx, prefix, opts)
		}
		if err := c.waitFresh(ctx, rev, prefix); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			c.log.Debug("cacher: cache not fresh enough for a consistent list; reading through",
				"prefix", prefix, "revision", rev)
			return c.underlying.List(ctx, prefix, opts)
		}
	default:
		if err := c.waitFresh(ctx, rv, prefix); err != nil {
			if rv == 0 && storage.IsTooLargeResourceVersion(err) {
				// Not yet filled: the underlying storage can answer.
				return c.underlying.List(ctx, prefix, opts)
			}
			return nil, err
		}
	}
	c.wc.mu.RLock()
	defer c.wc.mu.RUnlock()
	return c.wc.listLocked(prefix, prefix, c.wc.rev, opts), nil
}

// listAt returns the page of the list at exactly rev starting at key from,
// or nil when the cache cannot reconstruct that revision.
func (c *Cacher) listAt(ctx context.Context, prefix, from string, rev int64, opts storage.ListOptions) *storage.List {
	if c.wc.revision() < rev && c.waitFresh(ctx, rev, prefix) != nil {
		return nil
	}
	c.wc.mu.RLock()
	defer c.wc.mu.RUnlock()
	if !c.wc.servesAtLocked(rev) {
		return nil
	}
	return c.wc.listLocked(prefix, from, rev, opts)
}

// listLocked builds one page of the objects under prefix at revision rev
// (floor <= rev <= c.rev), starting at key from, filtered by the
// predicate. Items are the cached objects themselves.
func (wc *watchCache) listLocked(prefix, from string, rev int64, opts storage.ListOptions) *storage.List {
	pred := opts.Predicate
	all := pred.Empty()
	limit := int(opts.Limit)
	l := &storage.List{Revision: rev, Items: []*storage.Object{}}
	var last string
	var more bool
	var remaining int64
	for e := range wc.entriesLocked(prefix, from, rev) {
		if !all && !pred.Matches(e.attrs) {
			continue
		}
		if limit > 0 && len(l.Items) == limit {
			more = true
			if !all {
				break
			}
			remaining++
			continue
		}
		if cap(l.Items) == 0 {
			l.Items = make([]*storage.Object, 0, wc.sizeHintLocked(prefix, limit))
		}
		l.Items = append(l.Items, e.obj)
		last = e.obj.Key
	}
	if more {
		// The next page starts just after the last key returned.
		tok, err := storage.EncodeContinue(last+"\x00", prefix, rev)
		if err == nil {
			l.Continue = tok
		}
		if all {
			l.RemainingItemCount = &remaining
		}
	}
	return l
}

// sizeHintLocked guesses the length of a page: the objects under prefix,
// at most limit.
func (wc *watchCache) sizeHintLocked(prefix string, limit int) int {
	lo, hi := wc.prefixRangeLocked(prefix)
	if limit > 0 {
		return min(limit, hi-lo+1)
	}
	return hi - lo + 1
}

// entriesLocked yields, in key order, the entries under prefix with keys
// at or after from, as they were at revision rev. For rev below the
// current revision it undoes the later events: the first event after rev
// for a key holds the key's state at rev (its previous object, or nothing
// if it was created after rev).
func (wc *watchCache) entriesLocked(prefix, from string, rev int64) iter.Seq[*entry] {
	lo, hi := wc.prefixRangeLocked(prefix)
	if from > prefix {
		i, _ := slices.BinarySearchFunc(wc.sorted[lo:hi], from, compareEntryKey)
		lo += i
	}
	cur := wc.sorted[lo:hi]
	if rev >= wc.rev {
		return slices.Values(cur)
	}
	overlay := map[string]*entry{}
	for _, e := range wc.history.AscendFrom(rev + 1) {
		if !strings.HasPrefix(e.key, prefix) || e.key < from {
			continue
		}
		if _, seen := overlay[e.key]; seen {
			continue
		}
		var then *entry
		if e.prev != nil {
			then = &entry{obj: e.prev, attrs: e.prevAttrs}
		}
		overlay[e.key] = then
	}
	// Keys that existed at rev but do not now.
	var gone []*entry
	for k, e := range overlay {
		if e != nil && wc.byKey[k] == nil {
			gone = append(gone, e)
		}
	}
	slices.SortFunc(gone, func(a, b *entry) int { return strings.Compare(a.obj.Key, b.obj.Key) })
	return func(yield func(*entry) bool) {
		i, j := 0, 0
		for i < len(cur) || j < len(gone) {
			var e *entry
			if j == len(gone) || (i < len(cur) && cur[i].obj.Key < gone[j].obj.Key) {
				e = cur[i]
				i++
				if then, ok := overlay[e.obj.Key]; ok {
					if then == nil {
						continue
					}
					e = then
				}
			} else {
				e = gone[j]
				j++
			}
			if !yield(e) {
				return
			}
		}
	}
}
