package server

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"

	"github.com/miniapi/miniapi/registry"
)

// settlePoll is how often WaitForControllers looks again.
const settlePoll = 10 * time.Millisecond

// WaitForControllers returns once the controllers running in this server
// have caught up with the writes it has answered: ours (namespace,
// garbage collector) have been told of every write and have nothing
// ready to do, kube-controller-manager's are built, their informers'
// handlers have been called with every write, and every work queue the
// server's components made is empty with no key being worked on; all
// of it twice in a row, settlePoll apart, with no write in between.
// Work delayed on purpose (a retry's back-off, a Job's activeDeadline, a
// resync) is not waited for. Other servers of the process (logical
// clusters) and their controllers do not delay the answer: each counts
// its own queues (package workqueues).
func (s *Server) WaitForControllers(ctx context.Context) error {
	return s.settle(ctx, false)
}

// Settle returns once everything the server has answered so far has
// gone everywhere it goes: every open watch has been sent every event up
// to the last write (written to the client's connection, for watches
// served over HTTP and WebSocket), and the controllers have caught up as
// WaitForControllers tells. What a client does with what it was sent
// (an informer's handlers still running) the server cannot know.
func (s *Server) Settle(ctx context.Context) error {
	return s.settle(ctx, true)
}

// WaitFor returns once every open watch has been sent every event up to
// resourceVersion rv that it asked for, rv being a revision this server
// answered (a write's resourceVersion). It does not wait for the
// controllers.
func (s *Server) WaitFor(ctx context.Context, rv int64) error {
	for {
		if watchesDelivered(s.reg.Snapshot(), rv) {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.Join(fmt.Errorf("server: watches have not been sent resourceVersion %d", rv), ctx.Err())
		case <-time.After(settlePoll):
		}
	}
}

// watchesDelivered reports whether every Store's watches have been sent
// their events up to upTo, or the Store's last write if that is older.
func watchesDelivered(snap *registry.Snapshot, upTo int64) bool {
	for _, res := range snap.Resources() {
		if !res.Store.Delivered(min(upTo, res.Store.LastWrite())) {
			return false
		}
	}
	return true
}

func (s *Server) settle(ctx context.Context, watches bool) error {
	what := "controllers have not caught up"
	if watches {
		what = "the server has not settled"
	}
	if k := s.kubeControllers; k != nil {
		select {
		case <-k.built:
		case <-ctx.Done():
			return errors.Join(errors.New("server: kube's controllers are not built"), ctx.Err())
		}
	}
	var last settleState
	ready := false
	for {
		cur, ok := s.settleState()
		if ok && watches {
			ok = watchesDelivered(s.reg.Snapshot(), math.MaxInt64)
		}
		if ok && ready && cur == last {
			return nil
		}
		last, ready = cur, ok
		select {
		case <-ctx.Done():
			return errors.Join(errors.New("server: "+what), ctx.Err())
		case <-time.After(settlePoll):
		}
	}
}

// settleState is what must not change between two looks for the
// controllers to be settled.
type settleState struct {
	lastWrite    int64  // the newest revision any Store wrote
	handlerCalls uint64 // informer handler calls so far
	queueAdds    uint64 // keys added to work queues so far
}

// settleState reports the state now and whether everything is caught up
// in it.
func (s *Server) settleState() (settleState, bool) {
	var st settleState
	snap := s.reg.Snapshot()
	for _, res := range snap.Resources() {
		st.lastWrite = max(st.lastWrite, res.Store.LastWrite())
	}
	ok := true
	for _, c := range s.controllers {
		if !c.Idle() {
			ok = false
		}
	}
	if s.informers != nil {
		calls, caught := s.informers.caughtUp(snap)
		st.handlerCalls = calls
		ok = ok && caught
	}
	adds, idle := s.queues.Idle()
	st.queueAdds = adds
	return st, ok && idle
}

// trackedInformer is a shared informer whose event handlers are watched,
// so WaitForControllers can tell whether they have been called with
// every write.
type trackedInformer struct {
	cache.SharedIndexInformer
	obj runtime.Object
	// factory holds back handlers added while kube's controllers are
	// built (see informerFactory.holdHandlers).
	factory *informerFactory

	mu       sync.Mutex
	handlers []*trackedHandler
}

// AddEventHandler adds handler, tracked.
func (t *trackedInformer) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	th := &trackedHandler{inner: h, inf: t, hold: t.factory.currentHold()}
	reg, err := t.SharedIndexInformer.AddEventHandler(th)
	return t.added(th, reg, err)
}

// AddEventHandlerWithResyncPeriod adds handler, tracked.
func (t *trackedInformer) AddEventHandlerWithResyncPeriod(h cache.ResourceEventHandler, period time.Duration) (cache.ResourceEventHandlerRegistration, error) {
	th := &trackedHandler{inner: h, inf: t, hold: t.factory.currentHold()}
	reg, err := t.SharedIndexInformer.AddEventHandlerWithResyncPeriod(th, period)
	return t.added(th, reg, err)
}

// AddEventHandlerWithOptions adds handler, tracked.
func (t *trackedInformer) AddEventHandlerWithOptions(h cache.ResourceEventHandler, opts cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	th := &trackedHandler{inner: h, inf: t, hold: t.factory.currentHold()}
	reg, err := t.SharedIndexInformer.AddEventHandlerWithOptions(th, opts)
	return t.added(th, reg, err)
}

func (t *trackedInformer) added(th *trackedHandler, reg cache.ResourceEventHandlerRegistration, err error) (cache.ResourceEventHandlerRegistration, error) {
	if err != nil {
		return reg, err
	}
	th.reg = reg
	t.mu.Lock()
	t.handlers = append(t.handlers, th)
	t.mu.Unlock()
	return reg, nil
}

// RemoveEventHandler removes a handler and stops tracking it.
func (t *trackedInformer) RemoveEventHandler(reg cache.ResourceEventHandlerRegistration) error {
	t.mu.Lock()
	for i, th := range t.handlers {
		if th.reg == reg {
			t.handlers = append(t.handlers[:i:i], t.handlers[i+1:]...)
			break
		}
	}
	t.mu.Unlock()
	return t.SharedIndexInformer.RemoveEventHandler(reg)
}

// caughtUp reports whether every handler has been called with every
// write up to target (a revision), and how many calls they have had.
func (t *trackedInformer) caughtUp(target int64) (calls uint64, ok bool) {
	t.mu.Lock()
	handlers := t.handlers
	t.mu.Unlock()
	ok = true
	storeRV := rvInt(t.GetStore().LastStoreSyncResourceVersion())
	for _, th := range handlers {
		calls += th.calls.Load()
		if !th.caughtUp(target, storeRV) {
			ok = false
		}
	}
	return calls, ok
}

// trackedHandler counts the calls of one event handler and the newest
// revision it has been called with.
type trackedHandler struct {
	inner cache.ResourceEventHandler
	inf   *trackedInformer
	reg   cache.ResourceEventHandlerRegistration
	// hold, when set, closes once the handler may be called: a
	// controller's constructor adds its handlers to informers that run
	// already, then finishes setting itself up, which kube's contract
	// (construct every controller, then start the informers) allows.
	hold <-chan struct{}

	calls    atomic.Uint64
	inFlight atomic.Int32
	// handled is the newest revision a call has carried.
	handled atomic.Int64
	// floor is the informer's revision when its first list had been
	// handed to the handler: writes at or below it that no object
	// carries any more (deletes before the list) need no call.
	floor atomic.Int64
}

func (h *trackedHandler) caughtUp(target, storeRV int64) bool {
	if h.reg == nil || !h.reg.HasSynced() || h.inFlight.Load() != 0 {
		return false
	}
	if h.floor.Load() == 0 && h.calls.Load() == 0 {
		// Synced with nothing listed: the list's revision is the
		// store's, unless events have come since; WaitForControllers'
		// second look covers those.
		h.floor.CompareAndSwap(0, storeRV)
	}
	return max(h.handled.Load(), h.floor.Load()) >= target
}

func (h *trackedHandler) begin(obj any) {
	h.calls.Add(1)
	h.inFlight.Add(1)
	h.note(obj)
}

func (h *trackedHandler) end() { h.inFlight.Add(-1) }

// note records obj's revision; a tombstone from a relist carries an
// older one, so it counts as the informer's.
func (h *trackedHandler) note(obj any) {
	rv := int64(0)
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		rv = rvInt(h.inf.GetStore().LastStoreSyncResourceVersion())
		obj = d.Obj
	}
	if m, err := meta.Accessor(obj); err == nil {
		rv = max(rv, rvInt(m.GetResourceVersion()))
	}
	for {
		cur := h.handled.Load()
		if rv <= cur || h.handled.CompareAndSwap(cur, rv) {
			return
		}
	}
}

// OnAdd passes the call on, counted.
func (h *trackedHandler) OnAdd(obj any, isInInitialList bool) {
	h.begin(obj)
	defer h.end()
	h.wait()
	if isInInitialList {
		// Everything up to the list's revision is in the list.
		h.floor.Store(max(h.floor.Load(), rvInt(h.inf.LastSyncResourceVersion())))
	}
	h.inner.OnAdd(obj, isInInitialList)
}

// OnUpdate passes the call on, counted.
func (h *trackedHandler) OnUpdate(oldObj, newObj any) {
	h.begin(newObj)
	defer h.end()
	h.wait()
	h.inner.OnUpdate(oldObj, newObj)
}

// OnDelete passes the call on, counted.
func (h *trackedHandler) OnDelete(obj any) {
	h.begin(obj)
	defer h.end()
	h.wait()
	h.inner.OnDelete(obj)
}

// wait blocks until the handler may be called.
func (h *trackedHandler) wait() {
	if h.hold != nil {
		<-h.hold
	}
}

func rvInt(rv string) int64 {
	n, _ := strconv.ParseInt(rv, 10, 64)
	return n
}

// caughtUp reports whether every tracked informer's handlers have been
// called with the last write to its resource, and how many handler
// calls there have been.
func (f *informerFactory) caughtUp(snap *registry.Snapshot) (calls uint64, ok bool) {
	f.mu.Lock()
	var infs []*trackedInformer
	for _, inf := range f.informers {
		if t, isTracked := inf.(*trackedInformer); isTracked {
			infs = append(infs, t)
		}
	}
	f.mu.Unlock()
	ok = true
	for _, t := range infs {
		n, caught := t.caughtUp(lastWriteOf(snap, t.obj))
		calls += n
		ok = ok && caught
	}
	return calls, ok
}

// lastWriteOf is the newest revision written to the objects of obj's
// kind, in any group and version that stores them.
func lastWriteOf(snap *registry.Snapshot, obj runtime.Object) int64 {
	kinds, _, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil || len(kinds) == 0 {
		return 0
	}
	var stored []*registry.Resource
	for _, res := range snap.Resources() {
		if res.Type.Group == kinds[0].Group && res.Type.Kind == kinds[0].Kind {
			stored = append(stored, res)
		}
	}
	var last int64
	for _, want := range stored {
		sr := want.Type.StorageResource()
		for _, res := range snap.Resources() {
			if res.Type.StorageResource() == sr && res.Type.Kind == want.Type.Kind {
				last = max(last, res.Store.LastWrite())
			}
		}
	}
	return last
}
