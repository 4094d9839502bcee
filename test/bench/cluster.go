package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"time"

	"github.com/miniapi/miniapi/server"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// ClusterResult is what the simulated cluster costs (issue 14,
// requirement 6), each figure against a server with all of it off,
// measured in the same run: start-up, a Deployment's pods becoming
// Ready, and an idle server's CPU.
type ClusterResult struct {
	// StartOn and StartOff are the timed starts with everything on
	// (every controller, one node, scheduler, kubelet) and everything off,
	// interleaved run by run.
	StartOn  ClusterStart `json:"startOn"`
	StartOff ClusterStart `json:"startOff"`
	// Deployment is a Deployment of DeploymentReplicas pods created with
	// client-go until its status counts them all Ready.
	Deployment         Spread `json:"deployment"`
	DeploymentReplicas int    `json:"deploymentReplicas"`
	// IdleOn and IdleOff are an idle server's CPU with everything on and
	// IdleNodes nodes, and with everything off.
	IdleOn    ClusterIdle `json:"idleOn"`
	IdleOff   ClusterIdle `json:"idleOff"`
	IdleNodes int         `json:"idleNodes"`
}

// ClusterStart is one way of starting, timed Runs times: wall time and
// this process's CPU time from server.Start to the first 200 from
// /readyz.
type ClusterStart struct {
	Runs  int    `json:"runs"`
	Wall  Spread `json:"wall"`
	CPUMs Spread `json:"cpuMs"`
}

// Spread is a median with its extremes, in milliseconds.
type Spread struct {
	MedianMs float64 `json:"medianMs"`
	MinMs    float64 `json:"minMs"`
	MaxMs    float64 `json:"maxMs"`
}

// ClusterIdle is an idle server's CPU use: the share of one core the
// process used over Seconds (summed over Rounds measurements), and the
// whole machine's busy cores meanwhile, to show how loaded it was.
type ClusterIdle struct {
	Rounds         int     `json:"rounds"`
	Seconds        float64 `json:"seconds"`
	PercentOfCore  float64 `json:"percentOfCore"`
	MachineCores   float64 `json:"machineCores"`
	SettleSeconds  float64 `json:"settleSeconds"`
	CPUSecondsUsed float64 `json:"cpuSecondsUsed"`
}

// clusterServer configures a server with the simulated cluster and every
// controller on (nodes > 0), or with all of it off (nodes == 0).
func clusterServer(dir string, nodes int) server.Config {
	sc := serverConfig()
	sc.Listen, sc.DataDir, sc.UnsafeNoFsync = "127.0.0.1:0", dir, true
	sc.Controllers = controllersOff()
	if nodes > 0 {
		sc.Controllers = nil // all, the default
		sc.Nodes, sc.Scheduler, sc.Kubelet = nodes, true, true
	}
	return sc
}

// runCluster measures the three figures.
func runCluster(ctx context.Context, cfg config) (*ClusterResult, error) {
	res := &ClusterResult{DeploymentReplicas: 3, IdleNodes: cfg.ClusterIdleNodes}
	work, err := os.MkdirTemp("", "miniapi-bench-cluster-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)

	// Start-up: the runs alternate, so that load from other processes
	// falls on both alike.
	var on, off, onCPU, offCPU []time.Duration
	for run := range cfg.ClusterStartRuns {
		for _, nodes := range []int{1, 0} {
			dir := filepath.Join(work, fmt.Sprintf("start-%d-%d", nodes, run))
			wall, cpu, err := timeStart(ctx, clusterServer(dir, nodes))
			os.RemoveAll(dir)
			if err != nil {
				return res, fmt.Errorf("start (nodes %d): %w", nodes, err)
			}
			if nodes > 0 {
				on, onCPU = append(on, wall), append(onCPU, cpu)
			} else {
				off, offCPU = append(off, wall), append(offCPU, cpu)
			}
		}
	}
	res.StartOn = ClusterStart{Runs: len(on), Wall: spreadOf(on), CPUMs: spreadOf(onCPU)}
	res.StartOff = ClusterStart{Runs: len(off), Wall: spreadOf(off), CPUMs: spreadOf(offCPU)}
	logf(cfg, "start to ready: everything on %.1f ms (CPU %.1f ms), off %.1f ms (CPU %.1f ms)",
		res.StartOn.Wall.MedianMs, res.StartOn.CPUMs.MedianMs, res.StartOff.Wall.MedianMs, res.StartOff.CPUMs.MedianMs)

	if res.Deployment, err = timeDeployments(ctx, cfg, filepath.Join(work, "deploy"), res.DeploymentReplicas); err != nil {
		return res, fmt.Errorf("deployment: %w", err)
	}
	logf(cfg, "deployment of %d to ready: median %.1f ms", res.DeploymentReplicas, res.Deployment.MedianMs)

	// Idle: rounds alternate off and on for the same reason.
	for round := range cfg.ClusterIdleRounds {
		for _, nodes := range []int{0, cfg.ClusterIdleNodes} {
			dir := filepath.Join(work, fmt.Sprintf("idle-%d-%d", nodes, round))
			name, into := "cluster-idle-off", &res.IdleOff
			if nodes > 0 {
				name, into = "cluster-idle-on", &res.IdleOn
			}
			err := measureIdle(ctx, cfg, clusterServer(dir, nodes), name, into)
			os.RemoveAll(dir)
			if err != nil {
				return res, fmt.Errorf("idle (nodes %d): %w", nodes, err)
			}
		}
	}
	logf(cfg, "idle: %d nodes and everything on %.2f%% of a core, everything off %.2f%%",
		cfg.ClusterIdleNodes, res.IdleOn.PercentOfCore, res.IdleOff.PercentOfCore)
	return res, nil
}

// timeStart starts a server and returns the wall and CPU time from
// server.Start to the first 200 from /readyz, then shuts it down.
func timeStart(ctx context.Context, sc server.Config) (wall, cpu time.Duration, err error) {
	// The previous server's garbage is collected now, not during the
	// measured start.
	runtime.GC()
	client := newHTTPClient(1)
	defer client.CloseIdleConnections()
	cpu0, start := selfCPU(), time.Now()
	srv, err := server.Start(ctx, sc)
	if err != nil {
		return 0, 0, err
	}
	defer shutdown(srv)
	if err := waitReady(ctx, client, srv.URL()); err != nil {
		return 0, 0, err
	}
	return time.Since(start), selfCPU() - cpu0, nil
}

// shutdown stops srv, waiting up to 30 s.
func shutdown(srv *server.Server) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = srv.Shutdown(ctx)
}

// timeDeployments creates cfg.ClusterDeployments Deployments one after
// the other on a server with everything on and one node, through
// client-go with its defaults (protobuf, its rate limits), and times each
// from the create call to the first watch event whose status counts
// every replica Ready.
func timeDeployments(ctx context.Context, cfg config, dir string, replicas int) (Spread, error) {
	srv, err := server.Start(ctx, clusterServer(dir, 1))
	if err != nil {
		return Spread{}, err
	}
	defer shutdown(srv)
	rc := srv.AdminConfig()
	rc.ContentType = "application/vnd.kubernetes.protobuf"
	rc.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return Spread{}, err
	}
	// The cluster is ready for pods once the node is and the default
	// ServiceAccount, which admission requires of every pod, exists.
	if err := srv.Cluster().Nodes().WaitIdle(ctx); err != nil {
		return Spread{}, err
	}
	if !waitFor(ctx, time.Minute, func() bool {
		_, err := client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil
	}) {
		return Spread{}, fmt.Errorf("no default ServiceAccount after a minute")
	}
	var ds []time.Duration
	for i := range cfg.ClusterDeployments {
		d, err := timeDeployment(ctx, client, fmt.Sprintf("web-%d", i), int32(replicas))
		if err != nil {
			return Spread{}, err
		}
		ds = append(ds, d)
	}
	return spreadOf(ds), nil
}

// timeDeployment creates one Deployment in default, as kubectl create
// deployment NAME --image=nginx --replicas=N does, and waits for its
// status to count every replica Ready.
func timeDeployment(ctx context.Context, client kubernetes.Interface, name string, replicas int32) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	deployments := client.AppsV1().Deployments("default")
	w, err := deployments.Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
	if err != nil {
		return 0, err
	}
	defer w.Stop()
	labels := map[string]string{"app": name}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx"}}},
			},
		},
	}
	start := time.Now()
	if _, err := deployments.Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		return 0, err
	}
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return 0, fmt.Errorf("deployment %s: watch closed", name)
			}
			if d, ok := ev.Object.(*appsv1.Deployment); ok && d.Status.ReadyReplicas == replicas {
				return time.Since(start), nil
			}
		case <-ctx.Done():
			return 0, fmt.Errorf("deployment %s: not ready: %w", name, ctx.Err())
		}
	}
}

// measureIdle starts a server, leaves it ClusterIdleSettle to finish its
// start-up work (informers' lists, the controllers' first passes, the
// nodes' registration and Leases), then measures this process's CPU use
// over ClusterIdleDuration while nothing else runs in it, and adds the
// reading to into.
func measureIdle(ctx context.Context, cfg config, sc server.Config, profile string, into *ClusterIdle) error {
	srv, err := server.Start(ctx, sc)
	if err != nil {
		return err
	}
	defer shutdown(srv)
	select {
	case <-time.After(cfg.ClusterIdleSettle):
	case <-ctx.Done():
		return ctx.Err()
	}
	// The heap earlier phases left is collected and returned to the
	// kernel now: otherwise the runtime's scavenger returns it during
	// the measurement, at up to 1% of a core, a cost of the bench's
	// history rather than of the server.
	debug.FreeOSMemory()
	stopProfile := cfg.profile(profile)
	m := startCPU()
	cpu0 := selfCPU()
	select {
	case <-time.After(cfg.ClusterIdleDuration):
	case <-ctx.Done():
		stopProfile()
		return ctx.Err()
	}
	used, u := selfCPU()-cpu0, m.stop()
	stopProfile()
	wall := time.Since(m.wall).Seconds()
	n := float64(into.Rounds)
	into.Rounds++
	into.Seconds += wall
	into.CPUSecondsUsed += used.Seconds()
	into.PercentOfCore = 100 * into.CPUSecondsUsed / into.Seconds
	into.MachineCores = (into.MachineCores*n + u.Machine) / (n + 1)
	into.SettleSeconds = cfg.ClusterIdleSettle.Seconds()
	return nil
}

// spreadOf is the median, minimum and maximum of ds.
func spreadOf(ds []time.Duration) Spread {
	if len(ds) == 0 {
		return Spread{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	return Spread{MedianMs: ms(s[len(s)/2]), MinMs: ms(s[0]), MaxMs: ms(s[len(s)-1])}
}
