package server

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/miniapi/miniapi/storage/cacher"
	"github.com/miniapi/miniapi/storage/etcd3"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// DefaultCompactionInterval is how often etcd's history is compacted, as
// kube-apiserver's --etcd-compaction-interval defaults.
const DefaultCompactionInterval = 5 * time.Minute

// compactRevKey is the key through which the servers of one etcd cluster
// take turns compacting and learn each other's compactions: the key
// kube-apiserver uses, so miniapi and kube-apiserver replicas on one
// cluster take turns too. Its value is the revision last compacted to;
// its version counts the turns taken.
const compactRevKey = "compact_rev_key"

// compactor keeps etcd's history bounded: at every tick it compacts to
// the revision etcd had at the previous tick, so one interval of history
// always remains for lists pinned by continue tokens, and watch caches
// serve older resumptions from memory. Replicas on one cluster take
// turns as kube-apiserver's do: a tick compacts only if the turn count
// under compactRevKey is the one this compactor last saw, so the cluster
// is compacted once per interval whatever the number of replicas, and a
// replica that finds another took the turn adopts it.
//
// Each compaction this compactor makes or learns of is passed to
// compacted, which tells the watch caches, so that they refuse the
// revisions etcd no longer serves (410) instead of serving them from
// memory.
type compactor struct {
	client    *clientv3.Client
	interval  time.Duration
	compacted func(rev int64)
	onError   func(error)
}

// run compacts until ctx ends.
func (c *compactor) run(ctx context.Context) {
	t := time.NewTicker(c.interval)
	defer t.Stop()
	var turns, rev int64
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var compactRev int64
		var err error
		turns, rev, compactRev, err = c.turn(ctx, turns, rev)
		if err != nil {
			c.report(ctx, err)
		}
		if compactRev > 0 {
			c.compacted(compactRev)
		}
	}
}

// turn takes this tick's turn if no one else took it since turns: it
// records rev, the revision of the previous tick, as compacted and
// compacts to it. Otherwise it adopts the turn another replica took.
// It returns the turn count and current revision for the next tick, and
// the revision compacted to, by this replica or the other (0 if none).
func (c *compactor) turn(ctx context.Context, turns, rev int64) (nextTurns, nextRev, compactRev int64, err error) {
	resp, err := c.client.Txn(ctx).If(
		clientv3.Compare(clientv3.Version(compactRevKey), "=", turns),
	).Then(
		clientv3.OpPut(compactRevKey, strconv.FormatInt(rev, 10)),
	).Else(
		clientv3.OpGet(compactRevKey),
	).Commit()
	if err != nil {
		return turns, rev, 0, err
	}
	nextRev = resp.Header.Revision
	if !resp.Succeeded {
		kvs := resp.Responses[0].GetResponseRange().GetKvs()
		if len(kvs) == 0 {
			// Someone deleted the key: start counting turns again.
			return 0, nextRev, 0, nil
		}
		compactRev, err := strconv.ParseInt(string(kvs[0].Value), 10, 64)
		if err != nil {
			return kvs[0].Version, nextRev, 0, fmt.Errorf("%s holds %q, not a revision", compactRevKey, kvs[0].Value)
		}
		return kvs[0].Version, nextRev, compactRev, nil
	}
	if rev == 0 {
		// The first turn records where the next one compacts to.
		return turns + 1, nextRev, 0, nil
	}
	if _, err := c.client.Compact(ctx, rev); err != nil {
		if errors.Is(err, rpctypes.ErrCompacted) {
			// Compacted further already (Server.Compact): nothing lost.
			return turns + 1, nextRev, 0, nil
		}
		return turns + 1, nextRev, 0, err
	}
	return turns + 1, nextRev, rev, nil
}

// follow passes on the compactions other replicas record under
// compactRevKey, as they happen, until ctx ends. Only a server on an
// external cluster needs it: nothing else compacts the members of the
// others.
func (c *compactor) follow(ctx context.Context) {
	for {
		// A pause before each attempt, the first included: following
		// is nothing a start should wait for.
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
		resp, err := c.client.Get(ctx, compactRevKey)
		if err != nil {
			c.report(ctx, err)
			continue
		}
		if len(resp.Kvs) > 0 {
			c.learn(ctx, resp.Kvs[0])
		}
		wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
		for wr := range c.client.Watch(wctx, compactRevKey, clientv3.WithRev(resp.Header.Revision+1)) {
			if err := wr.Err(); err != nil {
				c.report(ctx, err)
				break
			}
			for _, ev := range wr.Events {
				if ev.Type == clientv3.EventTypePut {
					c.learn(ctx, ev.Kv)
				}
			}
		}
		cancel()
	}
}

// learn passes on the compaction recorded in kv.
func (c *compactor) learn(ctx context.Context, kv *mvccpb.KeyValue) {
	rev, err := strconv.ParseInt(string(kv.Value), 10, 64)
	if err != nil {
		c.report(ctx, fmt.Errorf("%s holds %q, not a revision", compactRevKey, kv.Value))
		return
	}
	if rev > 0 {
		c.compacted(rev)
	}
}

func (c *compactor) report(ctx context.Context, err error) {
	if ctx.Err() == nil && c.onError != nil {
		c.onError(err)
	}
}

// compactions hands the compactions of a shared member to the logical
// clusters on it that are serving.
type compactions struct {
	mu      sync.Mutex
	servers map[*Server]struct{}
}

// add makes s told of the member's compactions until remove.
func (cs *compactions) add(s *Server) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.servers == nil {
		cs.servers = map[*Server]struct{}{}
	}
	cs.servers[s] = struct{}{}
}

// remove stops telling s.
func (cs *compactions) remove(s *Server) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	delete(cs.servers, s)
}

// compacted tells every server added that the member compacted to rev.
func (cs *compactions) compacted(rev int64) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for s := range cs.servers {
		s.compacted(rev)
	}
}

// compacted tells every watch cache that etcd no longer serves
// revisions before rev; they go on serving watches from their history,
// as kube-apiserver's caches do.
func (s *Server) compacted(rev int64) {
	s.objects.each(func(c *cacher.Cacher) { c.Compacted(rev) })
}

// Compact compacts etcd's history up to its current revision, now, and
// tells every watch cache so: a watch, an Exact list or a continue token
// at an older resourceVersion is answered 410 Expired from then on, as
// kube-apiserver answers once its compaction has passed it and its
// cache's history has rolled past it. Tests use it to exercise their
// 410 handling. It returns the revision compacted to, the oldest still
// readable.
//
// A logical cluster (Config.Etcd) compacts only its own history: the
// member is not compacted, since other clusters' tests may read theirs,
// and the caches refuse the older revisions as etcd would.
func (s *Server) Compact(ctx context.Context) (int64, error) {
	rev, err := etcd3.CurrentRevision(ctx, s.client)
	if err != nil {
		return 0, err
	}
	if s.shared == nil {
		if _, err := s.client.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil && !errors.Is(err, rpctypes.ErrCompacted) {
			return 0, err
		}
	}
	s.objects.each(func(c *cacher.Cacher) { c.Expire(rev) })
	return rev, nil
}
