package faults

import (
	"context"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// KV wraps kv so that its calls fail with etcd's "request timed out"
// while an etcdUnavailable rule is live: what a server sees when etcd
// has lost its leader or cannot keep up. Watches already open stay open
// (no writes reach etcd meanwhile, so they see nothing).
func (i *Injector) KV(kv clientv3.KV) clientv3.KV { return gatedKV{KV: kv, kv: kv, i: i} }

// gatedKV embeds the KV so that calls it does not know still work.
type gatedKV struct {
	clientv3.KV
	kv clientv3.KV
	i  *Injector
}

func (g gatedKV) Put(ctx context.Context, key, val string, opts ...clientv3.OpOption) (*clientv3.PutResponse, error) {
	if g.i.etcdUnavailable() {
		return nil, rpctypes.ErrTimeout
	}
	return g.kv.Put(ctx, key, val, opts...)
}

func (g gatedKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	if g.i.etcdUnavailable() {
		return nil, rpctypes.ErrTimeout
	}
	return g.kv.Get(ctx, key, opts...)
}

func (g gatedKV) GetStream(ctx context.Context, key string, opts ...clientv3.OpOption) (clientv3.GetStreamChan, error) {
	if g.i.etcdUnavailable() {
		return nil, rpctypes.ErrTimeout
	}
	return g.kv.GetStream(ctx, key, opts...)
}

func (g gatedKV) Delete(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.DeleteResponse, error) {
	if g.i.etcdUnavailable() {
		return nil, rpctypes.ErrTimeout
	}
	return g.kv.Delete(ctx, key, opts...)
}

func (g gatedKV) Compact(ctx context.Context, rev int64, opts ...clientv3.CompactOption) (*clientv3.CompactResponse, error) {
	if g.i.etcdUnavailable() {
		return nil, rpctypes.ErrTimeout
	}
	return g.kv.Compact(ctx, rev, opts...)
}

func (g gatedKV) Do(ctx context.Context, op clientv3.Op) (clientv3.OpResponse, error) {
	if g.i.etcdUnavailable() {
		return clientv3.OpResponse{}, rpctypes.ErrTimeout
	}
	return g.kv.Do(ctx, op)
}

func (g gatedKV) Txn(ctx context.Context) clientv3.Txn {
	return gatedTxn{Txn: g.kv.Txn(ctx), i: g.i}
}

// gatedTxn fails at Commit, where the call reaches etcd.
type gatedTxn struct {
	clientv3.Txn
	i *Injector
}

func (t gatedTxn) If(cs ...clientv3.Cmp) clientv3.Txn {
	return gatedTxn{Txn: t.Txn.If(cs...), i: t.i}
}

func (t gatedTxn) Then(ops ...clientv3.Op) clientv3.Txn {
	return gatedTxn{Txn: t.Txn.Then(ops...), i: t.i}
}

func (t gatedTxn) Else(ops ...clientv3.Op) clientv3.Txn {
	return gatedTxn{Txn: t.Txn.Else(ops...), i: t.i}
}

func (t gatedTxn) Commit() (*clientv3.TxnResponse, error) {
	if t.i.etcdUnavailable() {
		return nil, rpctypes.ErrTimeout
	}
	return t.Txn.Commit()
}
