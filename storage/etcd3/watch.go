package etcd3

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/miniapi/miniapi/storage"
)

// watchBufferSize is how many events a watcher holds for a slow consumer
// before its goroutine waits; etcd's client buffers behind it.
const watchBufferSize = 100

// Watch implements storage.Interface.
//
// Where it starts: with initial events (opts.SendsInitialEvents) it reads
// the current objects at revision R, sends them as Added (then, when
// opts.SendsInitialEventsEnd, a Bookmark with InitialEventsEnd and
// revision R) and then the changes after R. Without, it sends the changes
// after resourceVersion N, or after the current revision for none.
//
// A watch whose revision has been compacted delivers one ErrorEvent with a
// Compacted error carrying the compact revision, then closes; so does any
// other failure, with the error it had. Progress notifications from etcd
// (periodic, or after RequestProgress) arrive as Bookmarks when
// opts.ProgressNotify is set (see RequestProgress). The periodic
// bookmarks opts.AllowBookmarks asks for are left to the cacher.
func (s *Store) Watch(ctx context.Context, prefix string, opts storage.WatchOptions) (storage.Watcher, error) {
	w, err := s.newWatcher(ctx, prefix, opts)
	if err != nil {
		return nil, err
	}
	w.result = make(chan storage.Event, watchBufferSize)
	go func() {
		defer close(w.result)
		w.run()
	}()
	return w, nil
}

// RunWatch implements storage.WatchRunner: Watch's watch, run on the
// caller's goroutine, handing each event to fn.
func (s *Store) RunWatch(ctx context.Context, prefix string, opts storage.WatchOptions, fn func(storage.Event) bool) error {
	w, err := s.newWatcher(ctx, prefix, opts)
	if err != nil {
		return err
	}
	w.deliver = fn
	w.run()
	return nil
}

// newWatcher validates a watch's options and pins where it starts.
func (s *Store) newWatcher(ctx context.Context, prefix string, opts storage.WatchOptions) (*watcher, error) {
	rv, err := parseRV(prefix, opts.ResourceVersion)
	if err != nil {
		return nil, err
	}
	initial := opts.SendsInitialEvents()
	startRev := rv // events after startRev
	if !initial && rv == 0 {
		// Pin the start now, so that every change after Watch returns
		// is delivered.
		if startRev, err = s.CurrentRevision(ctx); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	return &watcher{
		store:    s,
		prefix:   prefix,
		opts:     opts,
		initial:  initial,
		minRev:   rv,
		startRev: startRev,
		ctx:      ctx,
		cancel:   cancel,
	}, nil
}

// watcher is one running Watch or RunWatch. run, on the Watch's own
// goroutine (which closes result after it) or on RunWatch's caller's, is
// the only sender; Stop cancels ctx.
type watcher struct {
	store    *Store
	prefix   string
	opts     storage.WatchOptions
	initial  bool  // send the current objects first
	minRev   int64 // the initial snapshot must be at least this new
	startRev int64 // stream the changes after this; set by run with initial events
	ctx      context.Context
	cancel   context.CancelFunc
	// result carries the events of a Watch; a RunWatch hands them to
	// deliver instead.
	result  chan storage.Event
	deliver func(storage.Event) bool
	// With the embedded member's watch read on this goroutine:
	// stopped is closed when the member closes, closeStream ends the
	// stream (release calls it once, and sets released). All nil for
	// a client's watch. Only the watch's goroutine uses them.
	stopped     <-chan struct{}
	closeStream func()
	released    bool
}

// ResultChan implements storage.Watcher.
func (w *watcher) ResultChan() <-chan storage.Event { return w.result }

// Stop implements storage.Watcher. It does not wait; result closes once
// the goroutine has seen the cancellation.
func (w *watcher) Stop() { w.cancel() }

func (w *watcher) run() {
	defer w.cancel() // release the etcd watch if run ends on its own
	var snapshot []*mvccpb.KeyValue
	if w.initial {
		var err error
		snapshot, w.startRev, err = w.readSnapshot()
		if err != nil {
			w.sendError(err)
			return
		}
	}
	startRev := w.startRev
	ops := []clientv3.OpOption{clientv3.WithRev(startRev + 1), clientv3.WithPrevKV()}
	if strings.HasSuffix(w.prefix, "/") {
		ops = append(ops, clientv3.WithPrefix())
	}
	if w.opts.ProgressNotify {
		ops = append(ops, clientv3.WithProgressNotify())
	}
	// Open the etcd watch before sending the snapshot, so that etcd
	// holds revision startRev+1 on while a slow consumer takes it. The
	// embedded member's watches are read here, on this goroutine
	// (mvccStream, a token on C for each batch queued); a client's
	// arrive on its channel.
	key := w.store.watchPrefix + w.prefix
	var follow func(lastRev, delivered int64)
	if m, ok := w.store.watcher.(*mvccWatcher); ok {
		st, ok := m.open(w.streamContext(w.ctx), w.store.watchPrefix, key, ops...)
		if !ok {
			w.sendError(storage.NewError(storage.CodeInternal, w.prefix, 0, errWatcherClosed))
			return
		}
		w.stopped, w.closeStream = st.stopped(), st.close
		defer w.release()
		follow = func(lastRev, delivered int64) {
			followResponses(w, st.C(), func(struct{}) []clientv3.WatchResponse { return st.responses(w.ctx) }, lastRev, delivered)
		}
	} else {
		wch := w.store.watcher.Watch(w.streamContext(w.ctx), key, ops...)
		follow = func(lastRev, delivered int64) {
			one := make([]clientv3.WatchResponse, 1)
			followResponses(w, wch, func(r clientv3.WatchResponse) []clientv3.WatchResponse {
				one[0] = r
				return one
			}, lastRev, delivered)
		}
	}

	for _, kv := range snapshot {
		obj, err := objectFromKV(kv)
		if err != nil {
			w.sendError(err)
			return
		}
		if ok, err := w.matches(obj.Data); err != nil {
			w.sendError(err)
			return
		} else if ok && !w.send(storage.Event{Type: storage.Added, Object: obj}) {
			return
		}
	}
	var delivered int64
	if w.opts.SendsInitialEventsEnd() {
		ev := storage.Event{Type: storage.Bookmark, Object: &storage.Object{Revision: startRev}, InitialEventsEnd: true}
		if !w.send(ev) {
			return
		}
		delivered = startRev
	}
	follow(startRev, delivered)
}

// followResponses forwards etcd's watch responses until the watch ends:
// each value received from ch stands for what responses returns for it
// (one response, or those queued meanwhile). lastRev is
// the revision the consumer is current through once it has what was sent
// so far; delivered is the highest revision it has been told of.
//
// A ProgressNotify watch answers RequestProgress (a revision R the Store
// wants its watches to report): if it is current through R already, it
// sends a Bookmark at lastRev itself; otherwise it asks etcd for progress
// of its own watch, and again every progressRetryInterval until etcd's
// notification or events bring it past R, because etcd drops requests
// that arrive while the watch is catching up or not yet created.
func followResponses[R any](w *watcher, ch <-chan R, responses func(R) []clientv3.WatchResponse, lastRev, delivered int64) {
	var retry *time.Ticker
	var retryC <-chan time.Time
	var requested int64 // the highest wanted revision asked of etcd
	defer func() {
		if retry != nil {
			retry.Stop()
		}
	}()
	for {
		var kick <-chan struct{}
		behind := false
		if w.opts.ProgressNotify {
			var wanted int64
			wanted, kick = w.store.progressState()
			if wanted > delivered {
				if lastRev >= wanted {
					if !w.send(storage.Event{Type: storage.Bookmark, Object: &storage.Object{Revision: lastRev}}) {
						return
					}
					delivered = lastRev
				} else {
					behind = true
					if wanted > requested {
						// An error here means the stream is going
						// away; the watch channel reports that.
						_ = w.store.watcher.RequestProgress(w.streamContext(w.ctx))
						requested = wanted
					}
				}
			}
		}
		switch {
		case behind && retry == nil:
			retry = time.NewTicker(progressRetryInterval)
			retryC = retry.C
		case !behind && retry != nil:
			retry.Stop()
			retry, retryC = nil, nil
		}
		select {
		case r, ok := <-ch:
			if !ok || w.released {
				// etcd's channel closes when our ctx ends, and
				// otherwise only when the client (or member) is
				// closed; after release, what the stream still
				// buffers must not be read.
				w.sendError(errWatchClosed(w.prefix))
				return
			}
			for _, resp := range responses(r) {
				seen, sent, cont := w.forward(resp)
				if !cont {
					return
				}
				lastRev, delivered = max(lastRev, seen), max(delivered, sent)
			}
		case <-w.stopped:
			w.release()
			w.sendError(errWatchClosed(w.prefix))
			return
		case <-kick:
		case <-retryC:
			// An error here means the stream is going away; the
			// watch channel reports that.
			_ = w.store.watcher.RequestProgress(w.streamContext(w.ctx))
		case <-w.ctx.Done():
			return
		}
	}
}

// forward delivers one watch response. It returns the revision the
// response brings the watch up to, the highest revision it delivered (0
// for none: events the predicate drops are not delivered), and whether to
// go on. Events of one revision (one transaction's) are sent together,
// each but the last marked MoreAtRevision; an event that cannot be
// decoded ends the watch before any event of its revision is sent.
func (w *watcher) forward(resp clientv3.WatchResponse) (seen, sent int64, ok bool) {
	if err := resp.Err(); err != nil {
		w.sendError(w.watchError(resp, err))
		return 0, 0, false
	}
	if resp.IsProgressNotify() {
		w.store.recordBookmark()
		if !w.opts.ProgressNotify {
			return 0, 0, true
		}
		rev := resp.Header.Revision
		return rev, rev, w.send(storage.Event{Type: storage.Bookmark, Object: &storage.Object{Revision: rev}})
	}
	out := make([]storage.Event, 0, len(resp.Events))
	var failed error
	for _, e := range resp.Events {
		w.store.recordEvent()
		ev, deliver, err := w.transform(e)
		if err != nil {
			// Keep no part of the failed event's revision.
			rev := e.Kv.ModRevision
			for len(out) > 0 && out[len(out)-1].Object.Revision == rev {
				out = out[:len(out)-1]
			}
			failed = err
			break
		}
		seen = e.Kv.ModRevision
		if deliver {
			out = append(out, ev)
		}
	}
	for i := range out {
		out[i].MoreAtRevision = i+1 < len(out) && out[i+1].Object.Revision == out[i].Object.Revision
		if !w.send(out[i]) {
			return 0, 0, false
		}
		sent = out[i].Object.Revision
	}
	if failed != nil {
		w.sendError(failed)
		return 0, 0, false
	}
	return seen, sent, true
}

// readSnapshot reads the current objects under the prefix (or the one
// key) at one revision, in pages, and returns them with that revision.
func (w *watcher) readSnapshot() ([]*mvccpb.KeyValue, int64, error) {
	var kvs []*mvccpb.KeyValue
	var rev int64
	from, ops := w.prefix, []clientv3.OpOption{clientv3.WithLimit(maxPageSize)}
	op := "get"
	if strings.HasSuffix(w.prefix, "/") {
		ops = append(ops, clientv3.WithRange(clientv3.GetPrefixRangeEnd(w.prefix)))
		op = "list"
	}
	for {
		resp, err := w.store.get(w.ctx, op, from, ops...)
		if err != nil {
			return nil, 0, etcdError(w.prefix, "watch: read initial state", err)
		}
		if rev == 0 {
			rev = resp.Header.Revision
			if err := checkNotTooLarge(w.prefix, w.minRev, rev); err != nil {
				return nil, 0, err
			}
			ops = append(ops, clientv3.WithRev(rev))
		}
		kvs = append(kvs, resp.Kvs...)
		if !resp.More || len(resp.Kvs) == 0 {
			return kvs, rev, nil
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// transform turns an etcd event into the event this watch delivers, if
// any: with a selector, an object that starts matching is Added and one
// that stops matching is Deleted (carrying its previous content at the
// event's revision).
func (w *watcher) transform(e *clientv3.Event) (storage.Event, bool, error) {
	key := w.key(e.Kv)
	rev := e.Kv.ModRevision
	var cur, prev *storage.Object
	var err error
	if e.PrevKv != nil {
		if prev, err = newObject(key, e.PrevKv.Value, e.PrevKv.ModRevision); err != nil {
			return storage.Event{}, false, err
		}
	} else if !e.IsCreate() {
		return storage.Event{}, false, storage.NewError(storage.CodeInternal, key, rev,
			fmt.Errorf("etcd3: watch event at revision %d has no previous value", rev))
	}
	if e.Type == clientv3.EventTypePut {
		if cur, err = newObject(key, e.Kv.Value, rev); err != nil {
			return storage.Event{}, false, err
		}
	}
	curMatch, prevMatch := cur != nil, prev != nil
	if cur != nil {
		if curMatch, err = w.matches(cur.Data); err != nil {
			return storage.Event{}, false, err
		}
	}
	if prev != nil && !w.opts.Predicate.Empty() {
		if prevMatch, err = w.matches(prev.Data); err != nil {
			return storage.Event{}, false, err
		}
	}
	switch {
	case curMatch && prevMatch:
		return storage.Event{Type: storage.Modified, Object: cur, PrevObject: prev}, true, nil
	case curMatch:
		return storage.Event{Type: storage.Added, Object: cur}, true, nil
	case prevMatch:
		// Deleted, or no longer selected: the last state the watch
		// saw, at the revision it went away.
		gone, err := newObject(key, e.PrevKv.Value, rev)
		if err != nil {
			return storage.Event{}, false, err
		}
		return storage.Event{Type: storage.Deleted, Object: gone, PrevObject: prev}, true, nil
	}
	return storage.Event{}, false, nil
}

// key is kv's key as the Store's callers name it: without the watch
// prefix (Config.WatchPrefix). The event is not changed: the client hands
// the same one to every watch of the range.
func (w *watcher) key(kv *mvccpb.KeyValue) string {
	return string(kv.Key[min(len(w.store.watchPrefix), len(kv.Key)):])
}

func (w *watcher) matches(data []byte) (bool, error) {
	ok, err := w.opts.Predicate.MatchesData(data)
	if err != nil {
		return false, storage.NewError(storage.CodeInternal, w.prefix, 0, fmt.Errorf("etcd3: watch filter: %w", err))
	}
	return ok, nil
}

// watchError converts a failed watch response; compaction carries the
// compact revision, the oldest a new watch can start after.
func (w *watcher) watchError(resp clientv3.WatchResponse, err error) error {
	if resp.CompactRevision != 0 || errors.Is(err, rpctypes.ErrCompacted) {
		return storage.NewError(storage.CodeCompacted, w.prefix, resp.CompactRevision,
			fmt.Errorf("etcd3: watch from revision %d: %w", w.startRev+1, err))
	}
	return etcdError(w.prefix, "watch", err)
}

// send delivers ev unless the watch has been stopped; it reports whether
// it did. The embedded member closing meanwhile releases the stream, so
// that the member need not wait for this watch's consumer.
func (w *watcher) send(ev storage.Event) bool {
	if w.deliver != nil {
		// The consumer runs the watch: it is not waited for, and
		// says itself when to stop.
		return w.ctx.Err() == nil && w.deliver(ev)
	}
	select {
	case w.result <- ev:
		return true
	case <-w.ctx.Done():
		return false
	case <-w.stopped:
		w.release()
	}
	select {
	case w.result <- ev:
		return true
	case <-w.ctx.Done():
		return false
	}
}

// release closes the embedded member's stream this watch reads, once;
// a no-op for a client's watch.
func (w *watcher) release() {
	if w.closeStream != nil && !w.released {
		w.released, w.stopped = true, nil
		w.closeStream()
	}
}

// errWatchClosed ends a watch whose etcd watch went away under it.
func errWatchClosed(prefix string) error {
	return storage.NewError(storage.CodeInternal, prefix, 0, errors.New("etcd3: watch channel closed"))
}

// sendError delivers the watch's final ErrorEvent, unless it was stopped
// (a stopped watch owes nobody an explanation).
func (w *watcher) sendError(err error) {
	if w.ctx.Err() != nil {
		return
	}
	w.send(storage.Event{Type: storage.ErrorEvent, Err: err})
}
