package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/miniapi/miniapi/server"
)

// ForkResult is what starting from a snapshot costs (issue 15: a fork
// of a 10,000-object state ready in ≤ 50 ms): starts to /readyz 200
// from a snapshot of Objects objects, against starts from nothing, in
// the same runs, interleaved.
type ForkResult struct {
	Runs       int     `json:"runs"`
	Objects    int     `json:"objects"`
	SnapshotMs float64 `json:"snapshotMs"`
	EmptyMs    float64 `json:"emptyMedianMs"`
	ForkMs     float64 `json:"forkMedianMs"`
	// AddedMs is what the snapshot adds to a start: ForkMs - EmptyMs.
	AddedMs float64 `json:"addedMs"`
}

// runFork stores cfg.ForkObjects ConfigMaps, snapshots them, then times
// in-process starts with and without the snapshot as their seed.
func runFork(ctx context.Context, cfg config) (*ForkResult, error) {
	res := &ForkResult{Runs: cfg.ForkRuns, Objects: cfg.ForkObjects}
	work, err := os.MkdirTemp("", "miniapi-bench-fork-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	logf(cfg, "storing %d ConfigMaps to snapshot", cfg.ForkObjects)
	snap, took, err := forkSnapshot(ctx, cfg, filepath.Join(work, "src"))
	if err != nil {
		return res, err
	}
	res.SnapshotMs = float64(took) / 1e6
	var empty, fork []time.Duration
	stopProfile := cfg.profile("fork")
	defer stopProfile()
	for i := range cfg.ForkRuns {
		for _, seed := range []*server.Snapshot{nil, snap} {
			d, err := startSeeded(ctx, filepath.Join(work, fmt.Sprintf("run-%d-%v", i, seed != nil)), seed)
			if err != nil {
				return res, err
			}
			if seed == nil {
				empty = append(empty, d)
			} else {
				fork = append(fork, d)
			}
		}
	}
	res.EmptyMs, _, _, _ = spread(empty)
	res.ForkMs, _, _, _ = spread(fork)
	res.AddedMs = res.ForkMs - res.EmptyMs
	return res, nil
}

// forkSnapshot starts a server in dir, stores the ConfigMaps and
// returns its snapshot and how long taking it took.
func forkSnapshot(ctx context.Context, cfg config, dir string) (*server.Snapshot, time.Duration, error) {
	sc := serverConfig()
	sc.Listen, sc.DataDir, sc.UnsafeNoFsync, sc.CompactionInterval = "127.0.0.1:0", dir, true, -1
	srv, err := server.Start(ctx, sc)
	if err != nil {
		return nil, 0, err
	}
	m := &miniapi{srv: srv, dir: dir, http: newHTTPClient(64)}
	defer func() {
		m.http.CloseIdleConnections()
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := m.createNamespace(ctx, benchNS); err != nil {
		return nil, 0, err
	}
	if err := m.createConfigMaps(ctx, benchNS, "cm", cfg.ForkObjects, cfg.ObjectSize, 16); err != nil {
		return nil, 0, err
	}
	start := time.Now()
	snap, err := srv.Snapshot(ctx)
	return snap, time.Since(start), err
}

// startSeeded times server.Start with seed to the first 200 from
// /readyz, then shuts the server down.
func startSeeded(ctx context.Context, dir string, seed *server.Snapshot) (time.Duration, error) {
	client := newHTTPClient(1)
	defer client.CloseIdleConnections()
	start := time.Now()
	sc := serverConfig()
	sc.Listen, sc.DataDir, sc.UnsafeNoFsync, sc.Seed = "127.0.0.1:0", dir, true, seed
	srv, err := server.Start(ctx, sc)
	if err != nil {
		return 0, err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := waitReady(ctx, client, srv.URL()); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// summarizeFork adds the fork row: what a snapshot adds to a start.
func (r *Report) summarizeFork() {
	f := r.Fork
	if f == nil {
		return
	}
	r.Summary = append(r.Summary, Row{
		Scenario: "fork", Case: fmt.Sprintf("start from a snapshot of %d objects: added median", f.Objects),
		Value: f.AddedMs, Unit: "ms", Baseline: "empty start", BaselineValue: f.EmptyMs, Ratio: f.ForkMs / f.EmptyMs, RatioName: "fork/empty",
		Target: "≤ 50 ms", Met: met(f.AddedMs <= 50),
		Note: fmt.Sprintf("%d runs interleaved: median %.1f ms from the snapshot, %.1f ms from nothing; taking the snapshot %.1f ms", f.Runs, f.ForkMs, f.EmptyMs, f.SnapshotMs),
	})
}
