package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/controllers"
	"github.com/miniapi/miniapi/server"
)

// StartupResult is how long miniapi takes from nothing to a 200 from
// /readyz, in-process (server.Start) and as a new process (exec of the
// built binary), over an empty data directory, over one a start has
// already bootstrapped (a restart) and over one that holds objects and
// extra types; and the memory it holds once idle.
type StartupResult struct {
	Runs int `json:"runs"`
	// Objects and Types size the loaded data directory: Objects objects,
	// half ConfigMaps, half spread over Types CustomResourceDefinitions
	// stored in it (TypesFrom says so).
	Objects   int           `json:"objects"`
	Types     int           `json:"types"`
	TypesFrom string        `json:"typesFrom"`
	Cases     []StartupCase `json:"cases"`
}

// StartupCase is one way of starting, timed Runs times.
type StartupCase struct {
	Name   string `json:"name"`
	Binary bool   `json:"binary"`
	Loaded bool   `json:"loaded"`
	// Restart is a start over a data directory an earlier start has
	// bootstrapped (system namespaces, RBAC policy, flow control
	// configuration, the default ServiceCIDR) and nothing else.
	Restart bool `json:"restart,omitempty"`
	// NoControllers is a start with every built-in controller off
	// (--controllers naming each with "-").
	NoControllers bool `json:"noControllers,omitempty"`
	// Timings of the runs, from the call (or exec) to the first 200
	// from /readyz.
	MedianMs float64 `json:"medianMs"`
	MinMs    float64 `json:"minMs"`
	P90Ms    float64 `json:"p90Ms"`
	MaxMs    float64 `json:"maxMs"`
	// IdleHeapBytes (in-process) is the live heap the server added, one
	// second after it became ready; IdleRSSBytes (binary) is the
	// process's resident set then.
	IdleHeapBytes uint64 `json:"idleHeapBytes,omitempty"`
	IdleRSSBytes  uint64 `json:"idleRssBytes,omitempty"`
	// MedianCPUMs (binary) is the median of the CPU time (user and
	// system, all threads) the process had used when it became ready:
	// steadier than the time to ready on a shared machine, and what
	// that time is made of on a small one.
	MedianCPUMs float64 `json:"medianCpuMs,omitempty"`

	cpu []time.Duration // of each run, binary only
}

// startupIdle is how long a server is left idle before its memory is read.
const startupIdle = time.Second

// runStartup times the cases.
func runStartup(ctx context.Context, cfg config) (*StartupResult, error) {
	res := &StartupResult{Runs: cfg.StartupRuns, Objects: cfg.StartupObjects, Types: cfg.StartupTypes, TypesFrom: "CRDs stored in etcd"}
	work, err := os.MkdirTemp("", "miniapi-bench-startup-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)

	logf(cfg, "building the miniapi binary")
	bin, err := buildMiniapi(ctx, work)
	if err != nil {
		return res, err
	}
	loaded := filepath.Join(work, "loaded")
	logf(cfg, "storing %d objects and %d CRDs", cfg.StartupObjects, cfg.StartupTypes)
	if err := seedStartup(ctx, cfg, loaded); err != nil {
		return res, fmt.Errorf("seed: %w", err)
	}

	restarted := filepath.Join(work, "restart")
	logf(cfg, "bootstrapping a data directory to restart from")
	if err := seedRestart(ctx, restarted); err != nil {
		return res, fmt.Errorf("seed: %w", err)
	}

	cases := []struct {
		name                    string
		binary, loaded, restart bool
		// noControllers starts the server with every built-in controller
		// off, to set against the same case with all of them on.
		noControllers bool
	}{
		{"in-process, empty", false, false, false, false},
		{"in-process, empty, no controllers", false, false, false, true},
		{"in-process, restart", false, false, true, false},
		{"in-process, loaded", false, true, false, false},
		{"binary, empty", true, false, false, false},
		{"binary, empty, no controllers", true, false, false, true},
		{"binary, restart", true, false, true, false},
		{"binary, loaded", true, true, false, false},
	}
	// Runs go round the cases, so that load from other processes on a
	// shared machine falls on every case alike: the differences between
	// cases (controllers on and off) are measured in the same minutes.
	res.Cases = make([]StartupCase, len(cases))
	times := make([][]time.Duration, len(cases))
	for i, c := range cases {
		res.Cases[i] = StartupCase{Name: c.name, Binary: c.binary, Loaded: c.loaded, Restart: c.restart, NoControllers: c.noControllers}
	}
	stopProfile := cfg.profile("startup")
	defer stopProfile()
	for run := range cfg.StartupRuns {
		for i, c := range cases {
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			dir := filepath.Join(work, fmt.Sprintf("empty-%s-%d-%d", strconv.FormatBool(c.binary), i, run))
			switch {
			case c.loaded:
				dir = loaded
			case c.restart:
				dir = restarted
			}
			// Memory is read on the last run only: the idle wait would
			// otherwise dominate the scenario's time.
			last := run == cfg.StartupRuns-1
			var d time.Duration
			if c.binary {
				d, err = startBinary(ctx, bin, dir, c.noControllers, last, &res.Cases[i])
			} else {
				d, err = startInProcess(ctx, dir, c.noControllers, last, &res.Cases[i])
			}
			if err != nil {
				return res, fmt.Errorf("%s: %w", c.name, err)
			}
			times[i] = append(times[i], d)
			if !c.loaded && !c.restart {
				os.RemoveAll(dir)
			}
		}
	}
	for i := range res.Cases {
		sc := &res.Cases[i]
		sc.MedianMs, sc.MinMs, sc.P90Ms, sc.MaxMs = spread(times[i])
		sc.MedianCPUMs, _, _, _ = spread(sc.cpu)
		logf(cfg, "%s: median %.1f ms (min %.1f, p90 %.1f, max %.1f)", sc.Name, sc.MedianMs, sc.MinMs, sc.P90Ms, sc.MaxMs)
	}
	return res, nil
}

// controllersOff is the --controllers list that turns every built-in
// controller off.
func controllersOff() []string {
	var off []string
	for _, n := range controllers.Names() {
		off = append(off, "-"+n)
	}
	return off
}

// spread returns the median, minimum, 90th percentile and maximum of ds
// in milliseconds.
func spread(ds []time.Duration) (median, lo, p90, hi float64) {
	if len(ds) == 0 {
		return 0, 0, 0, 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	return ms(s[len(s)/2]), ms(s[0]), ms(s[min(len(s)-1, len(s)*9/10)]), ms(s[len(s)-1])
}

// startupCRDs are n namespaced CustomResourceDefinitions
// t00s.bench.miniapi.dev ..., each with a status subresource and a small
// structural schema.
func startupCRDs(n int) ([]*api.Object, error) {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: t%02ds.bench.miniapi.dev}
spec:
  group: bench.miniapi.dev
  scope: Namespaced
  names: {plural: t%02ds, singular: t%02d, kind: T%02d, listKind: T%02dList}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {payload: {type: string}}}
          status: {type: object, properties: {ready: {type: boolean}}}
`, i, i, i, i, i)
	}
	r, err := server.ParseResources([]byte(b.String()))
	return r.CRDs, err
}

// seedStartup starts a server in dir, installs the CRDs and stores the
// objects: half ConfigMaps, half spread over the CRDs' types.
func seedStartup(ctx context.Context, cfg config, dir string) error {
	crds, err := startupCRDs(cfg.StartupTypes)
	if err != nil {
		return err
	}
	sc := serverConfig()
	sc.Listen, sc.DataDir, sc.UnsafeNoFsync, sc.CompactionInterval = "127.0.0.1:0", dir, true, -1
	srv, err := server.Start(ctx, sc)
	if err != nil {
		return err
	}
	m := &miniapi{srv: srv, dir: dir, http: newHTTPClient(64)}
	defer func() {
		m.http.CloseIdleConnections()
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	actx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := srv.ApplyCRDs(actx, crds); err != nil {
		return err
	}
	if err := m.createNamespace(ctx, benchNS); err != nil {
		return err
	}
	half := cfg.StartupObjects / 2
	if err := m.createConfigMaps(ctx, benchNS, "cm", half, cfg.ObjectSize, 16); err != nil {
		return err
	}
	if cfg.StartupTypes == 0 {
		return nil
	}
	rest := cfg.StartupObjects - half
	return parallel(ctx, rest, 16, func(ctx context.Context, i int) error {
		t := i % cfg.StartupTypes
		url := fmt.Sprintf("%s/apis/bench.miniapi.dev/v1/namespaces/%s/t%02ds", m.url(), benchNS, t)
		body := fmt.Appendf(nil, `{"apiVersion":"bench.miniapi.dev/v1","kind":"T%02d","metadata":{"name":%q},"spec":{"payload":"%s"}}`,
			t, objName("obj", i), strings.Repeat("x", max(cfg.ObjectSize-250, 0)))
		_, err := do(ctx, m.http, http.MethodPost, url, body, http.StatusCreated)
		return err
	})
}

// seedRestart starts a server in dir and stops it once ready: what is
// left is what every start writes of itself.
func seedRestart(ctx context.Context, dir string) error {
	sc := serverConfig()
	sc.Listen, sc.DataDir, sc.UnsafeNoFsync, sc.CompactionInterval = "127.0.0.1:0", dir, true, -1
	srv, err := server.Start(ctx, sc)
	if err != nil {
		return err
	}
	err = srv.WaitReady(ctx)
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return errors.Join(err, srv.Shutdown(sctx))
}

// startInProcess times server.Start to the first 200 from /readyz, then
// shuts the server down. With measureMemory it first waits startupIdle
// and records the live heap the server added.
func startInProcess(ctx context.Context, dir string, noControllers, measureMemory bool, sc *StartupCase) (time.Duration, error) {
	var before memSample
	if measureMemory {
		before = sampleMemory()
	}
	client := newHTTPClient(1)
	defer client.CloseIdleConnections()
	start := time.Now()
	scfg := serverConfig()
	scfg.Listen, scfg.DataDir, scfg.UnsafeNoFsync = "127.0.0.1:0", dir, true
	scfg.Controllers = nil // all, the default
	if noControllers {
		scfg.Controllers = controllersOff()
	}
	srv, err := server.Start(ctx, scfg)
	if err != nil {
		return 0, err
	}
	defer func() {
		client.CloseIdleConnections()
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := waitReady(ctx, client, srv.URL()); err != nil {
		return 0, err
	}
	d := time.Since(start)
	if measureMemory {
		time.Sleep(startupIdle)
		after := sampleMemory()
		sc.IdleHeapBytes = after.Heap - min(after.Heap, before.Heap)
	}
	return d, nil
}

// startBinary times exec of the binary to the first 200 from /readyz on
// the URL it prints, then stops it with SIGTERM. With measureMemory it
// first waits startupIdle and records the process's resident set.
func startBinary(ctx context.Context, bin, dir string, noControllers, measureMemory bool, sc *StartupCase) (time.Duration, error) {
	scfg := serverConfig()
	args := []string{"--listen", "127.0.0.1:0", "--data-dir", dir, "--unsafe-no-fsync", "--log-level", "error", "--token-auth-file", scfg.TokenAuthFile}
	if noControllers {
		args = append(args, "--controllers", strings.Join(controllersOff(), ","))
	}
	if scfg.UnsafePlainHTTP {
		args = append(args, "--unsafe-plain-http")
	}
	client := newHTTPClient(1)
	defer client.CloseIdleConnections()
	out := &servingLine{found: make(chan string, 1)}
	start := time.Now()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = out, io.Discard
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	defer stopProcess(cmd, exited)
	var url string
	timer := time.NewTimer(30 * time.Second)
	defer timer.Stop()
	select {
	case url = <-out.found:
	case <-exited:
		return 0, errors.New("miniapi exited without printing its URL")
	case <-timer.C:
		return 0, errors.New("miniapi did not print its URL within 30 s")
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	if err := waitReady(ctx, client, url); err != nil {
		return 0, err
	}
	d := time.Since(start)
	if cpu, ok := processCPU(cmd.Process.Pid); ok {
		sc.cpu = append(sc.cpu, cpu)
	}
	if measureMemory {
		time.Sleep(startupIdle)
		sc.IdleRSSBytes = processRSS(cmd.Process.Pid)
	}
	return d, nil
}

// servingLine is the binary's stdout: it sends the URL of the first
// "miniapi <version> serving on <url>" line on found and discards the
// rest.
type servingLine struct {
	buf   []byte
	found chan string
	sent  bool
}

// Write scans for the serving line; exec calls it from one goroutine.
func (s *servingLine) Write(p []byte) (int, error) {
	if s.sent {
		return len(p), nil
	}
	s.buf = append(s.buf, p...)
	for {
		line, rest, ok := strings.Cut(string(s.buf), "\n")
		if !ok {
			return len(p), nil
		}
		s.buf = []byte(rest)
		if _, url, ok := strings.Cut(line, " serving on "); ok {
			s.sent = true
			s.found <- strings.TrimSpace(url)
			return len(p), nil
		}
	}
}

// stopProcess sends SIGTERM and waits until exited is closed, killing
// the process after 30 s.
func stopProcess(cmd *exec.Cmd, exited <-chan struct{}) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
	}
}

// waitReady polls /readyz every millisecond until it answers 200, for up
// to 30 s.
func waitReady(ctx context.Context, client *http.Client, url string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := do(ctx, client, http.MethodGet, url+"/readyz", nil, http.StatusOK)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("/readyz: %w", err)
		}
		time.Sleep(time.Millisecond)
	}
}

// processRSS is the resident set of process pid in bytes, from
// /proc/pid/status; 0 if unknown.
func processRSS(pid int) uint64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				kb, _ := strconv.ParseUint(f[0], 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}

// processCPU is the CPU time process pid has used, user and system,
// from /proc/pid/stat (in clock ticks, 100 a second on Linux).
func processCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The command name, in parentheses, may hold spaces: count fields
	// after it. utime and stime are the 14th and 15th fields.
	_, rest, ok := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if !ok || len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseUint(f[11], 10, 64)
	stime, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, true
}

// buildMiniapi builds ./cmd/miniapi of this module into dir.
func buildMiniapi(ctx context.Context, dir string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return "", fmt.Errorf("go list -m: %w", err)
	}
	bin := filepath.Join(dir, "miniapi")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/miniapi")
	cmd.Dir = strings.TrimSpace(string(out))
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/miniapi: %w\n%s", err, out)
	}
	return bin, nil
}
