package cluster

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Labels and annotations the simulation reads.
const (
	// SimulatedLabel marks a Node as simulated: the nodes the cluster
	// registers carry it, and a Node added by anyone else with this label
	// set to "true" is adopted (kept Ready, its Lease renewed, its pods
	// run by the simulated kubelet).
	SimulatedLabel = "miniapi.dev/simulated-node"

	// ReadyAfterAnnotation on a pod delays its readiness: the containers
	// run at once but become ready this long (a Go duration, e.g. "5s")
	// after the pod started, as if a readiness probe passed only then.
	ReadyAfterAnnotation = "miniapi.dev/ready-after"
	// ReadyAnnotation set to "false" on a pod keeps it running but never
	// ready, as a failing readiness probe does.
	ReadyAnnotation = "miniapi.dev/ready"
	// CompleteAfterAnnotation on a pod whose restartPolicy is Never or
	// OnFailure makes its containers exit this long after they start
	// (a Go duration); a Job's pods exit after Config.CompleteAfter
	// without it.
	CompleteAfterAnnotation = "miniapi.dev/complete-after"
	// ExitCodeAnnotation is the exit code of a pod's containers when
	// they exit (default 0): not 0 fails the pod (restartPolicy Never)
	// or restarts its containers with kubelet's back-off (OnFailure).
	ExitCodeAnnotation = "miniapi.dev/exit-code"
)

// Defaults of Config.
const (
	// DefaultLeaseDuration is kubelet's node lease duration (40 s); its
	// renew interval is a quarter of it, as kubelet's.
	DefaultLeaseDuration = 40 * time.Second
	// DefaultNodeStatusInterval is kubelet's nodeStatusReportFrequency:
	// how often an unchanged node status is written all the same.
	DefaultNodeStatusInterval = 5 * time.Minute
)

// Config configures New.
type Config struct {
	// Client is a client of the API server; only its CoreV1 and
	// CoordinationV1 are used. Required.
	Client kubernetes.Interface
	// Pods and Nodes are shared informers of the server's pods and nodes;
	// the caller starts them (New adds handlers). Required.
	Pods  coreinformers.PodInformer
	Nodes coreinformers.NodeInformer

	// NodeCount is how many nodes Start registers (node-0, node-1, ...).
	NodeCount int
	// Scheduler binds pending pods to nodes.
	Scheduler bool
	// Kubelet runs the pods bound to simulated nodes. The node part
	// (nodes kept Ready, Leases renewed) runs when NodeCount > 0 or
	// Kubelet is set.
	Kubelet bool
	// CompleteAfter is how long a Job's pod runs before its containers
	// exit; 0 means at once (the pod is Running first all the same).
	CompleteAfter time.Duration
	// LeaseDuration is the node Leases' duration; they are renewed every
	// quarter of it. 0 means DefaultLeaseDuration.
	LeaseDuration time.Duration
	// NodeStatusInterval is how often unchanged node statuses are
	// written; 0 means DefaultNodeStatusInterval.
	NodeStatusInterval time.Duration
	// Logger receives the simulation's logs; nil discards them.
	Logger *slog.Logger
}

// Cluster is the simulated part of a cluster: nodes, a scheduler and a
// kubelet, each present only when Config asks for it.
type Cluster struct {
	nodes     *Nodes
	scheduler *Scheduler
	kubelet   *Kubelet
	synced    []cache.InformerSynced
}

// New builds the parts cfg asks for and registers their informer
// handlers; nothing runs until Start and Run.
func New(cfg Config) (*Cluster, error) {
	if cfg.Client == nil || cfg.Pods == nil || cfg.Nodes == nil {
		return nil, errors.New("cluster: a client and pod and node informers are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.LeaseDuration <= 0 {
		cfg.LeaseDuration = DefaultLeaseDuration
	}
	if cfg.NodeStatusInterval <= 0 {
		cfg.NodeStatusInterval = DefaultNodeStatusInterval
	}
	c := &Cluster{}
	var err error
	if cfg.NodeCount > 0 || cfg.Kubelet {
		if c.nodes, err = newNodes(cfg); err != nil {
			return nil, err
		}
		c.synced = append(c.synced, cfg.Nodes.Informer().HasSynced)
	}
	if cfg.Scheduler {
		if c.scheduler, err = newScheduler(cfg); err != nil {
			return nil, err
		}
	}
	if cfg.Kubelet {
		if c.kubelet, err = newKubelet(cfg); err != nil {
			return nil, err
		}
	}
	if c.scheduler != nil || c.kubelet != nil {
		c.synced = append(c.synced, cfg.Nodes.Informer().HasSynced, cfg.Pods.Informer().HasSynced)
	}
	return c, nil
}

// Start registers the nodes Config.NodeCount asks for, so that they are
// listed as soon as it returns; the server must be serving.
func (c *Cluster) Start(ctx context.Context) error {
	if c.nodes == nil {
		return nil
	}
	return c.nodes.register(ctx)
}

// Run works until ctx ends, once the informers have synced, and returns
// after every goroutine it started has exited.
func (c *Cluster) Run(ctx context.Context) {
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return
	}
	var wg sync.WaitGroup
	if c.nodes != nil {
		wg.Go(func() { c.nodes.run(ctx) })
	}
	if c.scheduler != nil {
		wg.Go(func() { c.scheduler.run(ctx) })
	}
	if c.kubelet != nil {
		wg.Go(func() { c.kubelet.run(ctx) })
	}
	wg.Wait()
}

// Nodes is the node part, nil when it does not run.
func (c *Cluster) Nodes() *Nodes { return c.nodes }

// Scheduler is the scheduler, nil when it does not run.
func (c *Cluster) Scheduler() *Scheduler { return c.scheduler }

// Kubelet is the simulated kubelet, nil when it does not run.
func (c *Cluster) Kubelet() *Kubelet { return c.kubelet }
