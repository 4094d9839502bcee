package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miniapi/miniapi/builtin"
	"github.com/miniapi/miniapi/storage/etcd3"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/namespace"
)

// SharedEtcd is one embedded etcd member that several servers of a
// process use at once, each under a key namespace of its own
// (Config.Etcd): a logical cluster. Each server keeps its own registry,
// CRDs, caches, controllers, listener and credentials; they share the
// member's goroutines, memory and start-up, which is what makes a
// cluster per parallel test cheap. A server sees only its own keys: the
// etcd client it is given rewrites every key, range and watch into its
// namespace (etcd's namespace package, and prefixWatcher; its Stores
// watch through the member's client and cut the namespace off
// themselves), so nothing one cluster stores is visible to another.
//
// Revisions are the member's, shared: a cluster's resourceVersions grow
// but are not consecutive, as they are not on a kube-apiserver whose
// etcd other clients write to.
type SharedEtcd struct {
	embedded *etcd3.Embedded
	// next numbers the namespaces handed out.
	next atomic.Uint64
	// starts admits servers' starts a few at a time (see admitStart).
	starts chan struct{}
	// openAPI builds the built-in kinds' OpenAPI definitions for every
	// cluster of the member, keeping them between builds.
	openAPI *builtin.OpenAPI
	// templates are the bootstrap states of the first clusters started,
	// by bootstrapKey (see template).
	templates sync.Map // string → *Snapshot
	// compactions tells the serving clusters of the member's compactions.
	compactions compactions
	// stopCompactor ends the compactor, compactorDone once it has.
	stopCompactor context.CancelFunc
	compactorDone chan struct{}
}

// SharedEtcdConfig configures StartSharedEtcd.
type SharedEtcdConfig struct {
	// Dir holds the member's data. Required.
	Dir string
	// UnsafeNoFsync skips fsync (tests, throwaway servers).
	UnsafeNoFsync bool
	// Logger receives etcd's own log output; nil discards it.
	Logger *slog.Logger
	// CompactionInterval is how often the member's history is compacted;
	// zero means DefaultCompactionInterval.
	CompactionInterval time.Duration
}

// StartSharedEtcd starts an embedded member for logical clusters. It
// compacts its history every CompactionInterval, keeping that
// much, and tells the clusters' caches (a logical cluster runs no
// compactor of its own: see Server.Compact). The caller closes it after
// the last server using it has shut down.
func StartSharedEtcd(ctx context.Context, cfg SharedEtcdConfig) (*SharedEtcd, error) {
	if cfg.Dir == "" {
		return nil, errors.New("server: a data directory is required for the shared etcd")
	}
	e, err := etcd3.StartEmbedded(ctx, etcd3.EmbeddedConfig{
		Dir: cfg.Dir, UnsafeNoFsync: cfg.UnsafeNoFsync, Logger: cfg.Logger,
		NoClientListener: true,
	})
	if err != nil {
		return nil, err
	}
	se := &SharedEtcd{
		embedded: e, starts: make(chan struct{}, max(2, runtime.GOMAXPROCS(0))),
		openAPI: &builtin.OpenAPI{Keep: true}, compactorDone: make(chan struct{}),
	}
	cctx, stop := context.WithCancel(context.Background())
	se.stopCompactor = stop
	interval := cfg.CompactionInterval
	if interval <= 0 {
		interval = DefaultCompactionInterval
	}
	c := &compactor{client: e.Client, interval: interval, compacted: se.compactions.compacted,
		onError: func(err error) {
			if cfg.Logger != nil {
				cfg.Logger.Warn("etcd compaction failed", "err", err)
			}
		}}
	go func() {
		defer close(se.compactorDone)
		c.run(cctx)
	}()
	return se, nil
}

// admitStart waits until fewer than GOMAXPROCS (at least 2) servers are
// starting on the member, and returns the call that ends this one's
// start. A start is CPU work and a few hundred writes; 200 at once on
// two cores took etcd past its request timeout (measured: 189 of 200
// starts failed), where queued they all pass.
func (e *SharedEtcd) admitStart(ctx context.Context) (func(), error) {
	select {
	case e.starts <- struct{}{}:
		return func() { <-e.starts }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("server: waiting for other logical clusters to start: %w", ctx.Err())
	}
}

// Close stops the member. Servers still using it fail their requests.
func (e *SharedEtcd) Close() error {
	e.stopCompactor()
	<-e.compactorDone
	return e.embedded.Close()
}

// newNamespace hands out the key namespace of a new logical cluster:
// "/clusters/N", never reused in this member's life, so a cluster that
// starts after another stopped sees none of its keys even if they were
// not all deleted.
func (e *SharedEtcd) newNamespace() string {
	return "/clusters/" + strconv.FormatUint(e.next.Add(1), 10)
}

// client is a client of the member that sees only the keys under ns,
// with their namespace cut off. It has no connection of its own and is
// never closed: closing it would close the shared watcher under it. Its
// watches end with their contexts.
func (e *SharedEtcd) client(ns string) *clientv3.Client {
	shared := e.embedded.Client
	c := clientv3.NewCtxClient(context.Background())
	c.KV = namespace.NewKV(shared.KV, ns)
	c.Watcher = prefixWatcher{Watcher: shared.Watcher, prefix: ns}
	c.Lease = namespace.NewLease(shared.Lease, ns)
	c.Cluster, c.Maintenance, c.Auth = shared.Cluster, shared.Maintenance, shared.Auth
	return c
}

// template is the stored state a logical cluster configured as key has
// once its own bootstrap has run (system namespaces and objects, RBAC
// policy, flow control configuration, APIServices), or nil if no
// cluster so configured has started yet. A cluster that starts from it
// finds the bootstrap done and writes nothing: two hundred writes fewer,
// most of a start. Its objects keep the first cluster's UIDs and
// timestamps, as a restored backup would.
func (e *SharedEtcd) template(key string) *Snapshot {
	if v, ok := e.templates.Load(key); ok {
		return v.(*Snapshot)
	}
	return nil
}

// setTemplate records the bootstrap state of a cluster configured as
// key, unless one already is.
func (e *SharedEtcd) setTemplate(key string, snap *Snapshot) {
	e.templates.LoadOrStore(key, snap)
}

// bootstrapKey names the configuration that decides what a server's
// bootstrap writes: two logical clusters with the same key bootstrap
// the same objects. The resources file and a seed are not in it:
// clusters with either start without a template.
func bootstrapKey(cfg Config) string {
	return fmt.Sprintf("%q %v %q %v %q %q %q", cfg.EtcdPrefix, cfg.UnsafePlainHTTP, cfg.AuthorizationModes,
		cfg.DisablePriorityAndFairness, cfg.ServiceClusterIPRange, cfg.ServiceNodePortRange, cfg.Controllers)
}

// prefixWatcher watches the keys under prefix and hands out events with
// the prefix cut off, in copies: etcd's namespace.NewWatcher rewrites
// the keys of the events it is given in place, and the shared client
// gives the same events to every watch of a stream that asked for the
// same range (a race the race detector caught).
type prefixWatcher struct {
	clientv3.Watcher
	prefix string
}

// Watch watches key (or its range, from opts) under the prefix.
func (w prefixWatcher) Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan {
	switch end := clientv3.OpGet(key, opts...).RangeBytes(); {
	case end == nil:
	case string(end) == "\x00": // from key on: to the namespace's end
		opts = append(opts, clientv3.WithRange(clientv3.GetPrefixRangeEnd(w.prefix)))
	default:
		opts = append(opts, clientv3.WithRange(w.prefix+string(end)))
	}
	in := w.Watcher.Watch(ctx, w.prefix+key, opts...)
	out := make(chan clientv3.WatchResponse)
	// Ends when the client closes in, which it does once ctx ends.
	go func() {
		defer close(out)
		for wr := range in {
			events := make([]*clientv3.Event, len(wr.Events))
			for i, ev := range wr.Events {
				events[i] = &clientv3.Event{Type: ev.Type, Kv: w.strip(ev.Kv), PrevKv: w.strip(ev.PrevKv)}
			}
			wr.Events = events
			select {
			case out <- wr:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// strip is a copy of kv without the prefix on its key.
func (w prefixWatcher) strip(kv *mvccpb.KeyValue) *mvccpb.KeyValue {
	if kv == nil {
		return nil
	}
	return &mvccpb.KeyValue{
		Key: kv.Key[min(len(w.prefix), len(kv.Key)):], CreateRevision: kv.CreateRevision,
		ModRevision: kv.ModRevision, Version: kv.Version, Value: kv.Value, Lease: kv.Lease,
	}
}

// drop deletes every key of the namespace ns, once its server has shut
// down, so that a process running thousands of tests does not keep
// their objects.
func (e *SharedEtcd) drop(ctx context.Context, ns string) error {
	if _, err := e.embedded.Client.Delete(ctx, ns+"/", clientv3.WithPrefix()); err != nil {
		return fmt.Errorf("server: delete logical cluster %s: %w", ns, err)
	}
	return nil
}
