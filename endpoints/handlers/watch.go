package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"time"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/faults"
	"github.com/miniapi/miniapi/journal"
	"github.com/miniapi/miniapi/registry"
	"github.com/miniapi/miniapi/storage"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apiserver/pkg/endpoints/metrics"
	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"
	compbasemetrics "k8s.io/component-base/metrics"
)

// watch answers ?watch=true on a collection and the legacy /watch/ paths:
// a stream of newline-terminated JSON WatchEvents.
func (q *request) watch() {
	if q.r.Method != http.MethodGet {
		q.notAllowed()
		return
	}
	out, err := negotiateOutput(q.r, q.t)
	if err == nil && out.mediaType == mediaYAML {
		// kube's negotiation picks the format first and then finds YAML
		// cannot stream: 406, even with */* among the clauses.
		err = api.NewNotAcceptable([]string{mediaJSON + ";stream=watch", mediaProtobuf + ";stream=watch"})
	}
	if err != nil {
		q.fail(err)
		return
	}
	p, err := parseListParams(q.r.URL.Query(), true)
	if err != nil {
		q.fail(err)
		return
	}
	convert, err := watchConversion(q.t, out, q.r.URL.Query())
	if err != nil {
		q.fail(err)
		return
	}
	if q.info.Name != "" {
		// The legacy /watch/.../<name> path watches one object.
		byName := fields.OneTermEqualSelector("metadata.name", q.info.Name)
		if p.Field != nil && !p.Field.Empty() {
			byName = fields.AndSelectors(p.Field, byName)
		}
		p.Field = byName
	}
	timeout := p.timeout
	if timeout == 0 {
		min := q.h.minWatchTimeout
		timeout = min + rand.N(min)
	}
	ctx, cancel := context.WithTimeout(q.r.Context(), timeout)
	defer cancel()
	watchCtx := ctx
	if timeout < 0 {
		// kube-apiserver opens the watch and its timer ends it at once:
		// 200 and no events. The watch is opened without the deadline,
		// already past, which would make opening it fail; ctx ends the
		// stream as soon as it starts.
		watchCtx = q.r.Context()
	}
	w, err := q.store.Watch(watchCtx, q.info.Namespace, registry.WatchOptions{
		ListOptions:       p.ListOptions,
		SendInitialEvents: p.sendInitialEvents,
		AllowBookmarks:    p.allowWatchBookmarks,
	})
	if err != nil {
		q.fail(err)
		return
	}
	defer w.Stop()
	// The watcher is registered: the watch is initialized as far as
	// kube's priority and fairness filter is concerned, which holds a
	// seat for it until now (as kube's cacher signals once its watcher
	// is added). Without the filter this does nothing.
	utilflowcontrol.WatchInitialized(q.r.Context())
	journal.WatchFrom(q.r.Context()).SetNamespaced(q.t.Namespaced)
	frames := newFrameEncoder(q.t, p.ResourceVersion)
	frames.convert = convert
	frames.countSent(q.r.Context(), q.info)
	if out.mediaType == mediaProtobuf {
		frames.proto = &out
	}
	if isWebSocket(q.r) {
		serveWebSocketWatch(ctx, q.w, q.r, w, frames, q.h.shutdownWatches)
		return
	}
	serveHTTPWatch(ctx, q.w, w, frames, q.h.shutdownWatches)
}

// frameSink is where a watch's frames go: a chunked HTTP response or a
// WebSocket connection.
type frameSink interface {
	// write sends one event.
	write(ev storage.Event) error
	// flush pushes buffered frames to the client.
	flush() error
	// reset drops the connection without ending the stream (an injected
	// fault).
	reset()
}

// pump moves events from the watcher to the sink until the watcher ends,
// ctx ends (client gone or watch timed out) or the server shuts down. It
// flushes only when no further event is queued, so a burst costs one flush.
func pump(ctx context.Context, w storage.Watcher, sink frameSink, shutdown <-chan struct{}) {
	ch := w.ResultChan()
	// Tell the watcher what reached the client, so a test's settle
	// barrier knows this watch has been sent what it was given.
	fr, _ := w.(storage.FlushReporter)
	if fr != nil {
		fr.ConsumerFlushes()
	}
	// Injected faults (see package faults) end the watch or hold its
	// events back; without a fault injector both are nil.
	fault := faults.WatchFrom(ctx)
	// The journal, when the server keeps one, records what is sent.
	journaled := journal.WatchFrom(ctx)
	var written int64
	for {
		select {
		case <-ctx.Done():
			return
		case <-shutdown:
			return
		case a := <-fault.Signals():
			switch a {
			case faults.WatchReset:
				sink.reset()
			case faults.WatchExpire:
				// As after the revision last sent was compacted: kube's
				// 410 Expired ERROR event.
				expired := api.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", written, written+1))
				sink.write(storage.Event{Type: storage.ErrorEvent, Err: expired})
				sink.flush()
			}
			return
		case ev, ok := <-ch:
			if !ok {
				return
			}
			if d := fault.Delay(); d > 0 && !sleep(ctx, d) {
				return
			}
			if err := sink.write(ev); err != nil {
				return
			}
			if ev.Object != nil && ev.Type != storage.Bookmark {
				journaled.Sent(string(ev.Type), ev.Object.Key, ev.Object.Revision)
			}
			if ev.Type == storage.ErrorEvent {
				sink.flush()
				return
			}
			if ev.Object != nil {
				written = max(written, ev.Object.Revision)
			}
			if len(ch) == 0 {
				if sink.flush() != nil {
					return
				}
				if fr != nil {
					fr.Flushed(written)
				}
			}
		}
	}
}

// sleep waits d, reporting false if ctx ends first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// httpSink writes newline-terminated JSON frames to a chunked response.
type httpSink struct {
	w      http.ResponseWriter
	rc     *http.ResponseController
	frames *frameEncoder
}

func (s *httpSink) write(ev storage.Event) error { return s.frames.write(s.w, ev) }
func (s *httpSink) flush() error                 { return s.rc.Flush() }

// reset aborts the response: net/http resets the HTTP/2 stream, or
// closes an HTTP/1.1 connection without the chunked stream's end.
func (s *httpSink) reset() { panic(http.ErrAbortHandler) }

// serveHTTPWatch writes headers, then streams frames as chunks.
func serveHTTPWatch(ctx context.Context, w http.ResponseWriter, watcher storage.Watcher, frames *frameEncoder, shutdown <-chan struct{}) {
	rc := http.NewResponseController(w)
	// A server-wide write timeout must not cut a long watch short.
	_ = rc.SetWriteDeadline(time.Time{})
	w.Header().Set("Content-Type", frames.contentType())
	w.Header().Set("Cache-Control", "no-cache, private")
	w.WriteHeader(http.StatusOK)
	if rc.Flush() != nil {
		return
	}
	pump(ctx, watcher, &httpSink{w: w, rc: rc, frames: frames}, shutdown)
}

// frameEncoder turns storage events into WatchEvent frames. JSON object
// events reuse the stored bytes as they are: the frame is a fixed prefix,
// the shared encoding, and a fixed suffix. Protobuf frames are WatchEvent
// messages embedding the object in the protobuf envelope.
type frameEncoder struct {
	t                *registry.Type
	apiVersion, kind string
	requestedRV      string
	gr               api.GroupResource
	// proto, when set, is the negotiated protobuf output: frames are
	// protobuf WatchEvents of the object or its PartialObjectMetadata.
	proto *output
	// convert, when set, turns each object (bookmarks included) into what
	// the client asked for, a Table or PartialObjectMetadata, before it is
	// framed; ERROR frames carry their Status as it is.
	convert func(obj []byte) ([]byte, error)
	// buf assembles one frame so it goes out in one write; a watch's
	// frames are written by one goroutine, so one buffer serves them all.
	buf []byte
	// events and sizes, when set, count the frames sent and their sizes
	// (kube's apiserver_watch_events_total and _sizes).
	events compbasemetrics.CounterMetric
	sizes  compbasemetrics.ObserverMetric
}

func newFrameEncoder(t *registry.Type, requestedRV string) *frameEncoder {
	return &frameEncoder{t: t, apiVersion: t.APIVersion(), kind: t.Kind, requestedRV: requestedRV, gr: t.GroupResource()}
}

var (
	framePrefixes = map[storage.EventType][]byte{
		storage.Added:      []byte(`{"type":"ADDED","object":`),
		storage.Modified:   []byte(`{"type":"MODIFIED","object":`),
		storage.Deleted:    []byte(`{"type":"DELETED","object":`),
		storage.Bookmark:   []byte(`{"type":"BOOKMARK","object":`),
		storage.ErrorEvent: []byte(`{"type":"ERROR","object":`),
	}
	frameSuffix = []byte("}\n")
)

// countSent makes the encoder count the frames sent in kube's watch
// event metrics, labelled with the watched group, version and resource
// as kube-apiserver labels them. The series are looked up once per
// watch, not per event.
func (f *frameEncoder) countSent(ctx context.Context, info RequestInfo) {
	f.events = metrics.WatchEvents.WithContext(ctx).WithLabelValues(info.Group, info.Version, info.Resource)
	f.sizes = metrics.WatchEventsSizes.WithContext(ctx).WithLabelValues(info.Group, info.Version, info.Resource)
}

// sent records one frame of n bytes written to the client.
func (f *frameEncoder) sent(n int) {
	if f.events != nil {
		f.events.Inc()
		f.sizes.Observe(float64(n))
	}
}

// contentType is the Content-Type of the watch response.
func (f *frameEncoder) contentType() string {
	if f.proto != nil {
		return mediaProtobufWatch
	}
	return mediaJSON
}

// encode returns the frame of ev: a newline-terminated JSON WatchEvent,
// or a protobuf WatchEvent message without its length prefix. The bytes
// are valid until the next call.
func (f *frameEncoder) encode(ev storage.Event) ([]byte, error) {
	prefix, ok := framePrefixes[ev.Type]
	if !ok {
		return nil, fmt.Errorf("handlers: unknown event type %q", ev.Type)
	}
	var obj []byte
	switch ev.Type {
	case storage.Bookmark:
		obj = f.bookmark(ev)
	case storage.ErrorEvent:
		obj = f.errorStatus(ev.Err)
	default:
		obj = ev.Object.Data
	}
	if f.convert != nil && ev.Type != storage.ErrorEvent {
		var err error
		if obj, err = f.convert(obj); err != nil {
			return nil, err
		}
	}
	if f.proto != nil {
		embedded, err := f.protoObject(ev, obj)
		if err != nil {
			return nil, err
		}
		return protoWatchEvent(string(ev.Type), embedded)
	}
	f.buf = append(append(append(f.buf[:0], prefix...), obj...), frameSuffix...)
	return f.buf, nil
}

// protoObject encodes the object of a protobuf frame: obj is its JSON
// (after any conversion), the Status for ERROR events. Stored objects
// sent as they are come from the shared cache, encoded once per event.
func (f *frameEncoder) protoObject(ev storage.Event, obj []byte) ([]byte, error) {
	c := protoCodecs()
	switch {
	case ev.Type == storage.ErrorEvent:
		var st api.Status
		if err := json.Unmarshal(obj, &st); err != nil {
			return nil, err
		}
		return c.status(st)
	case f.proto.as == asPartial:
		return c.partialFromJSON(f.proto.asAPIVersion(), asPartial, obj)
	case ev.Type == storage.Bookmark || f.convert != nil:
		// Bookmarks are made per watcher; nothing to share.
		return c.fromJSON(kindOf(f.t), obj)
	}
	return sharedProtoObjects.get(ev.Object, func() ([]byte, error) { return c.fromJSON(kindOf(f.t), obj) })
}

// write writes one frame for ev to a byte stream; protobuf frames are
// length-prefixed there.
func (f *frameEncoder) write(w io.Writer, ev storage.Event) error {
	frame, err := f.encode(ev)
	if err != nil {
		return err
	}
	if f.proto != nil {
		f.buf = appendLengthPrefix(f.buf[:0], frame)
		frame = f.buf
	}
	if _, err = w.Write(frame); err != nil {
		return err
	}
	f.sent(len(frame))
	return nil
}

// bookmark is an object of the watched kind carrying only its
// resourceVersion (and the initial-events-end annotation when it ends the
// initial events), as kube-apiserver sends.
func (f *frameEncoder) bookmark(ev storage.Event) []byte {
	var rev int64
	if ev.Object != nil {
		rev = ev.Object.Revision
	}
	meta := map[string]any{"resourceVersion": storage.FormatResourceVersion(rev), "creationTimestamp": nil}
	if ev.InitialEventsEnd {
		meta["annotations"] = map[string]string{api.InitialEventsEndAnnotation: "true"}
	}
	b, _ := json.Marshal(map[string]any{"kind": f.kind, "apiVersion": f.apiVersion, "metadata": meta})
	return b
}

// errorStatus is the Status of an ERROR frame for a watch failure, as the
// registry converts it (a compacted revision is 410 Expired).
func (f *frameEncoder) errorStatus(err error) []byte {
	err = registry.WatchEventError(f.gr, f.requestedRV, err)
	var st api.Status
	var carrier statusCarrier
	switch {
	case errors.As(err, &carrier):
		st = carrier.Status()
	case err == nil:
		st = api.NewInternalError(errors.New("watch ended with an unspecified error")).Status()
	default:
		st = api.NewInternalError(err).Status()
	}
	b, _ := json.Marshal(st)
	return b
}

// watchConversion returns the per-event conversion a watch's Accept
// header asks for, or nil. A Table watch carries its column definitions
// in the first frame only, as kube-apiserver sends it.
func watchConversion(t *registry.Type, out output, query url.Values) (func([]byte) ([]byte, error), error) {
	switch out.as {
	case asPartial:
		v := out.asAPIVersion()
		return func(obj []byte) ([]byte, error) { return encodePartialObject(v, obj) }, nil
	case asPartialList:
		// Watch events carry single objects.
		return nil, notAList(kindOf(t))
	case asTable:
		p, err := newTablePrinter(context.Background(), t, out, query)
		if err != nil {
			return nil, err
		}
		headers := true
		return func(obj []byte) ([]byte, error) {
			b, err := p.encodeObject(obj, headers)
			headers = false
			return b, err
		}, nil
	}
	return nil, nil
}
