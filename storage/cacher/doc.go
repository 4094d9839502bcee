// Package cacher serves one resource type's lists, gets and watches from
// memory, in front of any other storage.Interface (in miniapi, the etcd3
// Store), as kube-apiserver's watch cache does. Cacher implements
// storage.Interface itself, so the registry cannot tell it is there.
//
// # What it owns
//
// Writes pass through to the underlying storage unchanged. The cache is fed
// only by the underlying watch, never by the local write path, so several
// servers on one etcd agree on what they serve. Inside a Cacher:
//
//   - the reflector (one goroutine) lists the type's prefix at revision R,
//     then watches from R with progress notifications. When the watch
//     ends it re-watches from the last revision it applied; only when that
//     revision has been compacted does it relist (see below). The events
//     of one revision (an etcd transaction that changed several keys,
//     marked MoreAtRevision) are applied as one change;
//   - the watch cache holds every current object (its encoded bytes and
//     its selectable attributes, computed once) sorted by key, and a ring
//     of recent events keyed by revision;
//   - the dispatcher (one goroutine) offers each event to every watcher
//     without blocking; watchers whose buffers are full share a bounded
//     time budget (DispatchBudget) and are terminated if still full, their
//     channel closed without an error so the client re-watches from its
//     last resourceVersion;
//   - one cacheWatcher goroutine per watch sends its initial events, then
//     filters the dispatched events (prefix, label and field selectors,
//     with selector transitions turned into Added and Deleted) onto the
//     watch's channel; a watch run by its consumer (RunWatch) does that
//     work on the consumer's goroutine, handing events to a function.
//
// Objects and events are encoded once: every list and every watcher hands
// out the same *storage.Object values. A selector-transition Deleted event
// is re-encoded (previous state, the event's revision) at most once per
// event, by the first watcher that needs it.
//
// # Resource versions
//
// Get with "" reads through; "0" and N read from the cache after waiting
// (at most FreshnessTimeout, then TooLargeResourceVersion) for the cache
// to reach N. List with "0" or N (NotOlderThan) is served from the cache
// the same way; a consistent List ("") reads etcd's current revision, asks
// for a progress notification, and is served from the cache once it has
// caught up, or read through if it does not in time. Exact lists and
// continue tokens are served from the cache while their revision is
// covered by the ring (the state at N is rebuilt by undoing the later
// events), from the underlying storage otherwise. Tokens use
// storage.EncodeContinue, so pages may alternate between the two.
//
// Watch with "" starts with Added events for a consistent snapshot, "0"
// with what the cache has, and N with exactly the events after N from the
// ring: N older than the ring yields one Compacted ErrorEvent (410);
// from an N newer than the cache, the events after N as they come.
// The snapshot and the watcher's registration happen under the watch
// cache's lock, so no event is lost or repeated between them.
//
// # Bookmarks
//
// With AllowBookmarks a watch receives a Bookmark about every
// BookmarkInterval, and one about two seconds before the deadline of the
// context passed to Watch: the HTTP handler gives that context its
// timeout, and the client then resumes from a recent revision (none at
// all for a watch of two seconds or less, as kube's). Bookmarks
// travel through the dispatcher behind the events they cover, so a
// bookmark never claims a revision whose events are still queued. When a
// watch that allows bookmarks starts with initial events (asked for with
// SendInitialEvents, or by default for resourceVersion "" or "0", as
// kube-apiserver 1.37), they end with a Bookmark marked InitialEventsEnd
// at the snapshot's revision.
//
// # Relisting
//
// When the underlying watch cannot resume because etcd compacted past the
// cache's revision, the history between is gone. The reflector relists and
// sends the running watchers the difference between the old and new
// state: Deleted for vanished keys (at the old revision + 1, the earliest
// their deletion can have had), then Added and Modified at each object's
// own revision, in revision order. Watchers end at exactly etcd's state
// without being cut off. The ring restarts empty at the relist's
// revision, so a client that resumes from a revision inside the gap gets
// 410 and relists instead of trusting synthesized revisions.
//
// # Metrics
//
// With Config.Resource set, a Cacher records kube-apiserver's watch cache
// metrics (events received and dispatched, resourceVersion,
// initializations, read waits, consistent reads, terminated watchers,
// initial events, history capacity) and the resource's object count and
// size (apiserver_resource_objects), exactly, as it applies events;
// Close removes the object count. See metrics.go.
//
// # Lifecycle
//
// New starts the reflector and the dispatcher; Ready waits for the first
// list; Close stops everything and returns only when the reflector, the
// dispatcher and every watcher goroutine have exited, with every open
// watch's channel closed. Each Watcher must be stopped by its consumer.
//
//	store := etcd3.New(etcd3.Config{Client: client})
//	keys := storage.ResourceKeys{Group: "", Resource: "configmaps", Namespaced: true}
//	c, err := cacher.New(store, cacher.Config{Prefix: keys.Prefix(), Attrs: storage.DefaultAttrs})
//	if err != nil { ... }
//	defer c.Close()
//	if err := c.Ready(ctx); err != nil { ... }
//	w, err := c.Watch(ctx, keys.NamespacePrefix("default"), storage.WatchOptions{ResourceVersion: "0"})
//	if err != nil { ... }
//	defer w.Stop()
//	for ev := range w.ResultChan() { ... }
package cacher
