package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// config sizes every scenario. defaultConfig is the full run, quickConfig
// the smoke run; flags override single fields.
type config struct {
	// Scenarios to run, in this order: fanout, writepath, list, memory,
	// create, kinds, startup, cluster.
	Scenarios []string

	// Fan-out: watcher counts, the ladder of target event rates, how long
	// each rate is held, how long to wait at most for every watcher to
	// receive every event afterwards (an event not received by then is
	// missing; one received is counted with its latency, however late),
	// how many times a failing rate is retried, and how many bisection
	// steps refine the sustained rate between the last good and first bad
	// rate.
	Watchers []int
	Rates    []float64
	Step     time.Duration
	Drain    time.Duration
	Attempts int
	Refine   int
	// DisturbedRetries is how many failed steps per rate may be repeated
	// because other processes on the machine took more than half a core
	// meanwhile (measured from /proc/stat; steps of a second or more).
	DisturbedRetries int
	// Writers is the number of concurrent paced writers; FanoutObjects the
	// number of ConfigMaps they update round-robin.
	Writers       int
	FanoutObjects int
	// MaxP99 is the latency bound of a sustained rate.
	MaxP99 time.Duration

	// Write path: watchers attached, concurrent unpaced writers, duration.
	WritePathWatchers int
	WritePathWriters  int
	WritePathDuration time.Duration

	// ObjectSize is the approximate encoded size of every object.
	ObjectSize int

	// List: objects listed, and the bounds on repetitions.
	ListObjects int
	ListIters   int
	ListTime    time.Duration

	// Memory: objects cached and idle watchers opened.
	MemObjects  int
	MemWatchers int

	// Create: client concurrencies and how long each is measured.
	Concurrency    []int
	CreateDuration time.Duration
	// KindsObjects, KindsClients and KindsWatchers size the kinds
	// scenario: objects created per kind, by that many clients, watched
	// by that many watchers.
	KindsObjects, KindsClients, KindsWatchers int

	// Startup: timed starts per case, and the loaded data directory's
	// objects and extra types.
	StartupRuns    int
	StartupObjects int
	StartupTypes   int

	// Cluster: timed starts per case (everything on, everything off),
	// Deployments timed one after the other, and the idle servers:
	// nodes registered, rounds of (off, on), how long each is left to
	// settle before it is measured, and for how long.
	ClusterStartRuns    int
	ClusterDeployments  int
	ClusterIdleNodes    int
	ClusterIdleRounds   int
	ClusterIdleSettle   time.Duration
	ClusterIdleDuration time.Duration

	// Fork: ConfigMaps in the snapshot, and timed starts per case (from
	// the snapshot, from nothing).
	ForkObjects int
	ForkRuns    int
	// LogicalRuns starts are timed per case; LogicalIdle clusters are
	// left idle for the memory figures (after LogicalIdleSettle);
	// LogicalParallel are started at once.
	LogicalRuns, LogicalIdle, LogicalParallel int
	LogicalIdleSettle                         time.Duration

	// ProfileDir, when set, receives a CPU profile of each miniapi
	// measurement phase (see profile).
	ProfileDir string

	// Log receives progress lines; nil discards them.
	Log io.Writer `json:"-"`
}

// profile starts a CPU profile of one phase, written to
// ProfileDir/name.pprof, and returns the function that ends it. Without
// ProfileDir it does nothing.
func (cfg config) profile(name string) (stop func()) {
	if cfg.ProfileDir == "" {
		return func() {}
	}
	f, err := os.Create(filepath.Join(cfg.ProfileDir, name+".pprof"))
	if err != nil {
		logf(cfg, "profile %s: %v", name, err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		logf(cfg, "profile %s: %v", name, err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

// heapProfile writes a heap profile (live objects, after a GC) to
// ProfileDir/name.heap.pprof. Without ProfileDir it does nothing.
func (cfg config) heapProfile(name string) {
	if cfg.ProfileDir == "" {
		return
	}
	f, err := os.Create(filepath.Join(cfg.ProfileDir, name+".heap.pprof"))
	if err != nil {
		logf(cfg, "heap profile %s: %v", name, err)
		return
	}
	defer f.Close()
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		logf(cfg, "heap profile %s: %v", name, err)
	}
}

// allScenarios is every scenario in run order.
var allScenarios = []string{"fanout", "writepath", "list", "memory", "create", "kinds", "startup", "cluster", "fork", "logical"}

// defaultConfig is the full run: a few minutes on 2 cores.
func defaultConfig() config {
	return config{
		Scenarios:           allScenarios,
		Watchers:            []int{100, 1000, 5000},
		Rates:               []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000},
		Step:                2 * time.Second,
		Drain:               10 * time.Second,
		Attempts:            2,
		Refine:              3,
		DisturbedRetries:    2,
		Writers:             16,
		FanoutObjects:       100,
		MaxP99:              100 * time.Millisecond,
		WritePathWatchers:   100,
		WritePathWriters:    32,
		WritePathDuration:   5 * time.Second,
		ObjectSize:          1024,
		ListObjects:         10000,
		ListIters:           30,
		ListTime:            10 * time.Second,
		MemObjects:          10000,
		MemWatchers:         1000,
		Concurrency:         []int{1, 16, 64},
		CreateDuration:      3 * time.Second,
		KindsObjects:        2000,
		KindsClients:        16,
		KindsWatchers:       100,
		StartupRuns:         20,
		StartupObjects:      10000,
		StartupTypes:        20,
		ClusterStartRuns:    10,
		ClusterDeployments:  5,
		ClusterIdleNodes:    10,
		ClusterIdleRounds:   1,
		ClusterIdleSettle:   10 * time.Second,
		ClusterIdleDuration: 30 * time.Second,
		ForkObjects:         10000,
		ForkRuns:            10,
		LogicalRuns:         10,
		LogicalIdle:         20,
		LogicalParallel:     200,
		LogicalIdleSettle:   5 * time.Second,
	}
}

// quickConfig is the smoke run: about 30 seconds.
func quickConfig() config {
	c := defaultConfig()
	c.Watchers = []int{100, 1000}
	c.Rates = []float64{1, 10, 100, 1000}
	c.Step = 500 * time.Millisecond
	c.Drain = 3 * time.Second
	c.Attempts = 1
	c.Refine = 0
	c.DisturbedRetries = 0
	c.WritePathDuration = time.Second
	c.ListObjects = 2000
	c.ListIters = 5
	c.ListTime = 2 * time.Second
	c.MemObjects = 2000
	c.MemWatchers = 200
	c.CreateDuration = 500 * time.Millisecond
	c.KindsObjects, c.KindsWatchers = 200, 10
	c.StartupRuns = 5
	c.StartupObjects = 2000
	c.ClusterStartRuns, c.ClusterDeployments = 3, 2
	c.ClusterIdleSettle, c.ClusterIdleDuration = 3*time.Second, 5*time.Second
	c.ForkObjects, c.ForkRuns = 500, 2
	c.LogicalRuns, c.LogicalIdle, c.LogicalParallel, c.LogicalIdleSettle = 2, 3, 10, time.Second
	return c
}

func main() {
	if err := mainErr(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// mainErr parses args, runs the selected scenarios and prints the report.
func mainErr(args []string) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	quick := fs.Bool("quick", false, "a ~30 s smoke run with smaller sizes")
	fs.BoolVar(&plainHTTP, "plain-http", false, "servers serve plain HTTP without authentication (--unsafe-plain-http), to compare with the secure default")
	asJSON := fs.Bool("json", false, "write the report as JSON on stdout (the table goes to stderr)")
	quiet := fs.Bool("q", false, "no progress lines on stderr")
	profileDir := fs.String("profile-dir", "", "write a CPU profile of each miniapi measurement phase to this directory (server, etcd and clients share the process)")
	scenarios := fs.String("scenarios", "", "comma-separated scenarios to run: "+strings.Join(allScenarios, ","))
	watchers := fs.String("watchers", "", "fan-out: comma-separated watcher counts")
	rates := fs.String("rates", "", "fan-out: comma-separated ladder of target events/s")
	step := fs.Duration("step", 0, "fan-out: how long each rate is held")
	drain := fs.Duration("drain", 0, "fan-out: how long to wait for late events after a step")
	attempts := fs.Int("attempts", 0, "fan-out: tries per rate before it counts as not sustained")
	refine := fs.Int("refine", -1, "fan-out: bisection steps between the last sustained and the first failing rate")
	writers := fs.Int("writers", 0, "fan-out: concurrent paced writers")
	objSize := fs.Int("object-size", 0, "approximate encoded size of each object in bytes")
	listObjects := fs.Int("list-objects", 0, "list: objects listed")
	listIters := fs.Int("list-iters", 0, "list: rounds of timed lists (bounded also by -list-time)")
	listTime := fs.Duration("list-time", 0, "list: time budget for the timed rounds of each level")
	memObjects := fs.Int("mem-objects", 0, "memory: objects cached")
	memWatchers := fs.Int("mem-watchers", 0, "memory: idle watchers opened")
	wpWriters := fs.Int("writepath-writers", 0, "writepath: concurrent unpaced writers")
	wpDur := fs.Duration("writepath-duration", 0, "writepath: how long writers run")
	conc := fs.String("concurrency", "", "create: comma-separated client concurrencies")
	createDur := fs.Duration("create-duration", 0, "create: how long each concurrency is measured")
	startupRuns := fs.Int("startup-runs", 0, "startup: timed starts per case")
	startupObjects := fs.Int("startup-objects", 0, "startup: objects in the loaded data directory")
	startupTypes := fs.Int("startup-types", 0, "startup: extra types in the loaded data directory")
	clusterRuns := fs.Int("cluster-start-runs", 0, "cluster: timed starts per case")
	clusterDeployments := fs.Int("cluster-deployments", 0, "cluster: Deployments timed to Ready")
	clusterNodes := fs.Int("cluster-idle-nodes", 0, "cluster: simulated nodes of the idle server")
	clusterRounds := fs.Int("cluster-idle-rounds", 0, "cluster: idle measurements per case")
	clusterSettle := fs.Duration("cluster-idle-settle", 0, "cluster: how long a server is left before its idle CPU is measured")
	clusterIdle := fs.Duration("cluster-idle", 0, "cluster: how long idle CPU is measured")
	forkObjects := fs.Int("fork-objects", 0, "fork: ConfigMaps in the snapshot")
	forkRuns := fs.Int("fork-runs", 0, "fork: timed starts per case")
	logicalRuns := fs.Int("logical-runs", 0, "logical: timed starts per case")
	logicalIdle := fs.Int("logical-idle", 0, "logical: clusters left idle for the memory figures")
	logicalParallel := fs.Int("logical-parallel", 0, "logical: clusters started at once")
	if err := fs.Parse(args); err != nil {
		return err
	}

	cfg := defaultConfig()
	if *quick {
		cfg = quickConfig()
	}
	var err error
	if *scenarios != "" {
		cfg.Scenarios = strings.Split(*scenarios, ",")
		for _, s := range cfg.Scenarios {
			if !slices.Contains(allScenarios, s) {
				return fmt.Errorf("unknown scenario %q (want some of %s)", s, strings.Join(allScenarios, ","))
			}
		}
	}
	if *watchers != "" {
		if cfg.Watchers, err = parseInts(*watchers); err != nil {
			return err
		}
	}
	if *rates != "" {
		if cfg.Rates, err = parseFloats(*rates); err != nil {
			return err
		}
	}
	if *conc != "" {
		if cfg.Concurrency, err = parseInts(*conc); err != nil {
			return err
		}
	}
	setDur(&cfg.Step, *step)
	setDur(&cfg.Drain, *drain)
	setDur(&cfg.WritePathDuration, *wpDur)
	setDur(&cfg.CreateDuration, *createDur)
	setInt(&cfg.Attempts, *attempts)
	setInt(&cfg.Writers, *writers)
	setInt(&cfg.ObjectSize, *objSize)
	setInt(&cfg.ListObjects, *listObjects)
	setInt(&cfg.ListIters, *listIters)
	setDur(&cfg.ListTime, *listTime)
	setInt(&cfg.MemObjects, *memObjects)
	setInt(&cfg.MemWatchers, *memWatchers)
	setInt(&cfg.WritePathWriters, *wpWriters)
	setInt(&cfg.StartupRuns, *startupRuns)
	setInt(&cfg.StartupObjects, *startupObjects)
	setInt(&cfg.StartupTypes, *startupTypes)
	setInt(&cfg.ClusterStartRuns, *clusterRuns)
	setInt(&cfg.ClusterDeployments, *clusterDeployments)
	setInt(&cfg.ClusterIdleNodes, *clusterNodes)
	setInt(&cfg.ClusterIdleRounds, *clusterRounds)
	setDur(&cfg.ClusterIdleSettle, *clusterSettle)
	setDur(&cfg.ClusterIdleDuration, *clusterIdle)
	setInt(&cfg.ForkObjects, *forkObjects)
	setInt(&cfg.ForkRuns, *forkRuns)
	setInt(&cfg.LogicalRuns, *logicalRuns)
	setInt(&cfg.LogicalIdle, *logicalIdle)
	setInt(&cfg.LogicalParallel, *logicalParallel)
	if *refine >= 0 {
		cfg.Refine = *refine
	}
	if !*quiet {
		cfg.Log = os.Stderr
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if *profileDir != "" {
		if err := os.MkdirAll(*profileDir, 0o755); err != nil {
			return err
		}
		cfg.ProfileDir = *profileDir
	}

	rep, err := run(ctx, cfg)
	if rep != nil {
		rep.Command = "go run ./test/bench " + strings.Join(args, " ")
		if *asJSON {
			enc := json.NewEncoder(os.Stdout)
			enc.SetIndent("", "  ")
			if jerr := enc.Encode(rep); jerr != nil {
				err = errors.Join(err, jerr)
			}
			rep.writeTable(os.Stderr)
		} else {
			rep.writeTable(os.Stdout)
		}
	}
	return err
}

// run executes the scenarios cfg selects and returns what they measured.
// A scenario that fails is recorded in the report and the others still
// run; the error joins every failure.
func run(ctx context.Context, cfg config) (*Report, error) {
	raiseFileLimit(cfg)
	rep := newReport(cfg)
	start := time.Now()
	var errs []error
	for _, s := range cfg.Scenarios {
		if ctx.Err() != nil {
			errs = append(errs, ctx.Err())
			break
		}
		logf(cfg, "== %s", s)
		var err error
		switch s {
		case "fanout":
			rep.Fanout, err = runFanout(ctx, cfg)
		case "writepath":
			rep.WritePath, err = runWritePath(ctx, cfg)
		case "list":
			rep.List, err = runList(ctx, cfg)
		case "memory":
			rep.Memory, err = runMemory(ctx, cfg)
		case "create":
			rep.Create, err = runCreate(ctx, cfg)
		case "kinds":
			rep.Kinds, err = runKinds(ctx, cfg)
		case "startup":
			rep.Startup, err = runStartup(ctx, cfg)
		case "cluster":
			rep.Cluster, err = runCluster(ctx, cfg)
		case "fork":
			rep.Fork, err = runFork(ctx, cfg)
		case "logical":
			rep.Logical, err = runLogical(ctx, cfg)
		}
		if err != nil {
			err = fmt.Errorf("%s: %w", s, err)
			rep.Errors = append(rep.Errors, err.Error())
			errs = append(errs, err)
			logf(cfg, "%v", err)
		}
	}
	rep.Elapsed = time.Since(start).Round(time.Second).String()
	rep.summarize(cfg)
	return rep, errors.Join(errs...)
}

// logf writes one progress line.
func logf(cfg config, format string, args ...any) {
	if cfg.Log != nil {
		fmt.Fprintf(cfg.Log, time.Now().Format("15:04:05 ")+format+"\n", args...)
	}
}

// parseInts parses a comma-separated list of positive counts.
func parseInts(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("bad count %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// parseFloats parses a comma-separated list of positive rates.
func parseFloats(s string) ([]float64, error) {
	var out []float64
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("bad rate %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// setDur overrides *dst with v when v is set.
func setDur(dst *time.Duration, v time.Duration) {
	if v > 0 {
		*dst = v
	}
}

// setInt overrides *dst with v when v is set.
func setInt(dst *int, v int) {
	if v > 0 {
		*dst = v
	}
}
