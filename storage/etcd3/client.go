package etcd3

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// DefaultDialTimeout bounds the first connection to an external cluster
// when ClientConfig.DialTimeout is zero.
const DefaultDialTimeout = 20 * time.Second

// ClientConfig configures a client of an external etcd cluster, as
// kube-apiserver's --etcd-servers, --etcd-certfile, --etcd-keyfile and
// --etcd-cafile do.
type ClientConfig struct {
	// Endpoints are the cluster's client URLs, e.g.
	// https://10.0.0.1:2379. Required.
	Endpoints []string
	// CertFile and KeyFile hold the client certificate and key presented
	// to etcd; both or neither.
	CertFile, KeyFile string
	// CAFile holds the CA bundle that verifies etcd's serving
	// certificate; empty uses the system roots (for https endpoints).
	CAFile string
	// DialTimeout bounds establishing the first connection; zero means
	// DefaultDialTimeout.
	DialTimeout time.Duration
	// Logger receives the client's log output. Nil discards it.
	Logger *slog.Logger
}

// NewClient connects to an external etcd cluster. The caller closes the
// client.
func NewClient(cfg ClientConfig) (*clientv3.Client, error) {
	if len(cfg.Endpoints) == 0 {
		return nil, errors.New("etcd3: no etcd endpoints")
	}
	if (cfg.CertFile == "") != (cfg.KeyFile == "") {
		return nil, errors.New("etcd3: a client certificate needs both a cert file and a key file")
	}
	cc := clientv3.Config{
		Endpoints:   cfg.Endpoints,
		DialTimeout: cfg.DialTimeout,
		Logger:      zap.NewNop(),
		// Keepalives notice a dead member behind an idle watch.
		DialKeepAliveTime:    30 * time.Second,
		DialKeepAliveTimeout: 10 * time.Second,
	}
	if cc.DialTimeout <= 0 {
		cc.DialTimeout = DefaultDialTimeout
	}
	if cfg.Logger != nil {
		cc.Logger = zap.New(newSlogCore(cfg.Logger.Handler()))
	}
	if cfg.CertFile != "" || cfg.CAFile != "" {
		info := transport.TLSInfo{CertFile: cfg.CertFile, KeyFile: cfg.KeyFile, TrustedCAFile: cfg.CAFile}
		tlsCfg, err := info.ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("etcd3: client TLS: %w", err)
		}
		cc.TLS = tlsCfg
	}
	c, err := clientv3.New(cc)
	if err != nil {
		return nil, fmt.Errorf("etcd3: connect to %v: %w", cfg.Endpoints, err)
	}
	return c, nil
}

// readyTimeout bounds Ready when ctx has no earlier deadline.
const readyTimeout = 2 * time.Second

// Ready reports whether etcd answers a linearizable read, which needs a
// leader and a quorum: a cheap check for /readyz.
func Ready(ctx context.Context, client *clientv3.Client) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	// Do, not Get: a client's Get may be serializable (SingleMemberReads).
	if _, err := client.Do(ctx, clientv3.OpGet("/", clientv3.WithCountOnly())); err != nil {
		return fmt.Errorf("etcd3: not ready: %w", err)
	}
	return nil
}

// SingleMemberReads returns kv with every Get served from the member's
// applied state (serializable) instead of after a ReadIndex round
// (linearizable): about a fifth of the cost in process (go test -bench
// EmbeddedClient ./storage/etcd3), and the cacher's consistent reads ask
// the current revision this way on every list and get. Use it only on a
// client of a member that is the whole cluster: such a member answers a
// write once it has applied it, so its applied state holds every
// acknowledged write, and a serializable read is as linearizable. On a
// cluster of several members (--etcd-servers) a member's applied state
// can lag the quorum's. Do is passed through unchanged, so Ready, which
// checks a leader and a quorum, still reads linearizably.
func SingleMemberReads(kv clientv3.KV) clientv3.KV { return serializableKV{kv} }

type serializableKV struct{ clientv3.KV }

func (kv serializableKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	return kv.KV.Get(ctx, key, append(opts[:len(opts):len(opts)], clientv3.WithSerializable())...)
}

// GuardedKV wraps kv so that each request first asks refuse, with the
// request's context, and fails with its error instead of reaching etcd;
// a transaction asks at Commit, where it reaches etcd. Calls the
// wrapper does not know pass through.
func GuardedKV(kv clientv3.KV, refuse func(context.Context) error) clientv3.KV {
	return guardedKV{KV: kv, refuse: refuse}
}

// ended refuses a request whose context has already ended, as a gRPC
// client does before sending it. The in-process client hands such a
// request to raft even then, and raft may still commit it (its Propose,
// and etcd's wait for the result, each choose at random between the
// request and the ended context): a write whose deadline had passed
// could be stored and yet answered as timed out.
func ended(ctx context.Context) error { return ctx.Err() }

type guardedKV struct {
	clientv3.KV
	refuse func(context.Context) error
}

func (kv guardedKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	if err := kv.refuse(ctx); err != nil {
		return nil, err
	}
	return kv.KV.Get(ctx, key, opts...)
}

func (kv guardedKV) GetStream(ctx context.Context, key string, opts ...clientv3.OpOption) (clientv3.GetStreamChan, error) {
	if err := kv.refuse(ctx); err != nil {
		return nil, err
	}
	return kv.KV.GetStream(ctx, key, opts...)
}

func (kv guardedKV) Put(ctx context.Context, key, val string, opts ...clientv3.OpOption) (*clientv3.PutResponse, error) {
	if err := kv.refuse(ctx); err != nil {
		return nil, err
	}
	return kv.KV.Put(ctx, key, val, opts...)
}

func (kv guardedKV) Delete(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.DeleteResponse, error) {
	if err := kv.refuse(ctx); err != nil {
		return nil, err
	}
	return kv.KV.Delete(ctx, key, opts...)
}

func (kv guardedKV) Compact(ctx context.Context, rev int64, opts ...clientv3.CompactOption) (*clientv3.CompactResponse, error) {
	if err := kv.refuse(ctx); err != nil {
		return nil, err
	}
	return kv.KV.Compact(ctx, rev, opts...)
}

func (kv guardedKV) Do(ctx context.Context, op clientv3.Op) (clientv3.OpResponse, error) {
	if err := kv.refuse(ctx); err != nil {
		return clientv3.OpResponse{}, err
	}
	return kv.KV.Do(ctx, op)
}

func (kv guardedKV) Txn(ctx context.Context) clientv3.Txn {
	return guardedTxn{Txn: kv.KV.Txn(ctx), ctx: ctx, refuse: kv.refuse}
}

// guardedTxn is guardedKV's transaction: Commit asks refuse with the
// context the transaction was made with.
type guardedTxn struct {
	clientv3.Txn
	ctx    context.Context
	refuse func(context.Context) error
}

func (t guardedTxn) If(cs ...clientv3.Cmp) clientv3.Txn {
	return guardedTxn{Txn: t.Txn.If(cs...), ctx: t.ctx, refuse: t.refuse}
}

func (t guardedTxn) Then(ops ...clientv3.Op) clientv3.Txn {
	return guardedTxn{Txn: t.Txn.Then(ops...), ctx: t.ctx, refuse: t.refuse}
}

func (t guardedTxn) Else(ops ...clientv3.Op) clientv3.Txn {
	return guardedTxn{Txn: t.Txn.Else(ops...), ctx: t.ctx, refuse: t.refuse}
}

func (t guardedTxn) Commit() (*clientv3.TxnResponse, error) {
	if err := t.refuse(t.ctx); err != nil {
		return nil, err
	}
	return t.Txn.Commit()
}
