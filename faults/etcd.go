package faults

import (
	"context"

	"github.com/miniapi/miniapi/storage/etcd3"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// KV wraps kv so that its calls fail with etcd's "request timed out"
// while an etcdUnavailable rule is live: what a server sees when etcd
// has lost its leader or cannot keep up. Watches already open stay open
// (no writes reach etcd meanwhile, so they see nothing); a transaction
// fails at Commit, where it reaches etcd.
func (i *Injector) KV(kv clientv3.KV) clientv3.KV {
	return etcd3.GuardedKV(kv, func(context.Context) error {
		if i.etcdUnavailable() {
			return rpctypes.ErrTimeout
		}
		return nil
	})
}
