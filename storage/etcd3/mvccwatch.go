package etcd3

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/etcdserver"
	"go.etcd.io/etcd/server/v3/storage/mvcc"
	"google.golang.org/grpc/metadata"
)

// mvccWatcher is the in-process Client's Watcher: each Watch is a watch
// on the member's multi-version store itself, with a goroutine of its
// own, where etcd's gRPC watch service behind the in-process adapter
// costs seven goroutines a stream (the client's two, the adapter's two,
// the service's send and receive loops, ours). A Store's watch reads its
// responses on its own goroutine instead (open): none of the member's.
// It asks progress of one watch by its ID, so an answer can only be that
// watch's: a stream-wide answer queued before a watch existed can not
// reach it (see watcher.streamContext). RequestProgress finds the watch
// by the stream name in its ctx's metadata, which each Store watch has
// of its own.
//
// The watches of one group (the Stores of one server, see
// Config.WatchPrefix) share one of the member's watch streams, as a
// client's watches share one gRPC stream: each stream holds a channel of
// 128 responses, ~6 KB, which a stream per watch made ~0.4 MB of every
// idle logical cluster's heap.
type mvccWatcher struct {
	srv *etcdserver.EtcdServer

	// mu protects closed, groups and byStream; running counts the open
	// watches and the groups' goroutines, which close waits for: a
	// goroutine still reading an event's previous value when the member
	// closes its database crashes the process.
	mu       sync.Mutex
	closed   bool
	groups   map[string]*mvccGroup
	byStream map[string]*mvccWatch
	running  sync.WaitGroup
	stop     chan struct{}
}

func newMVCCWatcher(srv *etcdserver.EtcdServer) *mvccWatcher {
	return &mvccWatcher{srv: srv, groups: map[string]*mvccGroup{}, byStream: map[string]*mvccWatch{}, stop: make(chan struct{})}
}

// mvccGroup is one of the member's watch streams and the watches that
// share it. Its goroutine (run) hands each response to its watch's queue
// and never waits for a watch, so a slow one holds up no other; its
// queue grows meanwhile, as a client's watch buffers responses for a
// slow reader.
type mvccGroup struct {
	name string
	ws   mvcc.WatchStream
	refs int // open watches; owned by mvccWatcher.mu

	mu      sync.Mutex
	watches map[mvcc.WatchID]*mvccWatch
}

// mvccWatch is one running watch: its ID on the group's stream, and the
// responses queued for it.
type mvccWatch struct {
	g  *mvccGroup
	id mvcc.WatchID

	mu      sync.Mutex
	pending []mvcc.WatchResponse
	// ready holds a token while pending has responses.
	ready chan struct{}
}

// errWatcherClosed ends watches of a closed member.
var errWatcherClosed = errors.New("etcd3: the embedded member is closed")

// run hands the stream's responses to their watches until the stream
// closes (its last watch gone). A response for a watch already
// cancelled is dropped.
func (g *mvccGroup) run(done func()) {
	defer done()
	for resp := range g.ws.Chan() {
		g.mu.Lock()
		w := g.watches[resp.WatchID]
		g.mu.Unlock()
		if w != nil {
			w.put(resp)
		}
	}
}

// put queues resp for the watch's goroutine.
func (w *mvccWatch) put(resp mvcc.WatchResponse) {
	w.mu.Lock()
	w.pending = append(w.pending, resp)
	w.mu.Unlock()
	select {
	case w.ready <- struct{}{}:
	default: // a token is there already
	}
}

// take returns the queued responses, oldest first, and empties the
// queue into spare, a slice the caller is done with, so that the two
// take turns and a batch allocates nothing once they have grown.
func (w *mvccWatch) take(spare []mvcc.WatchResponse) []mvcc.WatchResponse {
	w.mu.Lock()
	defer w.mu.Unlock()
	rs := w.pending
	w.pending = spare[:0]
	return rs
}

// mvccStream is one watch on the member's store, read by its owner's
// goroutine: a Store's watcher reads its responses itself (C, take,
// then response), so a watch costs one goroutine, not two and a channel
// between them. The owner calls close exactly once.
type mvccStream struct {
	m      *mvccWatcher
	w      *mvccWatch
	stream string
	prevKV bool
	// spare and out are responses' buffers, reused batch after batch
	// (only the owner's goroutine calls it).
	spare []mvcc.WatchResponse
	out   []clientv3.WatchResponse
}

// open starts a watch of key (or the range opts give) from the revision
// opts give, for the options Store uses (previous values, progress
// notification), on group's stream; ok is false when the member is
// closed.
func (m *mvccWatcher) open(ctx context.Context, group, key string, opts ...clientv3.OpOption) (s *mvccStream, ok bool) {
	op := clientv3.OpGet(key, opts...)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, false
	}
	g := m.groups[group]
	if g == nil {
		g = &mvccGroup{name: group, ws: m.srv.Watchable().NewWatchStream(), watches: map[mvcc.WatchID]*mvccWatch{}}
		m.groups[group] = g
		m.running.Add(1)
		go g.run(m.running.Done)
	}
	w := &mvccWatch{g: g, ready: make(chan struct{}, 1)}
	// Under g.mu, so that run finds the watch for its first response.
	g.mu.Lock()
	id, err := g.ws.Watch(ctx, clientv3.AutoWatchID, op.KeyBytes(), op.RangeBytes(), op.Rev())
	if err == nil {
		w.id = id
		g.watches[id] = w
	}
	g.mu.Unlock()
	if err != nil {
		// Only an empty range or a taken ID fail here; Store asks
		// for neither.
		m.release(g)
		return nil, false
	}
	g.refs++
	s = &mvccStream{m: m, w: w, stream: streamName(ctx), prevKV: op.IsPrevKV()}
	if s.stream != "" {
		m.byStream[s.stream] = w
	}
	m.running.Add(1)
	return s, true
}

// release closes g's stream, and so ends its goroutine, when no watch
// uses it; m.mu is held.
func (m *mvccWatcher) release(g *mvccGroup) {
	if g.refs == 0 && m.groups[g.name] == g {
		delete(m.groups, g.name)
		g.ws.Close()
	}
}

// C has a token when the watch has responses to take.
func (s *mvccStream) C() <-chan struct{} { return s.w.ready }

// responses returns the watch's queued responses as clientv3 reports
// them (see response), in a slice valid until the next call.
func (s *mvccStream) responses(ctx context.Context) []clientv3.WatchResponse {
	rs := s.w.take(s.spare)
	clear(s.out) // drop the last batch's events
	s.out = s.out[:0]
	for _, r := range rs {
		s.out = append(s.out, s.response(ctx, r))
	}
	clear(rs)
	s.spare = rs[:0]
	return s.out
}

// stopped is closed when the member closes: the owner then closes the
// stream without reading on.
func (s *mvccStream) stopped() <-chan struct{} { return s.m.stop }

// response is resp as clientv3 reports it, with each event's previous
// value when the watch asked for them; a compaction cancels the watch.
// It returns once a read can see resp's revision (see awaitReadable).
func (s *mvccStream) response(ctx context.Context, resp mvcc.WatchResponse) clientv3.WatchResponse {
	s.awaitReadable(resp.Revision)
	wr := clientv3.WatchResponse{Header: &pb.ResponseHeader{Revision: resp.Revision}, CompactRevision: resp.CompactRevision}
	if resp.CompactRevision != 0 {
		wr.Canceled = true
	}
	if len(resp.Events) > 0 {
		wr.Events = make([]*clientv3.Event, len(resp.Events))
		for i, e := range resp.Events {
			if s.prevKV && !(e.Type == mvccpb.Event_PUT && e.Kv.CreateRevision == e.Kv.ModRevision) {
				r, err := s.m.srv.KV().Range(ctx, e.Kv.Key, nil, mvcc.RangeOptions{Rev: e.Kv.ModRevision - 1})
				if err == nil && len(r.KVs) != 0 {
					// A new Event: etcd hands the same ones
					// to every watch of the key.
					e = &mvccpb.Event{Type: e.Type, Kv: e.Kv, PrevKv: r.KVs[0]}
				}
			}
			wr.Events[i] = (*clientv3.Event)(e)
		}
	}
	return wr
}

// awaitReadable waits until the member's store publishes rev to reads.
// etcd hands a write's events to its watches inside the write, just
// before it publishes the write's revision to new reads
// (watchableStoreTxnWrite.End), so a serializable read
// (SingleMemberReads) made on hearing of a write could still miss it: a
// controller reading an owner it has just seen deleted would find it
// there. The wait is the end of one write, microseconds; it yields the
// processor to the writer first, then sleeps a little at a time.
func (s *mvccStream) awaitReadable(rev int64) {
	kv := s.m.srv.KV()
	for i := 0; kv.Rev() < rev; i++ {
		if i < readableSpins {
			runtime.Gosched()
			continue
		}
		select {
		case <-s.stopped():
			return
		case <-time.After(readablePause):
		}
	}
}

// How awaitReadable waits: yields first, then pauses.
const (
	readableSpins = 64
	readablePause = 50 * time.Microsecond
)

// close ends the watch and lets the member close.
func (s *mvccStream) close() {
	w, g := s.w, s.w.g
	g.mu.Lock()
	delete(g.watches, w.id)
	g.mu.Unlock()
	// An error only says the ID is gone already (the stream closed).
	_ = g.ws.Cancel(w.id)
	s.m.mu.Lock()
	if s.m.byStream[s.stream] == w {
		delete(s.m.byStream, s.stream)
	}
	g.refs--
	s.m.release(g)
	s.m.mu.Unlock()
	s.m.running.Done()
}

// Watch implements clientv3.Watcher for the options Store uses: a key or
// a prefix, a start revision, previous values and progress notification.
// Its goroutine forwards the stream's responses; a Store reads its
// streams itself (see open).
func (m *mvccWatcher) Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan {
	out := make(chan clientv3.WatchResponse, 1)
	s, ok := m.open(ctx, "", key, opts...)
	if !ok {
		// A closed channel is what a closed client's watch gives.
		close(out)
		return out
	}
	go s.forward(ctx, out)
	return out
}

// forward sends the stream's responses on out until ctx ends, the watch
// is compacted away or the member closes.
func (s *mvccStream) forward(ctx context.Context, out chan<- clientv3.WatchResponse) {
	defer s.close()
	defer close(out)
	for {
		select {
		case <-s.C():
		case <-ctx.Done():
			return
		case <-s.stopped():
			return
		}
		for _, wr := range s.responses(ctx) {
			select {
			case out <- wr:
			case <-ctx.Done():
				return
			case <-s.stopped():
				return
			}
			if wr.Canceled {
				return
			}
		}
	}
}

// RequestProgress asks for a progress notification on the watch the
// stream name in ctx's metadata names; etcd sends it once that watch is
// synced (and drops the request otherwise).
func (m *mvccWatcher) RequestProgress(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return errWatcherClosed
	}
	if w := m.byStream[streamName(ctx)]; w != nil {
		w.g.ws.RequestProgress(w.id)
	}
	return nil
}

// Close ends every watch and waits for their goroutines.
func (m *mvccWatcher) Close() error {
	m.mu.Lock()
	if !m.closed {
		m.closed = true
		close(m.stop)
	}
	m.mu.Unlock()
	m.running.Wait()
	return nil
}

// streamName is the watch stream a ctx's outgoing metadata names.
func streamName(ctx context.Context) string {
	md, _ := metadata.FromOutgoingContext(ctx)
	if v := md.Get(watchStreamKey); len(v) > 0 {
		return v[0]
	}
	return ""
}
