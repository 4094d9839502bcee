package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"
)

// tinyConfig is quickConfig cut down to seconds: every scenario runs, on
// sizes too small to mean anything.
func tinyConfig() config {
	c := quickConfig()
	c.Watchers = []int{10}
	c.Rates = []float64{5, 20}
	c.Step = 200 * time.Millisecond
	c.Drain = 3 * time.Second
	c.Writers = 2
	c.FanoutObjects = 5
	c.WritePathWatchers = 5
	c.WritePathWriters = 2
	c.WritePathDuration = 200 * time.Millisecond
	c.ObjectSize = 512
	c.ListObjects = 100
	c.ListIters = 2
	c.ListTime = 100 * time.Millisecond
	// Enough objects that the heap's noise (a server of an earlier
	// scenario still letting go of its garbage) cannot turn the cache's
	// bytes per object negative.
	c.MemObjects = 1000
	c.MemWatchers = 10
	c.Concurrency = []int{1, 2}
	c.CreateDuration = 200 * time.Millisecond
	c.StartupRuns = 1
	c.StartupObjects = 40
	c.StartupTypes = 2
	c.ClusterStartRuns, c.ClusterDeployments = 1, 1
	c.ClusterIdleNodes, c.ClusterIdleSettle, c.ClusterIdleDuration = 2, 100*time.Millisecond, 500*time.Millisecond
	c.ForkObjects, c.ForkRuns = 20, 1
	c.LogicalRuns, c.LogicalIdle, c.LogicalParallel, c.LogicalIdleSettle = 1, 2, 3, 100*time.Millisecond
	return c
}

// TestSmoke runs every scenario on tiny sizes and checks that each
// produced its figures and that the report renders. It asserts nothing
// about the figures themselves: timings belong to the benchmark program,
// not to tests.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts several embedded etcd members and servers")
	}
	// A bound for a hang, not a measurement: the startup scenario builds
	// the binary first, and a loaded CI machine with a cold cache took
	// more than the 2 minutes this once was.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cfg := tinyConfig()
	var log bytes.Buffer
	cfg.Log = &log
	rep, err := run(ctx, cfg)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}

	if f := rep.Fanout; f == nil || len(f.Runs) != 2 || len(f.Runs[0].Steps) == 0 || len(f.Runs[1].Steps) == 0 {
		t.Errorf("fan-out: no steps measured: %+v", rep.Fanout)
	} else {
		for _, run := range f.Runs {
			if s := run.Steps[0]; s.Acked == 0 || s.Delivered == 0 {
				t.Errorf("fan-out %s: first step wrote %d and delivered %d events", run.Target, s.Acked, s.Delivered)
			}
		}
	}
	if w := rep.WritePath; w == nil || w.UpdatesPerSec <= 0 || w.EtcdPutsPerSec <= 0 || w.StoreUpdatesPerSec <= 0 {
		t.Errorf("write path: missing figures: %+v", rep.WritePath)
	}
	if l := rep.List; l == nil || len(l.Storage) != 3 || len(l.HTTP) != 4 || l.StorageSpeedup <= 0 || l.HTTPSpeedup <= 0 {
		t.Errorf("list: missing figures: %+v", rep.List)
	}
	if m := rep.Memory; m == nil || m.CacheBytesPerObject <= 0 || m.ListBytesPerObject <= 0 ||
		m.InProcess.GoroutinesPerWatcher <= 0 || m.HTTP.GoroutinesPerWatcher <= 0 || m.HTTPBaseline.GoroutinesPerWatcher <= 0 {
		t.Errorf("memory: missing figures: %+v", rep.Memory)
	}
	if c := rep.Create; c == nil || len(c.Rows) != len(cfg.Concurrency) {
		t.Errorf("create: missing rows: %+v", rep.Create)
	} else {
		for _, r := range c.Rows {
			if r.CreatesPerSec <= 0 || r.StoreCreatesPerSec <= 0 || r.EtcdPutsPerSec <= 0 || r.HTTPFloorPerSec <= 0 {
				t.Errorf("create: missing figures at %d clients: %+v", r.Clients, r)
			}
		}
	}
	if s := rep.Startup; s == nil || len(s.Cases) != 8 {
		t.Errorf("startup: missing cases: %+v", rep.Startup)
	} else {
		for _, c := range s.Cases {
			if c.MedianMs <= 0 || (c.Binary && (c.IdleRSSBytes == 0 || c.MedianCPUMs <= 0)) {
				t.Errorf("startup %s: missing figures: %+v", c.Name, c)
			}
		}
	}
	if c := rep.Cluster; c == nil || c.StartOn.Runs != 1 || c.StartOff.Runs != 1 || c.Deployment.MedianMs <= 0 ||
		c.IdleOn.Rounds != 1 || c.IdleOff.Rounds != 1 || c.IdleOn.Seconds <= 0 {
		t.Errorf("cluster: missing figures: %+v", rep.Cluster)
	}
	if f := rep.Fork; f == nil || f.Runs != 1 || f.SnapshotMs <= 0 || f.ForkMs <= 0 || f.EmptyMs <= 0 {
		t.Errorf("fork: missing figures: %+v", rep.Fork)
	}
	if l := rep.Logical; l == nil || l.LogicalMs <= 0 || l.OwnMs <= 0 || l.ParallelOK != 3 {
		t.Errorf("logical: missing figures, or a parallel cluster failed: %+v", rep.Logical)
	}
	if len(rep.Summary) == 0 {
		t.Error("no summary rows")
	}

	var table bytes.Buffer
	rep.writeTable(&table)
	if !bytes.Contains(table.Bytes(), []byte("SCENARIO")) {
		t.Errorf("table has no header:\n%s", table.String())
	}
	if _, err := json.Marshal(rep); err != nil {
		t.Errorf("report does not encode as JSON: %v", err)
	}
	if t.Failed() {
		t.Logf("progress:\n%s\ntable:\n%s", log.String(), table.String())
	}
}

// TestLadder checks the rate search: up the ladder to the first failure,
// then bisection.
func TestLadder(t *testing.T) {
	for _, tc := range []struct {
		name      string
		limit     float64 // highest rate that passes
		refine    int
		want      float64
		saturated bool
		tried     []float64
	}{
		{name: "all pass", limit: 1e9, refine: 3, want: 100, tried: []float64{1, 10, 100}},
		{name: "first fails", limit: 0, refine: 3, want: 0, saturated: true, tried: []float64{1}},
		{name: "no refinement", limit: 50, refine: 0, want: 10, saturated: true, tried: []float64{1, 10, 100}},
		{name: "bisect", limit: 50, refine: 3, want: 44, saturated: true, tried: []float64{1, 10, 100, 55, 33, 44}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &ladder{rates: []float64{1, 10, 100}, refine: tc.refine}
			var tried []float64
			for range 20 {
				rate, ok := l.next()
				if !ok {
					break
				}
				tried = append(tried, rate)
				l.report(rate, rate <= tc.limit)
			}
			if l.good != tc.want || (l.bad != 0) != tc.saturated {
				t.Errorf("sustained %g (saturated %v), want %g (%v)", l.good, l.bad != 0, tc.want, tc.saturated)
			}
			if len(tried) != len(tc.tried) {
				t.Errorf("tried %v, want %v", tried, tc.tried)
			}
		})
	}
}

// TestParseRV covers the resourceVersion scanner the watch client and the
// writers use on every frame and response.
func TestParseRV(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{`{"metadata":{"name":"a","resourceVersion":"123"},"data":{"resourceVersion":"9"}}`, 123, true},
		{`{"type":"MODIFIED","object":{"metadata":{"resourceVersion":"7"}}}` + "\n", 7, true},
		{`{"metadata":{"resourceVersion":""}}`, 0, false},
		{`{"metadata":{"resourceVersion":"12`, 0, false},
		{`{"metadata":{}}`, 0, false},
	} {
		got, err := parseRV([]byte(tc.in))
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseRV(%s) = %d, %v; want %d, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}
