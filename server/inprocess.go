package server

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
)

// inProcess is an http.RoundTripper that serves each request with the
// server's own handler in the same process: the server's components
// (RBAC informers, the bootstrap policy, kube's controllers) use client-go
// as any client does, through the whole handler chain (authentication,
// authorization, negotiation), without TLS, sockets or HTTP framing.
// Streaming answers (watches) arrive as the handler flushes them; closing
// the response body ends the request as a client disconnecting does.
type inProcess struct {
	// mu protects handler and closed; running counts the handler
	// goroutines.
	mu      sync.Mutex
	handler http.Handler
	closed  bool
	running sync.WaitGroup
	// started closes when the transport serves, or is closed without
	// having served (see waitStarted).
	started     chan struct{}
	startedOnce sync.Once
}

func newInProcess() *inProcess { return &inProcess{started: make(chan struct{})} }

// waitStarted returns a channel closed once requests are served, or
// refused for good: for the few clients that read once at start and
// then only on a slow timer, where a refusal would cost them a period.
func (t *inProcess) waitStarted() <-chan struct{} { return t.started }

var (
	// errShutDown answers the server's own clients once it has shut down.
	errShutDown = errors.New("server: shut down")
	// errNotServing answers them before the handler is built (admission
	// plugins' informers and discovery may start early); they retry.
	errNotServing = errors.New("server: not serving yet")
)

// serve makes the transport serve requests with h.
func (t *inProcess) serve(h http.Handler) {
	t.mu.Lock()
	t.handler = h
	t.mu.Unlock()
	t.startedOnce.Do(func() { close(t.started) })
}

// close refuses further requests and waits for the running ones, as
// http.Server.Shutdown does for remote clients: kube's controllers do not
// always wait for their workers (the flow-control config controller's
// status writes), and none may reach storage once it is closed.
func (t *inProcess) close() {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	t.startedOnce.Do(func() { close(t.started) })
	t.running.Wait()
}

// RoundTrip runs the handler on its own goroutine, which ends when the
// handler returns: when its answer is complete, or when the caller closes
// the body or cancels the request's context, as for a remote client.
func (t *inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, errShutDown
	}
	handler := t.handler
	if handler == nil {
		t.mu.Unlock()
		return nil, errNotServing
	}
	t.running.Add(1)
	t.mu.Unlock()
	ctx, cancel := context.WithCancel(req.Context())
	r := req.Clone(ctx)
	r.RequestURI = req.URL.RequestURI()
	r.RemoteAddr = "127.0.0.1:0"
	if r.Host == "" {
		r.Host = req.URL.Host
	}
	if r.Body == nil {
		r.Body = http.NoBody
	}
	pr, pw := io.Pipe()
	w := &pipeResponse{header: http.Header{}, body: pw, started: make(chan struct{})}
	go func() {
		defer t.running.Done()
		defer func() {
			// A handler aborts an answer (http.ErrAbortHandler) as
			// net/http's server allows; anything else is a bug that
			// must not pass silently.
			if p := recover(); p != nil && p != http.ErrAbortHandler {
				panic(p)
			}
			w.start(http.StatusOK)
			pw.Close()
		}()
		handler.ServeHTTP(w, r)
	}()
	select {
	case <-w.started:
	case <-ctx.Done():
		// The caller gave up before any answer; the handler sees the
		// same context and returns.
		pr.CloseWithError(ctx.Err())
		cancel()
		return nil, ctx.Err()
	}
	return &http.Response{
		Status:        http.StatusText(w.code),
		StatusCode:    w.code,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        w.sent,
		Body:          &cancelOnClose{ReadCloser: pr, cancel: cancel},
		ContentLength: -1,
		Request:       req,
	}, nil
}

// pipeResponse is the handler's side: headers go out with the first
// write or WriteHeader, the body through the pipe.
type pipeResponse struct {
	header  http.Header
	body    *io.PipeWriter
	once    sync.Once
	started chan struct{}
	code    int
	sent    http.Header
}

func (w *pipeResponse) Header() http.Header { return w.header }

func (w *pipeResponse) WriteHeader(code int) {
	if code >= 100 && code < 200 {
		return // interim answers are not passed on
	}
	w.start(code)
}

func (w *pipeResponse) start(code int) {
	w.once.Do(func() {
		w.code, w.sent = code, w.header.Clone()
		close(w.started)
	})
}

func (w *pipeResponse) Write(p []byte) (int, error) {
	w.start(http.StatusOK)
	return w.body.Write(p)
}

// Flush has nothing to do: every write already reached the reader. It
// exists so handlers that flush (watches) find a Flusher.
func (w *pipeResponse) Flush() { w.start(http.StatusOK) }

// cancelOnClose ends the request when the caller closes the body.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	c.cancel()
	return c.ReadCloser.Close()
}
