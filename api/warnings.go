package api

import (
	"context"
	"sync"
)

// Warnings collects the warnings a request produces, to be sent to the
// client as "Warning: 299 - ..." headers, as kube-apiserver does. A
// handler puts one in the request context; any layer below adds to it.
type Warnings struct {
	mu   sync.Mutex
	msgs []string
}

type warningsKey struct{}

// WithWarnings returns a context that collects warnings, and the
// collector.
func WithWarnings(ctx context.Context) (context.Context, *Warnings) {
	w := &Warnings{}
	return context.WithValue(ctx, warningsKey{}, w), w
}

// AddWarning records a warning for the request ctx belongs to; without a
// collector in ctx it does nothing. Repeated messages are recorded once.
func AddWarning(ctx context.Context, msg string) {
	w, ok := ctx.Value(warningsKey{}).(*Warnings)
	if !ok || msg == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range w.msgs {
		if m == msg {
			return
		}
	}
	w.msgs = append(w.msgs, msg)
}

// Messages returns the warnings recorded so far.
func (w *Warnings) Messages() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.msgs...)
}
