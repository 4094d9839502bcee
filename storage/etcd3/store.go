package etcd3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/storage/etcd3/metrics"

	"github.com/miniapi/miniapi/storage"
)

// Config configures a Store.
type Config struct {
	// Client talks to etcd. Required. Several Stores may share one
	// client; the Store never closes it.
	Client *clientv3.Client
	// Resource is the group and resource the Store holds, the labels of
	// its etcd request metrics and watch event counts; empty records
	// none (a Store that is not one resource's).
	Resource schema.GroupResource
	// Watcher, when set, is what the Store watches through instead of
	// Client's own, with WatchPrefix put before every key it watches and
	// cut from every key it reports. It is for a Client whose KV adds
	// WatchPrefix to every key (etcd's namespace package): a namespaced
	// watcher would rewrite every event on a goroutine of its own per
	// watch, where the Store cuts the prefix as it decodes the event.
	Watcher     clientv3.Watcher
	WatchPrefix string
}

// Store is storage.Interface over etcd v3. Every write is a transaction
// that compares the key's mod revision; resourceVersions are etcd
// revisions. A Store holds no goroutines of its own (each Watch owns
// one) and is safe for concurrent use.
type Store struct {
	client   *clientv3.Client
	resource schema.GroupResource
	// watcher is what Watch and RequestProgress use, and watchPrefix
	// what it adds to keys (Config.Watcher).
	watcher     clientv3.Watcher
	watchPrefix string
	// progressMu protects progressWanted and progressKick.
	progressMu sync.Mutex
	// progressWanted is the highest revision RequestProgress has been
	// asked about: ProgressNotify watches behind it keep asking etcd.
	progressWanted int64
	// progressKick is closed, and replaced, when progressWanted grows.
	progressKick chan struct{}
}

var (
	_ storage.Interface         = (*Store)(nil)
	_ storage.RevisionReader    = (*Store)(nil)
	_ storage.ProgressRequester = (*Store)(nil)
	_ storage.WatchRunner       = (*Store)(nil)
)

// watchStreamKey is the metadata key that names a watch's gRPC stream
// (see watcher.streamContext).
const watchStreamKey = "miniapi-watch-stream"

// New returns a Store over cfg.Client.
func New(cfg Config) *Store {
	if cfg.Client == nil {
		panic("etcd3: New needs a client")
	}
	metrics.Register()
	s := &Store{client: cfg.Client, resource: cfg.Resource, progressKick: make(chan struct{}),
		watcher: cfg.Client.Watcher}
	if cfg.Watcher != nil {
		s.watcher, s.watchPrefix = cfg.Watcher, cfg.WatchPrefix
	}
	return s
}

// CurrentRevision implements storage.RevisionReader with the package's
// CurrentRevision.
func (s *Store) CurrentRevision(ctx context.Context) (int64, error) {
	start := time.Now()
	rev, err := CurrentRevision(ctx, s.client)
	s.record("getCurrentResourceVersion", start, err)
	return rev, err
}

// CurrentRevision returns etcd's current revision, read linearizably, so
// it is at least the revision of every write that completed before the
// call.
func CurrentRevision(ctx context.Context, client *clientv3.Client) (int64, error) {
	// Any single-key read carries the header revision; this key holds
	// nothing, and CountOnly keeps the reply empty either way.
	resp, err := client.Get(ctx, "/", clientv3.WithCountOnly())
	if err != nil {
		return 0, etcdError("", "read current revision", err)
	}
	return resp.Header.Revision, nil
}

// Get implements storage.Interface.
func (s *Store) Get(ctx context.Context, key string, opts storage.GetOptions) (*storage.Object, error) {
	minRev, err := parseRV(key, opts.ResourceVersion)
	if err != nil {
		return nil, err
	}
	resp, err := s.get(ctx, "get", key)
	if err != nil {
		return nil, etcdError(key, "get", err)
	}
	if err := checkNotTooLarge(key, minRev, resp.Header.Revision); err != nil {
		return nil, err
	}
	if len(resp.Kvs) == 0 {
		return nil, storage.NewError(storage.CodeNotFound, key, 0, nil)
	}
	return objectFromKV(resp.Kvs[0])
}

// Create implements storage.Interface. The stored value is data without
// metadata.resourceVersion; the returned object carries the revision of
// the write.
func (s *Store) Create(ctx context.Context, key string, data []byte) (*storage.Object, error) {
	if key == "" {
		return nil, storage.NewError(storage.CodeInvalid, key, 0, errors.New("etcd3: empty key"))
	}
	value, err := storedValue(key, data)
	if err != nil {
		return nil, err
	}
	resp, err := s.commit("create", s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, string(value))))
	if err != nil {
		return nil, etcdError(key, "create", err)
	}
	if !resp.Succeeded {
		return nil, storage.NewError(storage.CodeExists, key, 0, nil)
	}
	return newObject(key, value, resp.Header.Revision)
}

// parseRV parses a resourceVersion option, naming key in the error.
func parseRV(key, rv string) (int64, error) {
	n, err := storage.ParseResourceVersion(rv)
	if err != nil {
		return 0, storage.NewError(storage.CodeInvalid, key, 0, errors.Unwrap(err))
	}
	return n, nil
}

// checkNotTooLarge enforces that a read at etcd revision current satisfies
// a client's minimum resourceVersion.
func checkNotTooLarge(key string, minRev, current int64) error {
	if minRev > current {
		return storage.NewError(storage.CodeTooLargeResourceVersion, key, current,
			fmt.Errorf("too large resource version: %d, current: %d", minRev, current))
	}
	return nil
}

// storedValue is what a write puts in etcd: data without its
// resourceVersion, which is the key's mod revision instead.
func storedValue(key string, data []byte) ([]byte, error) {
	if !bytes.Contains(data, []byte(`"resourceVersion"`)) {
		// Nothing to strip (the registry writes objects without one):
		// store the bytes as they are rather than decode them.
		return data, nil
	}
	value, err := storage.SetResourceVersion(data, 0)
	if err != nil {
		return nil, storage.NewError(storage.CodeInternal, key, 0, fmt.Errorf("etcd3: encode for storage: %w", err))
	}
	return value, nil
}

// newObject builds the object a read or write returns: the stored value
// with resourceVersion rev.
func newObject(key string, value []byte, rev int64) (*storage.Object, error) {
	data, err := storage.InjectResourceVersion(value, rev)
	if err != nil {
		return nil, storage.NewError(storage.CodeInternal, key, rev, fmt.Errorf("etcd3: decode stored value: %w", err))
	}
	return &storage.Object{Key: key, Revision: rev, Data: data}, nil
}

func objectFromKV(kv *mvccpb.KeyValue) (*storage.Object, error) {
	return newObject(string(kv.Key), kv.Value, kv.ModRevision)
}

// etcdError converts an error from the etcd client into a storage error:
// Compacted and TooLargeResourceVersion for reads at a revision etcd no
// longer or not yet has, EntityTooLarge for a write of an object too
// large to store, Internal otherwise (which still unwraps to context
// errors).
func etcdError(key, op string, err error) error {
	switch {
	case errors.Is(err, rpctypes.ErrCompacted):
		return storage.NewError(storage.CodeCompacted, key, 0, fmt.Errorf("etcd3: %s: %w", op, err))
	case errors.Is(err, rpctypes.ErrFutureRev):
		return storage.NewError(storage.CodeTooLargeResourceVersion, key, 0, fmt.Errorf("etcd3: %s: %w", op, err))
	case isTooLarge(err):
		return storage.NewError(storage.CodeEntityTooLarge, key, 0, fmt.Errorf("etcd3: %s: %w", op, err))
	}
	return storage.NewError(storage.CodeInternal, key, 0, fmt.Errorf("etcd3: %s: %w", op, err))
}

// isTooLarge reports whether a write failed for the size of its request,
// in the two ways kube-apiserver recognises (isTooLargeError in
// k8s.io/apiserver's handlers): etcd refused a request over its
// --max-request-bytes, or the gRPC client refused to send a message over
// its limit (2 MiB by default) to an external cluster.
func isTooLarge(err error) bool {
	if errors.Is(err, rpctypes.ErrRequestTooLarge) {
		return true
	}
	st, ok := status.FromError(err)
	return ok && st.Code() == codes.ResourceExhausted && strings.Contains(st.Message(), "trying to send message larger than max")
}
