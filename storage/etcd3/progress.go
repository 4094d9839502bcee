package etcd3

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc/metadata"
)

// progressRetryInterval is how often a watch behind a requested revision
// repeats the progress request (Kubernetes' value).
const progressRetryInterval = 100 * time.Millisecond

// RequestProgress reads etcd's current revision R and asks for a progress
// notification on this Store's watch stream: every watch of the Store
// opened with ProgressNotify then soon delivers a Bookmark at R or later
// (or events past R). It returns once the request is sent.
//
// etcd answers a progress request only when every watch on the stream is
// synced, and drops it otherwise (a request that arrives before a watch
// exists does not cover it either), so each ProgressNotify watch that has
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
	if err := s.watcher.RequestProgress(s.streamContext(ctx)); err != nil {
		return fmt.Errorf("etcd3: request progress: %w", err)
	}
	return nil
}

// progressState returns the revision RequestProgress callers wait for, and
// a channel closed when it grows.
func (s *Store) progressState() (wanted int64, kick <-chan struct{}) {
	s.progressMu.Lock()
	defer s.progressMu.Unlock()
	return s.progressWanted, s.progressKick
}

// streamContext gives ctx this Store's watch stream metadata, replacing
// any outgoing metadata ctx had, so every Watch and RequestProgress of
// the Store picks the same gRPC stream.
func (s *Store) streamContext(ctx context.Context) context.Context {
	return metadata.NewOutgoingContext(ctx, s.watchMD)
}
