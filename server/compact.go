package server

import (
	"context"
	"errors"
	"time"

	"github.com/miniapi/miniapi/storage/cacher"
	"github.com/miniapi/miniapi/storage/etcd3"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// DefaultCompactionInterval is how often etcd's history is compacted, as
// kube-apiserver's --etcd-compaction-interval defaults.
const DefaultCompactionInterval = 5 * time.Minute

// compactor keeps etcd's history bounded: at every tick it compacts to
// the revision etcd had at the previous tick, so one interval of history
// always remains for lists pinned by continue tokens, and watch caches
// serve older resumptions from memory. Several replicas on one cluster
// may each run one; compacting to an already compacted revision is
// harmless.
type compactor struct {
	client   *clientv3.Client
	interval time.Duration
	onError  func(error)
}

// run compacts until ctx ends.
func (c *compactor) run(ctx context.Context) {
	t := time.NewTicker(c.interval)
	defer t.Stop()
	var prev int64
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rev, err := etcd3.CurrentRevision(ctx, c.client)
		if err != nil {
			c.report(ctx, err)
			continue
		}
		if prev > 0 {
			_, err := c.client.Compact(ctx, prev)
			if err != nil && !errors.Is(err, rpctypes.ErrCompacted) {
				c.report(ctx, err)
			}
		}
		prev = rev
	}
}

func (c *compactor) report(ctx context.Context, err error) {
	if ctx.Err() == nil && c.onError != nil {
		c.onError(err)
	}
}

// Compact compacts etcd's history up to its current revision, now, and
// tells every watch cache so: a watch, an Exact list or a continue token
// at an older resourceVersion is answered 410 Expired from then on, as
// it is once kube-apiserver's compaction has passed it. It returns the
// revision compacted to, the oldest still readable.
//
// A logical cluster (Config.Etcd) compacts only its own history: the
// member is not compacted, since other clusters' tests may read theirs,
// and the caches refuse the older revisions as etcd would.
func (s *Server) Compact(ctx context.Context) (int64, error) {
	rev, err := etcd3.CurrentRevision(ctx, s.client)
	if err != nil {
		return 0, err
	}
	if s.shared != nil {
		s.objects.each(func(c *cacher.Cacher) { c.Compacted(rev) })
		return rev, nil
	}
	if _, err := s.client.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil && !errors.Is(err, rpctypes.ErrCompacted) {
		return 0, err
	}
	s.objects.each(func(c *cacher.Cacher) { c.Compacted(rev) })
	return rev, nil
}
