package etcd3

import (
	"context"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/metadata"
)

// progressRetryInterval is how often a watch behind a requested revision
// repeats the progress request (Kubernetes' value).
const progressRetryInterval = 100 * time.Millisecond

// RequestProgress reads etcd's current revision R and has every watch of
// the Store opened with ProgressNotify ask etcd for a progress
// notification on its own stream: each soon delivers a Bookmark at R or
// later (or events past R). It returns once the watches have been told.
//
// etcd answers a progress request only when every watch on the stream is
// synced, and drops it otherwise, so each ProgressNotify watch that has
// not yet reported R repeats the request every progressRetryInterval until
// it has. etcd also withholds progress below a watch's start revision: a
// watch that started at or after R is current already and sends the
// Bookmark (at its start revision) itself.
func (s *Store) RequestProgress(ctx context.Context) error {
	rev, err := s.CurrentRevision(ctx)
	if err != nil {
		return err
	}
	s.progressMu.Lock()
	if rev > s.progressWanted {
		s.progressWanted = rev
		close(s.progressKick)
		s.progressKick = make(chan struct{})
	}
	s.progressMu.Unlock()
	return nil
}

// progressState returns the revision RequestProgress callers wait for, and
// a channel closed when it grows.
func (s *Store) progressState() (wanted int64, kick <-chan struct{}) {
	s.progressMu.Lock()
	defer s.progressMu.Unlock()
	return s.progressWanted, s.progressKick
}

// streamContext gives ctx the watch's own stream metadata, replacing any
// outgoing metadata ctx had, so that its Watch and RequestProgress calls
// pick one gRPC stream that no other watch uses. clientv3 multiplexes
// watches onto one stream per distinct metadata, and etcd answers a
// progress request for the whole stream, relying on every watch on it
// being synced; but a watch created on a stream (from a past revision,
// not synced yet) can still be handed an answer etcd queued before the
// watch existed, since etcd sends its creation and that answer in either
// order: the watch then reports progress past events it has not
// delivered. kube-apiserver too keeps one watch per stream.
func (w *watcher) streamContext(ctx context.Context) context.Context {
	return metadata.NewOutgoingContext(ctx, metadata.Pairs(
		rpctypes.MetadataRequireLeaderKey, rpctypes.MetadataHasLeader,
		watchStreamKey, fmt.Sprintf("%p", w),
	))
}
