package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// streamTarget is a server whose watch streams the fan-out client reads:
// miniapi or the raw-stream baseline. Both speak the same wire format:
// one newline-terminated JSON frame per event carrying the object's
// resourceVersion.
type streamTarget interface {
	// watchURL is the URL of a watch that streams the events after
	// revision from.
	watchURL(from int64) string
}

// recv is one event as a watcher received it: its resourceVersion and the
// harness time it arrived.
type recv struct{ rv, at int64 }

// watcher is one watch client on its own HTTP/1.1 connection. Its goroutine
// reads frames and records every event; when the server ends the stream
// (as miniapi does to a watcher that cannot keep up) it re-watches from the
// last resourceVersion it saw, as client-go's reflector does.
type watcher struct {
	target streamTarget
	client *http.Client

	lastRV     atomic.Int64 // highest resourceVersion received
	rewatches  atomic.Int64 // streams the server ended that were re-opened
	duplicates atomic.Int64 // events at or below lastRV
	errFrames  atomic.Int64 // ERROR frames and failed re-watches

	// mu protects recs, the events received since the last take.
	mu   sync.Mutex
	recs []recv

	// ctx ends the watch (every stream's request uses it); done is closed
	// when the goroutine has exited.
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
}

// openWatchers opens n watches on target from revision from, 32 at a
// time, and returns once every stream has its response headers: from then
// on every event after from reaches a watcher's recorder.
func openWatchers(ctx context.Context, target streamTarget, client *http.Client, n int, from int64) ([]*watcher, error) {
	ws := make([]*watcher, n)
	err := parallel(ctx, n, 32, func(_ context.Context, i int) error {
		wctx, cancel := context.WithCancel(context.Background())
		w := &watcher{target: target, client: client, ctx: wctx, cancel: cancel, done: make(chan struct{})}
		w.lastRV.Store(from)
		body, err := w.connect(from)
		if err != nil {
			cancel()
			return fmt.Errorf("watcher %d: %w", i, err)
		}
		ws[i] = w
		go w.run(body)
		return nil
	})
	if err != nil {
		closeWatchers(ws)
		return nil, err
	}
	return ws, nil
}

// closeWatchers ends every watch and waits for the goroutines to exit.
func closeWatchers(ws []*watcher) {
	for _, w := range ws {
		if w != nil {
			w.cancel()
		}
	}
	for _, w := range ws {
		if w != nil {
			<-w.done
		}
	}
}

// connect opens the stream from revision from and returns its body.
func (w *watcher) connect(from int64) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(w.ctx, http.MethodGet, w.target.watchURL(from), nil)
	if err != nil {
		return nil, err
	}
	resp, err := w.client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return nil, fmt.Errorf("watch: %d: %s", resp.StatusCode, b)
	}
	return resp.Body, nil
}

// run reads body until the watch is stopped, re-watching from the last
// resourceVersion received when the server ends a stream.
func (w *watcher) run(body io.ReadCloser) {
	defer close(w.done)
	br := bufio.NewReaderSize(body, 16<<10)
	for {
		_ = w.read(br) // returns when the stream ends, for whatever reason
		body.Close()
		if w.ctx.Err() != nil {
			return
		}
		// The server ended the stream. Bounded retries; a watcher that
		// cannot re-watch gives up and its events show as missing.
		var err error
		for try := range 20 {
			if body, err = w.connect(w.lastRV.Load()); err == nil || w.ctx.Err() != nil {
				break
			}
			select {
			case <-w.ctx.Done():
			case <-time.After(time.Duration(try+1) * 10 * time.Millisecond):
			}
		}
		if w.ctx.Err() != nil {
			return
		}
		if err != nil {
			w.errFrames.Add(1)
			<-w.ctx.Done()
			return
		}
		w.rewatches.Add(1)
		br.Reset(body)
	}
}

// read consumes frames until the stream ends.
func (w *watcher) read(br *bufio.Reader) error {
	var big []byte
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A frame larger than the buffer: gather it.
			big = append(big[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				big = append(big, line...)
			}
			line = big
		}
		if err != nil {
			return err
		}
		at := now()
		switch frameType(line) {
		case "BOOKMARK":
			continue
		case "ERROR":
			w.errFrames.Add(1)
			return errors.New("watch: ERROR frame")
		}
		rv, err := parseRV(line)
		if err != nil {
			return err
		}
		if rv <= w.lastRV.Load() {
			w.duplicates.Add(1)
			continue
		}
		w.mu.Lock()
		w.recs = append(w.recs, recv{rv: rv, at: at})
		w.mu.Unlock()
		w.lastRV.Store(rv)
	}
}

// take returns the events received since the last take.
func (w *watcher) take() []recv {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.recs
	w.recs = nil
	return r
}

var typePrefix = []byte(`{"type":"`)

// frameType returns the type of a watch frame.
func frameType(line []byte) string {
	rest, ok := bytes.CutPrefix(line, typePrefix)
	if !ok {
		return ""
	}
	i := bytes.IndexByte(rest, '"')
	if i < 0 {
		return ""
	}
	return string(rest[:i])
}
