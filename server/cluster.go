package server

import (
	"context"

	"github.com/miniapi/miniapi/cluster"
	"github.com/miniapi/miniapi/internal/workqueues"
)

// startCluster registers the simulated nodes and runs, until bg ends,
// the parts of the simulated cluster cfg asks for (see package cluster),
// over the loopback client and the shared informers. The nodes are
// registered before it returns, so they are listed as soon as the
// server announces itself.
func (s *Server) startCluster(ctx, bg context.Context, cfg Config) error {
	if cfg.Nodes <= 0 && !cfg.Scheduler && !cfg.Kubelet {
		return nil
	}
	client, err := s.loopbackClient()
	if err != nil {
		return err
	}
	core := s.informers.Core().V1()
	owned := workqueues.Own(&s.queues)
	c, err := cluster.New(cluster.Config{
		Client: client, Pods: core.Pods(), Nodes: core.Nodes(),
		NodeCount: cfg.Nodes, Scheduler: cfg.Scheduler, Kubelet: cfg.Kubelet,
		CompleteAfter: cfg.PodCompleteAfter,
		Logger:        s.log.With("component", "cluster"),
	})
	owned()
	if err != nil {
		return err
	}
	if err := c.Start(ctx); err != nil {
		return err
	}
	s.cluster = c
	s.background.Go(func() { c.Run(bg) })
	return nil
}

// Cluster is the simulated part of the cluster (nodes, scheduler,
// kubelet), for tests to wait on; nil when none of it runs.
func (s *Server) Cluster() *cluster.Cluster { return s.cluster }
