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
// stream on its own goroutine instead (open): none of the member's. It
// asks progress of one watch by its ID, so an answer can only be that
// watch's: a stream-wide answer queued before a watch existed can not
// reach it (see watcher.streamContext). RequestProgress finds the watch
// by the stream name in its ctx's metadata, which each Store watch has
// of its own.
type mvccWatcher struct {
	srv *etcdserver.EtcdServer

	// mu protects closed and byStream; running counts the open streams,
	// which close waits for: a goroutine still reading an event's
	// previous value when the member closes its database crashes the
	// process.
	mu       sync.Mutex
	closed   bool
	byStream map[string]*mvccWatch
	running  sync.WaitGroup
	stop     chan struct{}
}

func newMVCCWatcher(srv *etcdserver.EtcdServer) *mvccWatcher {
	return &mvccWatcher{srv: srv, byStream: map[string]*mvccWatch{}, stop: make(chan struct{})}
}

// mvccWatch is one running watch.
type mvccWatch struct {
	ws mvcc.WatchStream
	id mvcc.WatchID
}

// errWatcherClosed ends watches of a closed member.
var errWatcherClosed = errors.New("etcd3: the embedded member is closed")

// mvccStream is one watch on the member's store, read by its owner's
// goroutine: a Store's watcher reads its responses itself (C, then
// response), so a watch costs one goroutine, not two and a channel
// between them. The owner calls close exactly once.
type mvccStream struct {
	m      *mvccWatcher
	w      *mvccWatch
	stream string
	prevKV bool
}

// open starts a watch of key (or the range opts give) from the revision
// opts give, for the options Store uses (previous values, progress
// notification); ok is false when the member is closed.
func (m *mvccWatcher) open(ctx context.Context, key string, opts ...clientv3.OpOption) (s *mvccStream, ok bool) {
	op := clientv3.OpGet(key, opts...)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, false
	}
	ws := m.srv.Watchable().NewWatchStream()
	id, err := ws.Watch(ctx, clientv3.AutoWatchID, op.KeyBytes(), op.RangeBytes(), op.Rev())
	if err != nil {
		// Only an empty range or a taken ID fail here; Store asks
		// for neither.
		ws.Close()
		return nil, false
	}
	s = &mvccStream{m: m, w: &mvccWatch{ws: ws, id: id}, stream: streamName(ctx), prevKV: op.IsPrevKV()}
	if s.stream != "" {
		m.byStream[s.stream] = s.w
	}
	m.running.Add(1)
	return s, true
}

// C delivers the watch's responses.
func (s *mvccStream) C() <-chan mvcc.WatchResponse { return s.w.ws.Chan() }

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
	s.m.mu.Lock()
	if s.m.byStream[s.stream] == s.w {
		delete(s.m.byStream, s.stream)
	}
	s.m.mu.Unlock()
	s.w.ws.Close()
	s.m.running.Done()
}

// Watch implements clientv3.Watcher for the options Store uses: a key or
// a prefix, a start revision, previous values and progress notification.
// Its goroutine forwards the stream's responses; a Store reads its
// streams itself (see open).
func (m *mvccWatcher) Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan {
	out := make(chan clientv3.WatchResponse, 1)
	s, ok := m.open(ctx, key, opts...)
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
		var resp mvcc.WatchResponse
		var ok bool
		select {
		case resp, ok = <-s.C():
			if !ok {
				return
			}
		case <-ctx.Done():
			return
		case <-s.stopped():
			return
		}
		wr := s.response(ctx, resp)
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
		w.ws.RequestProgress(w.id)
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
