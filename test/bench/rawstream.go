package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// rawStreams is the fan-out baseline: the least an HTTP server has to do
// to stream events to N chunked responses. A write (PUT /publish) numbers
// the event, builds its frame once from a pre-encoded template the size
// of a miniapi frame, queues it for a dispatcher goroutine and answers
// with the object; the dispatcher hands the shared frame to every stream's
// buffered channel (waiting, never dropping, when one is full); each
// stream's handler writes frames and flushes when its channel is empty —
// the shape of miniapi's watch path without etcd, the cache, filters or
// watcher termination.
type rawStreams struct {
	srv  *http.Server
	ln   net.Listener
	base string

	// head + resourceVersion + tail is a frame; the object is the frame
	// without objStart leading and frameEnd trailing bytes.
	head, tail []byte

	// pubMu orders numbering and queueing, so frames queue in
	// resourceVersion order.
	pubMu sync.Mutex
	seq   int64
	queue chan []byte

	// connMu serializes changes to conns; the dispatcher reads conns
	// without it (copy on write).
	connMu sync.Mutex
	conns  atomic.Pointer[[]*rawConn]

	stop chan struct{}
	done chan struct{}
}

// rawConn is one stream's queue.
type rawConn struct {
	ch  chan []byte
	ctx context.Context
}

// Frame layout shared with miniapi's WatchServer.
var (
	objStart = []byte(`{"type":"MODIFIED","object":`)
	frameEnd = []byte("}\n")
)

// rawBuffer is each stream's queue length, miniapi's default watcher
// buffer.
const rawBuffer = 100

// startRawStreams serves the baseline on a free loopback port. sample is
// an encoded object (as miniapi stores it); every frame is that object
// with its resourceVersion replaced.
func startRawStreams(sample []byte) (*rawStreams, error) {
	i := bytes.Index(sample, rvKey)
	if i < 0 {
		return nil, errors.New("rawstreams: sample object has no resourceVersion")
	}
	j := i + len(rvKey)
	k := bytes.IndexByte(sample[j:], '"')
	if k < 0 {
		return nil, errors.New("rawstreams: malformed sample object")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &rawStreams{
		ln:    ln,
		base:  "http://" + ln.Addr().String(),
		head:  append(slices.Clone(objStart), sample[:j]...),
		tail:  append(slices.Clone(sample[j+k:]), frameEnd...),
		queue: make(chan []byte, 1024),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	r.conns.Store(new([]*rawConn))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /watch", r.watch)
	mux.HandleFunc("PUT /publish", r.publish)
	r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 30 * time.Second}
	r.srv.RegisterOnShutdown(func() { close(r.stop) })
	go r.dispatch()
	go r.srv.Serve(ln)
	return r, nil
}

// close stops the server and the dispatcher.
func (r *rawStreams) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = r.srv.Shutdown(ctx)
	<-r.done
}

// watchURL implements streamTarget. The baseline keeps no history, so from
// is ignored: a stream starts with the next event.
func (r *rawStreams) watchURL(int64) string { return r.base + "/watch" }

// publishURL is where a write goes.
func (r *rawStreams) publishURL() string { return r.base + "/publish" }

// streams is the number of open streams.
func (r *rawStreams) streams() int { return len(*r.conns.Load()) }

// currentRV is the last resourceVersion published.
func (r *rawStreams) currentRV() int64 {
	r.pubMu.Lock()
	defer r.pubMu.Unlock()
	return r.seq
}

// publish numbers one event, queues its frame and answers with the
// object, as an update's response carries it.
func (r *rawStreams) publish(w http.ResponseWriter, req *http.Request) {
	if _, err := io.Copy(io.Discard, req.Body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.pubMu.Lock()
	r.seq++
	frame := make([]byte, 0, len(r.head)+20+len(r.tail))
	frame = append(frame, r.head...)
	frame = strconv.AppendInt(frame, r.seq, 10)
	frame = append(frame, r.tail...)
	select {
	case r.queue <- frame:
	case <-r.stop:
	}
	r.pubMu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Write(frame[len(objStart) : len(frame)-len(frameEnd)])
}

// dispatch hands every queued frame to every stream, in order.
func (r *rawStreams) dispatch() {
	defer close(r.done)
	var blocked []*rawConn
	for {
		var frame []byte
		select {
		case frame = <-r.queue:
		case <-r.stop:
			return
		}
		blocked = blocked[:0]
		for _, c := range *r.conns.Load() {
			select {
			case c.ch <- frame:
			default:
				blocked = append(blocked, c)
			}
		}
		for _, c := range blocked {
			select {
			case c.ch <- frame:
			case <-c.ctx.Done():
			case <-r.stop:
				return
			}
		}
	}
}

// watch streams frames to one client until it goes away.
func (r *rawStreams) watch(w http.ResponseWriter, req *http.Request) {
	// Registered before the headers go out, as miniapi registers its
	// watcher, so a client that has its headers receives every later
	// event.
	c := &rawConn{ch: make(chan []byte, rawBuffer), ctx: req.Context()}
	r.connMu.Lock()
	cs := append(slices.Clip(*r.conns.Load()), c)
	r.conns.Store(&cs)
	r.connMu.Unlock()
	defer func() {
		r.connMu.Lock()
		old := *r.conns.Load()
		if i := slices.Index(old, c); i >= 0 {
			cs := slices.Delete(slices.Clone(old), i, i+1)
			r.conns.Store(&cs)
		}
		r.connMu.Unlock()
	}()
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if rc.Flush() != nil {
		return
	}
	for {
		select {
		case <-req.Context().Done():
			return
		case <-r.stop:
			return
		case frame := <-c.ch:
			if _, err := w.Write(frame); err != nil {
				return
			}
			if len(c.ch) == 0 {
				if rc.Flush() != nil {
					return
				}
			}
		}
	}
}

// String names the baseline in logs.
func (r *rawStreams) String() string { return fmt.Sprintf("raw streams at %s", r.base) }
