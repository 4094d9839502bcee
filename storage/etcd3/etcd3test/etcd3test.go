// Package etcd3test starts throwaway embedded etcd members for tests of any
// package that needs real storage.
//
//	func TestSomething(t *testing.T) {
//		client := etcd3test.Start(t) // closed by t.Cleanup
//		store := etcd3.New(etcd3.Config{Client: client})
//		...
//		etcd3test.Compact(ctx, client, rev) // make old revisions unavailable
//	}
//
// Each member lives in t.TempDir() with fsync off, quiet logs and an
// ephemeral client port, so tests can run in parallel.
package etcd3test

import (
	"context"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/miniapi/miniapi/storage/etcd3"
)

// startTimeout bounds a test member's startup.
const startTimeout = 20 * time.Second

// Start starts an embedded etcd member for the test and returns its
// in-process client. t.Cleanup stops the member; the client must not be
// closed by the test.
func Start(t testing.TB) *clientv3.Client {
	t.Helper()
	return StartEmbedded(t).Client
}

// StartEmbedded is Start for tests that also need the member itself, e.g.
// its Endpoint for a loopback client.
func StartEmbedded(t testing.TB) *etcd3.Embedded {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	e, err := etcd3.StartEmbedded(ctx, etcd3.EmbeddedConfig{
		Dir:           t.TempDir(),
		UnsafeNoFsync: true,
		StartTimeout:  startTimeout,
	})
	if err != nil {
		t.Fatalf("etcd3test: %v", err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("etcd3test: close: %v", err)
		}
	})
	return e
}

// Compact compacts etcd's history up to rev and waits until the
// compaction is applied: afterwards reads and watches at revisions below
// rev fail with a Compacted error.
func Compact(ctx context.Context, client *clientv3.Client, rev int64) error {
	if _, err := client.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil {
		return fmt.Errorf("etcd3test: compact to %d: %w", rev, err)
	}
	return nil
}
