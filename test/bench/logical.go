package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/miniapi/miniapi/server"
)

// LogicalResult is what a logical cluster costs (issue 15: a new cluster
// ready in ≤ 5 ms, ≤ 2 MB each when idle, 200 parallel tests in one
// process): clusters on one shared etcd member (server.SharedEtcd), as
// miniapitest starts them, against servers with an embedded member of
// their own, in the same run.
type LogicalResult struct {
	Runs int `json:"runs"`
	// OwnMs and LogicalMs are median starts to /readyz 200, one at a
	// time, interleaved; LogicalSpread their spread.
	OwnMs         float64 `json:"ownMedianMs"`
	LogicalMs     float64 `json:"logicalMedianMs"`
	LogicalSpread Spread  `json:"logicalSpread"`
	// Idle is how many clusters were left idle for the memory figures:
	// the heap (after a collection) and resident set they add, each.
	Idle          int     `json:"idle"`
	IdleHeapMB    float64 `json:"idleHeapMBEach"`
	IdleRSSMB     float64 `json:"idleRSSMBEach"`
	IdleGoroutine int     `json:"idleGoroutinesEach"`
	// Parallel clusters started at once, each then creating, reading
	// and listing its own ConfigMap as a test would; how many did all
	// of it, how long it took, and the process's peak resident set.
	Parallel      int     `json:"parallel"`
	ParallelOK    int     `json:"parallelOK"`
	ParallelSec   float64 `json:"parallelSeconds"`
	ParallelMaxMB float64 `json:"parallelPeakRSSMB"`
}

// runLogical measures logical clusters.
func runLogical(ctx context.Context, cfg config) (*LogicalResult, error) {
	res := &LogicalResult{Runs: cfg.LogicalRuns, Idle: cfg.LogicalIdle, Parallel: cfg.LogicalParallel}
	work, err := os.MkdirTemp("", "miniapi-bench-logical-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	shared, err := server.StartSharedEtcd(ctx, server.SharedEtcdConfig{Dir: filepath.Join(work, "shared"), UnsafeNoFsync: true})
	if err != nil {
		return nil, err
	}
	defer shared.Close()

	logf(cfg, "timing %d starts with a member of their own and %d logical", cfg.LogicalRuns, cfg.LogicalRuns)
	var own, logical []time.Duration
	for i := range cfg.LogicalRuns {
		d, err := startSeeded(ctx, filepath.Join(work, fmt.Sprintf("own-%d", i)), nil)
		if err != nil {
			return res, err
		}
		own = append(own, d)
		srv, d, err := startLogical(ctx, shared, filepath.Join(work, fmt.Sprintf("logical-%d", i)))
		if err != nil {
			return res, err
		}
		logical = append(logical, d)
		if err := stopServer(srv); err != nil {
			return res, err
		}
	}
	res.OwnMs, _, _, _ = spread(own)
	res.LogicalMs, _, _, _ = spread(logical)
	res.LogicalSpread = spreadOf(logical)

	logf(cfg, "leaving %d logical clusters idle", cfg.LogicalIdle)
	mem0, rss0 := sampleMemory(), processRSS(os.Getpid())
	var idle []*server.Server
	defer func() {
		for _, s := range idle {
			_ = stopServer(s)
		}
	}()
	for i := range cfg.LogicalIdle {
		srv, _, err := startLogical(ctx, shared, filepath.Join(work, fmt.Sprintf("idle-%d", i)))
		if err != nil {
			return res, err
		}
		idle = append(idle, srv)
	}
	// Let the start-up work (bootstrap status writes, the first OpenAPI
	// build) finish before measuring what stays.
	select {
	case <-ctx.Done():
		return res, ctx.Err()
	case <-time.After(cfg.LogicalIdleSettle):
	}
	n := float64(max(cfg.LogicalIdle, 1))
	mem := sampleMemory()
	cfg.heapProfile("logical-idle")
	res.IdleHeapMB = float64(mem.Heap-mem0.Heap) / n / (1 << 20)
	res.IdleRSSMB = float64(processRSS(os.Getpid())-rss0) / n / (1 << 20)
	res.IdleGoroutine = (mem.Goroutines - mem0.Goroutines) / max(cfg.LogicalIdle, 1)
	for _, s := range idle {
		if err := stopServer(s); err != nil {
			return res, err
		}
	}
	idle = nil

	logf(cfg, "starting %d logical clusters at once", cfg.LogicalParallel)
	stopProfile := cfg.profile("logical-parallel")
	defer stopProfile()
	peak := processRSS(os.Getpid())
	stopSampling := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Go(func() {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stopSampling:
				return
			case <-t.C:
				peak = max(peak, processRSS(os.Getpid()))
			}
		}
	})
	start := time.Now()
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for i := range cfg.LogicalParallel {
		wg.Go(func() {
			err := parallelTest(ctx, shared, filepath.Join(work, fmt.Sprintf("par-%d", i)), i)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			} else {
				res.ParallelOK++
			}
		})
	}
	wg.Wait()
	res.ParallelSec = time.Since(start).Seconds()
	close(stopSampling)
	sampler.Wait()
	res.ParallelMaxMB = float64(peak) / (1 << 20)
	if len(errs) > 0 {
		logf(cfg, "%d of %d parallel clusters failed; first: %v", len(errs), cfg.LogicalParallel, errs[0])
	}
	return res, nil
}

// startLogical starts a logical cluster on shared, as miniapitest does,
// and times it to the first 200 from /readyz.
func startLogical(ctx context.Context, shared *server.SharedEtcd, dir string) (*server.Server, time.Duration, error) {
	client := newHTTPClient(1)
	defer client.CloseIdleConnections()
	start := time.Now()
	sc := serverConfig()
	sc.Listen, sc.Etcd, sc.CertDir = "127.0.0.1:0", shared, dir
	srv, err := server.Start(ctx, sc)
	if err != nil {
		return nil, 0, err
	}
	if err := waitReady(ctx, client, srv.URL()); err != nil {
		_ = stopServer(srv)
		return nil, 0, err
	}
	return srv, time.Since(start), nil
}

// parallelTest is one parallel test's life: a cluster of its own, a
// ConfigMap created, read back and listed alone, the cluster stopped.
func parallelTest(ctx context.Context, shared *server.SharedEtcd, dir string, i int) error {
	srv, _, err := startLogical(ctx, shared, dir)
	if err != nil {
		return err
	}
	m := &miniapi{srv: srv, dir: dir, http: newHTTPClient(2)}
	defer m.http.CloseIdleConnections()
	err = func() error {
		if err := m.createConfigMaps(ctx, "default", fmt.Sprintf("test-%d", i), 1, 100, 1); err != nil {
			return err
		}
		own := objName(fmt.Sprintf("test-%d", i), 0)
		if _, err := do(ctx, m.http, http.MethodGet, m.collectionURL("default")+"/"+own, nil, http.StatusOK); err != nil {
			return err
		}
		body, err := do(ctx, m.http, http.MethodGet, m.collectionURL("default"), nil, http.StatusOK)
		if err != nil {
			return err
		}
		var l struct {
			Items []struct {
				Metadata struct{ Name string } `json:"metadata"`
			} `json:"items"`
		}
		if err := json.Unmarshal(body, &l); err != nil {
			return err
		}
		var names []string
		for _, it := range l.Items {
			if strings.HasPrefix(it.Metadata.Name, "test-") {
				names = append(names, it.Metadata.Name)
			}
		}
		if len(names) != 1 || names[0] != own {
			return fmt.Errorf("cluster %d lists test ConfigMaps %v, want only its own %s", i, names, own)
		}
		return nil
	}()
	return errors.Join(err, stopServer(srv))
}

// stopServer shuts a server down, bounded.
func stopServer(srv *server.Server) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return srv.Shutdown(ctx)
}

// summarizeLogical adds the logical cluster rows.
func (r *Report) summarizeLogical() {
	l := r.Logical
	if l == nil {
		return
	}
	r.Summary = append(r.Summary,
		Row{
			Scenario: "logical", Case: "new logical cluster to /readyz 200: median",
			Value: l.LogicalMs, Unit: "ms", Baseline: "own etcd member", BaselineValue: l.OwnMs, Ratio: l.LogicalMs / l.OwnMs, RatioName: "logical/own",
			Target: "≤ 5 ms", Met: met(l.LogicalMs <= 5),
			Note: fmt.Sprintf("%d starts each, interleaved; logical %.1f-%.1f ms", l.Runs, l.LogicalSpread.MinMs, l.LogicalSpread.MaxMs),
		},
		Row{
			Scenario: "logical", Case: fmt.Sprintf("idle logical cluster: heap each (of %d)", l.Idle),
			Value: l.IdleHeapMB, Unit: "MB", Target: "≤ 2 MB", Met: met(l.IdleHeapMB <= 2),
			Note: fmt.Sprintf("resident set %.1f MB each, %d goroutines each", l.IdleRSSMB, l.IdleGoroutine),
		},
		Row{
			Scenario: "logical", Case: fmt.Sprintf("%d parallel tests, each its own cluster: all passed", l.Parallel),
			Value: float64(l.ParallelOK), Unit: "tests", Target: fmt.Sprintf("%d", l.Parallel), Met: met(l.ParallelOK == l.Parallel),
			Note: fmt.Sprintf("%.1f s for all, peak resident set %.0f MB", l.ParallelSec, l.ParallelMaxMB),
		})
}
