package miniapitest

import (
	"context"
	"testing"

	"github.com/miniapi/miniapi/server"
)

// Snapshot is an environment's whole stored state at one moment: every
// object, custom resources and their CRDs included. It is immutable: a
// TestMain can build a fixture once, snapshot it, and hand the snapshot
// to every test, in parallel.
type Snapshot = server.Snapshot

// Snapshot captures the environment's stored state now.
func (e *Env) Snapshot(ctx context.Context) (*Snapshot, error) {
	return e.Server.Snapshot(ctx)
}

// Reset returns the running environment to snap, as a relist would tell
// its clients: objects written since are put back as they were (under
// new resourceVersions: etcd's only go forward), objects created since
// are deleted, and every open watch is sent 410 Expired and ends, so
// informers list again and see the snapshot's state. Controllers keep
// running and act on what changed.
func (e *Env) Reset(ctx context.Context, snap *Snapshot) error {
	return e.Server.Reset(ctx, snap)
}

// Fork starts a new environment, as Start does, whose storage begins as
// snap: the same objects with the same names, UIDs, contents and CRDs
// (served before Fork returns), under resourceVersions of its own. The
// source environment may have stopped.
func Fork(t testing.TB, snap *Snapshot, opts ...Option) *Env {
	t.Helper()
	return Start(t, append(opts, func(o *options) { o.seed = snap })...)
}
