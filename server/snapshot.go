package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/miniapi/miniapi/faults"
	"github.com/miniapi/miniapi/storage"
	clientv3 "go.etcd.io/etcd/client/v3"
	"golang.org/x/sync/errgroup"
)

// Snapshot is a server's whole stored state at one revision: every
// object of every type under its key prefix (custom resources and their
// CRDs, RBAC, the system namespaces, all of it), as etcd holds it.
// Snapshots are immutable and may be shared between goroutines.
type Snapshot struct {
	// Revision is the etcd revision the snapshot reflects.
	Revision int64
	kvs      []snapshotKV
}

type snapshotKV struct {
	key   string // without the server's prefix
	value []byte
}

// Len is the number of objects in the snapshot.
func (s *Snapshot) Len() int { return len(s.kvs) }

// Snapshot captures the server's stored state: one consistent read of
// every key under its prefix.
func (s *Server) Snapshot(ctx context.Context) (*Snapshot, error) {
	root := s.keyRoot()
	resp, err := s.client.Get(ctx, root, clientv3.WithPrefix())
	if err != nil {
		return nil, err
	}
	snap := &Snapshot{Revision: resp.Header.Revision, kvs: make([]snapshotKV, len(resp.Kvs))}
	for i, kv := range resp.Kvs {
		snap.kvs[i] = snapshotKV{key: string(kv.Key[len(root):]), value: kv.Value}
	}
	return snap, nil
}

// keyRoot is the prefix of every key the server writes, with its slash.
func (s *Server) keyRoot() string {
	root := s.cfg.EtcdPrefix
	if root == "" {
		root = storage.DefaultRoot
	}
	return root + "/"
}

// Bounds on one transaction, under the embedded member's defaults (128
// operations, 1.5 MiB a request).
const (
	txnOps   = 128
	txnBytes = 1 << 20
)

// loadWorkers is how many of load's transactions are in flight at once:
// they touch disjoint keys, and etcd commits concurrent ones together
// (one raft round each, not one per transaction).
const loadWorkers = 4

// load writes snap's objects under the server's prefix, deleting what
// is stored there and is not in snap, in transactions of at most txnOps
// operations and about txnBytes, loadWorkers at a time. Values already
// equal are not written. A running server's caches take each
// transaction as one change.
func (s *Server) load(ctx context.Context, snap *Snapshot) error {
	root := s.keyRoot()
	cur, err := s.client.Get(ctx, root, clientv3.WithPrefix())
	if err != nil {
		return err
	}
	want := make(map[string][]byte, len(snap.kvs))
	for _, kv := range snap.kvs {
		want[root+kv.key] = kv.value
	}
	var batches [][]clientv3.Op
	var batch []clientv3.Op
	size := 0
	add := func(op clientv3.Op, n int) {
		if len(batch) == txnOps || size+n > txnBytes && len(batch) > 0 {
			batches = append(batches, batch)
			batch, size = nil, 0
		}
		batch, size = append(batch, op), size+n
	}
	for _, kv := range cur.Kvs {
		key := string(kv.Key)
		if v, ok := want[key]; ok && bytes.Equal(v, kv.Value) {
			delete(want, key) // already as in the snapshot
			continue
		}
		if _, ok := want[key]; !ok {
			add(clientv3.OpDelete(key), len(key))
		}
	}
	for _, kv := range snap.kvs {
		key := root + kv.key
		if v, ok := want[key]; ok {
			add(clientv3.OpPut(key, string(v)), len(key)+len(v))
		}
	}
	if len(batch) > 0 {
		batches = append(batches, batch)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(loadWorkers)
	for _, b := range batches {
		g.Go(func() error {
			resp, err := s.client.Txn(gctx).Then(b...).Commit()
			if err == nil && !resp.Succeeded {
				err = errors.New("transaction not applied")
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("server: loading a snapshot: %w", err)
	}
	return nil
}

// Reset returns the running server to snap: what was written since is
// undone (objects created since deleted, changed ones rewritten as they
// were, deleted ones recreated, under new resourceVersions: etcd's
// revisions only go forward), the history before is compacted, and
// every open watch ends with 410 Expired, so clients list again, as
// after compaction.
func (s *Server) Reset(ctx context.Context, snap *Snapshot) error {
	if err := s.load(ctx, snap); err != nil {
		return err
	}
	if _, err := s.Compact(ctx); err != nil {
		return err
	}
	s.faults.SignalWatches(faults.WatchExpire)
	return nil
}
