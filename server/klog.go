package server

import (
	"context"
	"log/slog"
	"sync"

	"k8s.io/klog/v2"
)

// klogOnce routes, once per process, the logs of Kubernetes' own code
// (its allocators and controllers log through klog) into the first
// server's logger, at debug level: they are that code's chatter, not
// miniapi's, and would otherwise go to standard error unformatted.
var klogOnce sync.Once

func routeKlog(log *slog.Logger) {
	klogOnce.Do(func() { klog.SetSlogLogger(slog.New(debugOnly{log.Handler()})) })
}

// debugOnly hands every record on at debug level.
type debugOnly struct{ h slog.Handler }

func (d debugOnly) Enabled(ctx context.Context, _ slog.Level) bool {
	return d.h.Enabled(ctx, slog.LevelDebug)
}

// Handle drops the record unless debug logs are on: klog hands errors
// on without asking Enabled first.
func (d debugOnly) Handle(ctx context.Context, r slog.Record) error {
	if !d.h.Enabled(ctx, slog.LevelDebug) {
		return nil
	}
	r.Level = slog.LevelDebug
	return d.h.Handle(ctx, r)
}

func (d debugOnly) WithAttrs(attrs []slog.Attr) slog.Handler { return debugOnly{d.h.WithAttrs(attrs)} }
func (d debugOnly) WithGroup(name string) slog.Handler       { return debugOnly{d.h.WithGroup(name)} }
