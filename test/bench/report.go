package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is everything one run measured. Summary holds one row per
// figure with its baseline, ratio and target; the scenario fields hold
// the detail.
type Report struct {
	Machine   Machine          `json:"machine"`
	Command   string           `json:"command"`
	Started   time.Time        `json:"started"`
	Elapsed   string           `json:"elapsed"`
	Config    config           `json:"config"`
	Summary   []Row            `json:"summary"`
	Fanout    *FanoutResult    `json:"fanout,omitempty"`
	WritePath *WritePathResult `json:"writePath,omitempty"`
	List      *ListResult      `json:"list,omitempty"`
	Memory    *MemoryResult    `json:"memory,omitempty"`
	Create    *CreateResult    `json:"create,omitempty"`
	Kinds     *KindsResult     `json:"kinds,omitempty"`
	Startup   *StartupResult   `json:"startup,omitempty"`
	Fork      *ForkResult      `json:"fork,omitempty"`
	Logical   *LogicalResult   `json:"logical,omitempty"`
	Cluster   *ClusterResult   `json:"cluster,omitempty"`
	Errors    []string         `json:"errors,omitempty"`
}

// Machine describes where the run happened.
type Machine struct {
	CPUs       int    `json:"cpus"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	CPUModel   string `json:"cpuModel"`
	Go         string `json:"go"`
	OS         string `json:"os"`
	Kernel     string `json:"kernel"`
	// LoadAvg is /proc/loadavg when the run started: the machine is
	// shared, and this says how busy it was.
	LoadAvg string `json:"loadAvg"`
}

// newReport starts a report for cfg on this machine.
func newReport(cfg config) *Report {
	return &Report{
		Started: time.Now(),
		Config:  cfg,
		Machine: Machine{
			CPUs:       runtime.NumCPU(),
			GOMAXPROCS: runtime.GOMAXPROCS(0),
			CPUModel:   cpuModel(),
			Go:         runtime.Version(),
			OS:         runtime.GOOS + "/" + runtime.GOARCH,
			Kernel:     readTrim("/proc/sys/kernel/osrelease"),
			LoadAvg:    readTrim("/proc/loadavg"),
		},
	}
}

// readTrim returns a file's contents without surrounding space, or "".
func readTrim(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// cpuModel is the CPU's model name from /proc/cpuinfo.
func cpuModel() string {
	for line := range strings.SplitSeq(readTrim("/proc/cpuinfo"), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// Row is one figure of the summary: miniapi's value, the baseline's, the
// ratio the target is stated in, and whether the target was met (nil
// when the row has no target).
type Row struct {
	Scenario string  `json:"scenario"`
	Case     string  `json:"case"`
	Value    float64 `json:"value"`
	Unit     string  `json:"unit"`
	Baseline string  `json:"baseline"`
	// BaselineValue is in Unit too.
	BaselineValue float64 `json:"baselineValue"`
	Ratio         float64 `json:"ratio"`
	RatioName     string  `json:"ratioName"`
	Target        string  `json:"target,omitempty"`
	Met           *bool   `json:"met,omitempty"`
	Note          string  `json:"note,omitempty"`
}

// met returns a pointer to b, for Row.Met.
func met(b bool) *bool { return &b }

// summarize derives the summary rows from the scenario results.
func (r *Report) summarize(cfg config) {
	if f := r.Fanout; f != nil {
		for i := 0; i+1 < len(f.Runs); i += 2 {
			mini, raw := f.Runs[i], f.Runs[i+1]
			row := Row{
				Scenario: "fanout", Case: fmt.Sprintf("%d watchers: sustained events/s", mini.Watchers),
				Value: mini.Sustained, Unit: "events/s",
				Baseline: "raw HTTP chunked streams", BaselineValue: raw.Sustained,
				RatioName: "miniapi/raw",
			}
			if raw.Sustained > 0 {
				row.Ratio = mini.Sustained / raw.Sustained
			}
			if mini.Watchers >= 1000 {
				row.Target = "≥ 0.80"
				row.Met = met(row.Ratio >= 0.8)
			}
			var notes []string
			if !mini.Saturated {
				notes = append(notes, "miniapi not saturated at the top rate")
			}
			if !raw.Saturated {
				notes = append(notes, "baseline not saturated at the top rate")
			}
			if s := lastSustained(mini); s != nil {
				notes = append(notes, fmt.Sprintf("at that rate: %.0f deliveries/s, p50 %.1f ms, p99 %.1f ms", s.DeliveredRate, s.P50ms, s.P99ms))
			}
			if s := firstFailed(mini); s != nil {
				notes = append(notes, fmt.Sprintf("next %g/s: %s", s.TargetRate, s.Why))
			}
			row.Note = strings.Join(notes, "; ")
			r.Summary = append(r.Summary, row)
			peak := Row{
				Scenario: "fanout", Case: fmt.Sprintf("%d watchers: peak events/s within bounds", mini.Watchers),
				Value: mini.PeakRate, Unit: "events/s",
				Baseline: "raw HTTP chunked streams", BaselineValue: raw.PeakRate,
				RatioName: "miniapi/raw",
				Note: fmt.Sprintf("highest achieved write rate in any step with p99 ≤ %v and nothing missing; deliveries/s %.0f vs %.0f",
					cfg.MaxP99, mini.PeakDelivered, raw.PeakDelivered),
			}
			if raw.PeakRate > 0 {
				peak.Ratio = mini.PeakRate / raw.PeakRate
			}
			r.Summary = append(r.Summary, peak)
			if mini.Watchers == 100 {
				r.Summary = append(r.Summary, Row{
					Scenario: "fanout", Case: "100 watchers: sustained updates/s (write path)",
					Value: mini.Sustained, Unit: "updates/s", RatioName: "absolute",
					Target: "≥ 1000", Met: met(mini.Sustained >= 1000),
					Note: "paced writers (" + fmt.Sprint(f.Writers) + " concurrent), p99 ≤ 100 ms, nothing missing",
				})
			}
		}
	}
	if w := r.WritePath; w != nil {
		r.Summary = append(r.Summary, Row{
			Scenario: "writepath", Case: fmt.Sprintf("%d watchers, %d unpaced writers: updates/s", w.Watchers, w.Writers),
			Value: w.UpdatesPerSec, Unit: "updates/s",
			Baseline: "raw etcd puts, same concurrency", BaselineValue: w.EtcdPutsPerSec,
			Ratio: w.UpdatesPerSec / w.EtcdPutsPerSec, RatioName: "miniapi/etcd",
			Target: "≥ 1000 updates/s", Met: met(w.UpdatesPerSec >= 1000),
			Note: fmt.Sprintf("delivery p50 %.1f ms, p99 %.1f ms (from the request: %.1f, %.1f), missing %d, rewatches %d; etcd3.Store updates %.0f/s; cores self %.2f, machine %.2f",
				w.P50ms, w.P99ms, w.SentP50ms, w.SentP99ms, w.Missing, w.Rewatches, w.StoreUpdatesPerSec, w.CPU.Self, w.CPU.Machine),
		})
	}
	if l := r.List; l != nil {
		if len(l.Storage) == 3 {
			r.Summary = append(r.Summary, Row{
				Scenario: "list", Case: fmt.Sprintf("%d objects in-process: ms/list", l.Objects),
				Value: l.Storage[0].MedianMs, Unit: "ms", Baseline: "etcd3.Store.List", BaselineValue: l.Storage[2].MedianMs,
				Ratio: l.StorageSpeedup, RatioName: "speedup (etcd/cache)",
				Target: "≥ 5×", Met: met(l.StorageSpeedup >= 5),
				Note: fmt.Sprintf("consistent list from cache %.2f ms", l.Storage[1].MedianMs),
			})
		}
		if len(l.HTTP) == 4 {
			r.Summary = append(r.Summary, Row{
				Scenario: "list", Case: fmt.Sprintf("%d objects over HTTP: ms/list", l.Objects),
				Value: l.HTTP[0].MedianMs, Unit: "ms", Baseline: "Exact list served by etcd", BaselineValue: l.HTTP[2].MedianMs,
				Ratio: l.HTTPSpeedup, RatioName: "speedup (etcd/cache)",
				Target: "≥ 5×", Met: met(l.HTTPSpeedup >= 5),
				Note: fmt.Sprintf("%.1f MB per response; consistent list from cache %.2f ms; the same bytes from a bare net/http server %.2f ms",
					float64(l.ResponseBytes)/1e6, l.HTTP[1].MedianMs, l.HTTP[3].MedianMs),
			})
		}
	}
	if m := r.Memory; m != nil {
		r.Summary = append(r.Summary, Row{
			Scenario: "memory", Case: fmt.Sprintf("cache, per %d B object", m.ObjectBytes),
			Value: m.CacheBytesPerObject, Unit: "B", Baseline: "plain etcd3 list result", BaselineValue: m.ListBytesPerObject,
			Ratio: m.CacheBytesPerObject / m.ListBytesPerObject, RatioName: "cache/list",
			Target: "≤ 3000 B", Met: met(m.CacheBytesPerObject <= 3000),
			Note: fmt.Sprintf("%d objects; Close released %.0f B/object", m.Objects, m.ReleasedBytesPerObject),
		})
		for _, p := range []struct {
			name     string
			w, base  WatcherMemory
			baseName string
		}{
			{"idle watcher in-process", m.InProcess, m.InProcessBaseline, "etcd3.Store.Watch"},
			{"idle watcher over HTTP", m.HTTP, m.HTTPBaseline, "raw HTTP stream"},
		} {
			v, b := p.w.HeapPerWatcher+p.w.StackPerWatcher, p.base.HeapPerWatcher+p.base.StackPerWatcher
			r.Summary = append(r.Summary, Row{
				Scenario: "memory", Case: p.name + ": heap+stack per watcher",
				Value: v, Unit: "B", Baseline: p.baseName, BaselineValue: b,
				Ratio: v / b, RatioName: "miniapi/baseline",
				Note: fmt.Sprintf("%d watchers; heap %.0f + stack %.0f B, %.1f goroutines (baseline %.0f + %.0f B, %.1f)",
					p.w.Watchers, p.w.HeapPerWatcher, p.w.StackPerWatcher, p.w.GoroutinesPerWatcher,
					p.base.HeapPerWatcher, p.base.StackPerWatcher, p.base.GoroutinesPerWatcher),
			})
		}
	}
	if c := r.Create; c != nil {
		for _, row := range c.Rows {
			r.Summary = append(r.Summary, Row{
				Scenario: "create", Case: fmt.Sprintf("%d clients: creates/s", row.Clients),
				Value: row.CreatesPerSec, Unit: "creates/s", Baseline: "raw etcd puts", BaselineValue: row.EtcdPutsPerSec,
				Ratio: row.Ratio, RatioName: "miniapi/etcd",
				Target: "≥ 0.60", Met: met(row.Ratio >= 0.6),
				Note: fmt.Sprintf("etcd3.Store creates %.0f/s; bare net/http server, same client and bodies: %.0f/s (%.2f of raw puts)",
					row.StoreCreatesPerSec, row.HTTPFloorPerSec, row.HTTPFloorPerSec/row.EtcdPutsPerSec),
			})
		}
	}
	if k := r.Kinds; k != nil && len(k.Rows) > 0 {
		base := k.Rows[0] // ConfigMaps
		for _, row := range k.Rows[1:] {
			r.Summary = append(r.Summary,
				Row{
					Scenario: "kinds", Case: row.Kind + ": creates/s", Value: row.CreatesPerSec, Unit: "creates/s",
					Baseline: "ConfigMap creates", BaselineValue: base.CreatesPerSec,
					Ratio: row.CreatesPerSec / base.CreatesPerSec, RatioName: "kind/ConfigMap",
					Note: fmt.Sprintf("%d clients; per-write CPU of kube's rules: go test -bench BenchmarkCreateRules ./builtin", k.Clients),
				},
				Row{
					Scenario: "kinds", Case: fmt.Sprintf("%s: list %d from cache", row.Kind, k.Objects), Value: row.ListMs, Unit: "ms",
					Baseline: "ConfigMap list", BaselineValue: base.ListMs,
					Ratio: row.ListMs / base.ListMs, RatioName: "kind/ConfigMap",
					Note: fmt.Sprintf("%d B per %s, %d B per ConfigMap", row.ObjectBytes, row.Kind, base.ObjectBytes),
				},
				Row{
					Scenario: "kinds", Case: fmt.Sprintf("%s: watch lag, %d watchers", row.Kind, k.Watchers), Value: row.WatchLagMs, Unit: "ms",
					Baseline: "ConfigMap watch lag", BaselineValue: base.WatchLagMs,
				})
		}
	}
	r.summarizeStartup()
	r.summarizeFork()
	r.summarizeLogical()
	r.summarizeCluster()
}

// summarizeCluster adds the rows of issue 14's requirement 6: what the
// simulated cluster and every controller add to a start, how soon a
// Deployment's pods are Ready, and an idle server's CPU, each against a
// server with all of it off where there is one.
func (r *Report) summarizeCluster() {
	c := r.Cluster
	if c == nil {
		return
	}
	on, off := c.StartOn, c.StartOff
	if on.Runs > 0 && off.Runs > 0 {
		added := on.Wall.MedianMs - off.Wall.MedianMs
		r.Summary = append(r.Summary,
			Row{
				Scenario: "cluster", Case: "in-process start to /readyz 200, everything on: added median",
				Value: added, Unit: "ms", Baseline: "everything off", BaselineValue: off.Wall.MedianMs,
				Ratio: on.Wall.MedianMs / off.Wall.MedianMs, RatioName: "on/off",
				Target: "≤ 50 ms", Met: met(added <= 50),
				Note: fmt.Sprintf("%d runs each, interleaved: on %.1f ms (min %.1f, max %.1f), off %.1f ms (min %.1f, max %.1f); every controller, 1 node, scheduler, kubelet",
					on.Runs, on.Wall.MedianMs, on.Wall.MinMs, on.Wall.MaxMs, off.Wall.MedianMs, off.Wall.MinMs, off.Wall.MaxMs),
			},
			Row{
				Scenario: "cluster", Case: "in-process start to /readyz 200, everything on: CPU time",
				Value: on.CPUMs.MedianMs, Unit: "ms", Baseline: "everything off", BaselineValue: off.CPUMs.MedianMs,
				Ratio: on.CPUMs.MedianMs / off.CPUMs.MedianMs, RatioName: "on/off",
				Note: fmt.Sprintf("the process's user+system time over the same interval, medians; added %.1f ms", on.CPUMs.MedianMs-off.CPUMs.MedianMs),
			})
	}
	if c.Deployment.MedianMs > 0 {
		r.Summary = append(r.Summary, Row{
			Scenario: "cluster", Case: fmt.Sprintf("Deployment of %d created to every pod Ready", c.DeploymentReplicas),
			Value: c.Deployment.MedianMs, Unit: "ms", RatioName: "absolute",
			Target: "≤ 1000 ms", Met: met(c.Deployment.MedianMs <= 1000),
			Note: fmt.Sprintf("client-go defaults (protobuf), create to status.readyReplicas == %d by watch; min %.1f, max %.1f ms",
				c.DeploymentReplicas, c.Deployment.MinMs, c.Deployment.MaxMs),
		})
	}
	if c.IdleOn.Rounds > 0 && c.IdleOff.Rounds > 0 {
		r.Summary = append(r.Summary, Row{
			Scenario: "cluster", Case: fmt.Sprintf("idle server, %d nodes, everything on: CPU", c.IdleNodes),
			Value: c.IdleOn.PercentOfCore, Unit: "% of a core", Baseline: "idle, everything off", BaselineValue: c.IdleOff.PercentOfCore,
			Ratio: c.IdleOn.PercentOfCore / c.IdleOff.PercentOfCore, RatioName: "on/off",
			Target: "≤ 1 %", Met: met(c.IdleOn.PercentOfCore <= 1),
			Note: fmt.Sprintf("%.0f s measured per case after %.0f s to settle; machine busy %.2f and %.2f cores meanwhile",
				c.IdleOn.Seconds, c.IdleOn.SettleSeconds, c.IdleOn.MachineCores, c.IdleOff.MachineCores),
		})
	}
}

// summarizeStartup adds one row per start-up case: the median against
// the target, the spread in the note.
func (r *Report) summarizeStartup() {
	st := r.Startup
	if st == nil {
		return
	}
	for _, c := range st.Cases {
		// Issue 10's targets for a start on an empty data directory
		// and a restart; issue 5's for the loaded data directory.
		target, limit := "≤ 100 ms", 100.0
		switch {
		case c.Loaded && c.Binary:
			target, limit = "≤ 300 ms", 300.0
		case c.Loaded:
			target, limit = "≤ 150 ms", 150.0
		case c.Binary:
			target, limit = "≤ 150 ms", 150.0
		}
		note := fmt.Sprintf("%d runs: min %.1f, p90 %.1f, max %.1f ms", st.Runs, c.MinMs, c.P90Ms, c.MaxMs)
		if c.Loaded {
			note += fmt.Sprintf("; %d objects, %d %s", st.Objects, st.Types, st.TypesFrom)
		}
		if c.IdleHeapBytes > 0 {
			note += fmt.Sprintf("; live heap at idle %.1f MB", float64(c.IdleHeapBytes)/1e6)
		}
		if c.IdleRSSBytes > 0 {
			note += fmt.Sprintf("; RSS at idle %.1f MB", float64(c.IdleRSSBytes)/1e6)
		}
		if c.MedianCPUMs > 0 {
			note += fmt.Sprintf("; CPU used by ready, median %.0f ms", c.MedianCPUMs)
		}
		r.Summary = append(r.Summary, Row{
			Scenario: "startup", Case: c.Name + ": median to /readyz 200",
			Value: c.MedianMs, Unit: "ms", RatioName: "absolute",
			Target: target, Met: met(c.MedianMs <= limit), Note: note,
		})
	}
	// What the built-in controllers add to a start (issue 14,
	// requirement 6): the same case with them all on, against all off.
	for _, off := range st.Cases {
		if !off.NoControllers {
			continue
		}
		for _, on := range st.Cases {
			if on.NoControllers || on.Binary != off.Binary || on.Loaded != off.Loaded || on.Restart != off.Restart {
				continue
			}
			added := on.MedianMs - off.MedianMs
			r.Summary = append(r.Summary, Row{
				Scenario: "startup", Case: on.Name + ": controllers' added median",
				Value: added, Unit: "ms", Baseline: "no controllers", BaselineValue: off.MedianMs, Ratio: on.MedianMs / off.MedianMs, RatioName: "on/off",
				Target: "≤ 50 ms", Met: met(added <= 50),
				Note: fmt.Sprintf("median %.1f ms with every controller, %.1f ms with none, same runs interleaved", on.MedianMs, off.MedianMs),
			})
		}
	}
}

// lastSustained is the step that sustained run's sustained rate.
func lastSustained(run FanoutRun) *FanoutStep {
	for i := len(run.Steps) - 1; i >= 0; i-- {
		if s := &run.Steps[i]; s.Sustained && s.TargetRate == run.Sustained {
			return s
		}
	}
	return nil
}

// firstFailed is the first step above the sustained rate that failed.
func firstFailed(run FanoutRun) *FanoutStep {
	for i := range run.Steps {
		if s := &run.Steps[i]; !s.Sustained && s.TargetRate > run.Sustained {
			return s
		}
	}
	return nil
}

// writeTable prints the report for people: the machine, the summary, then
// each scenario's detail.
func (r *Report) writeTable(out io.Writer) {
	m := r.Machine
	fmt.Fprintf(out, "miniapi benchmark — %s, %d CPUs (GOMAXPROCS %d), %s, %s, kernel %s\n",
		m.CPUModel, m.CPUs, m.GOMAXPROCS, m.Go, m.OS, m.Kernel)
	fmt.Fprintf(out, "command: %s\nstarted %s, took %s, load average at start: %s\n\n",
		r.Command, r.Started.Format(time.RFC3339), r.Elapsed, m.LoadAvg)

	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tCASE\tMINIAPI\tBASELINE\tRATIO\tTARGET\tMET")
	for _, row := range r.Summary {
		base := "—"
		if row.Baseline != "" {
			base = fmt.Sprintf("%s (%s)", num(row.BaselineValue, row.Unit), row.Baseline)
		}
		ratio := "—"
		if row.Ratio != 0 {
			ratio = fmt.Sprintf("%.2f %s", row.Ratio, row.RatioName)
		}
		target, ok := "—", "—"
		if row.Target != "" {
			target = row.Target
		}
		if row.Met != nil {
			ok = map[bool]string{true: "yes", false: "NO"}[*row.Met]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", row.Scenario, row.Case, num(row.Value, row.Unit), base, ratio, target, ok)
	}
	tw.Flush()
	fmt.Fprintln(out)
	for _, row := range r.Summary {
		if row.Note != "" {
			fmt.Fprintf(out, "  %s / %s: %s\n", row.Scenario, row.Case, row.Note)
		}
	}

	if f := r.Fanout; f != nil {
		fmt.Fprintf(out, "\nfan-out detail (object %d B, frame %d B, %d paced writers; latency = receipt − write response, sent = receipt − write request)\n", f.ObjectBytes, f.FrameBytes, f.Writers)
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "target\twatchers\trate/s\ttry\twrites/s\tdelivered/s\tp50 ms\tp99 ms\tmax ms\tsent p50/p99 ms\tmissing\trewatch\tterminated\tcores self/machine\tsustained\t")
		for _, run := range f.Runs {
			for _, s := range run.Steps {
				fmt.Fprintf(tw, "%s\t%d\t%g\t%d\t%.0f\t%.0f\t%.1f\t%.1f\t%.1f\t%.1f/%.1f\t%d\t%d\t%d\t%.2f/%.2f\t%s\t\n",
					run.Target, run.Watchers, s.TargetRate, s.Attempt, s.WriteRate, s.DeliveredRate,
					s.P50ms, s.P99ms, s.MaxMs, s.SentP50ms, s.SentP99ms, s.Missing, s.Rewatches, s.Terminated, s.CPU.Self, s.CPU.Machine, yesNo(s.Sustained, s.Disturbed, s.Why))
			}
		}
		tw.Flush()
	}
	if l := r.List; l != nil {
		fmt.Fprintf(out, "\nlist detail (%d objects of %d B)\n", l.Objects, l.ObjectBytes)
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "path\tserved from\tmedian ms\tmin ms\truns")
		for _, t := range append(append([]ListTiming{}, l.Storage...), l.HTTP...) {
			fmt.Fprintf(tw, "%s\t%s\t%.2f\t%.2f\t%d\n", t.Path, t.Served, t.MedianMs, t.MinMs, t.Iters)
		}
		tw.Flush()
	}
	if c := r.Create; c != nil {
		fmt.Fprintf(out, "\ncreate detail (%d B objects, %.1f s per measurement)\n", c.ObjectBytes, c.Seconds)
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "clients\tminiapi HTTP/s\tcores self/machine\tetcd3.Store/s\traw etcd put/s\tbare HTTP/s\tminiapi/etcd\t")
		for _, row := range c.Rows {
			fmt.Fprintf(tw, "%d\t%.0f\t%.2f/%.2f\t%.0f\t%.0f\t%.0f\t%.0f%%\t\n", row.Clients, row.CreatesPerSec, row.CPU.Self, row.CPU.Machine,
				row.StoreCreatesPerSec, row.EtcdPutsPerSec, row.HTTPFloorPerSec, 100*row.Ratio)
		}
		tw.Flush()
	}
	if k := r.Kinds; k != nil {
		fmt.Fprintf(out, "\nkinds detail (%d objects per kind, %d clients, %d watchers)\n", k.Objects, k.Clients, k.Watchers)
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "kind\tbytes\tcreates/s\tcores self/machine\twatch lag ms\tlist ms\t")
		for _, row := range k.Rows {
			fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.2f/%.2f\t%.1f\t%.1f\t\n", row.Kind, row.ObjectBytes, row.CreatesPerSec, row.CPU.Self, row.CPU.Machine, row.WatchLagMs, row.ListMs)
		}
		tw.Flush()
	}
	for _, e := range r.Errors {
		fmt.Fprintf(out, "\nERROR: %s\n", e)
	}
}

// yesNo renders a step's verdict.
func yesNo(ok, disturbed bool, why string) string {
	switch {
	case ok:
		return "yes"
	case disturbed:
		return "no (disturbed, repeated): " + why
	}
	return "no: " + why
}

// num formats a value with its unit.
func num(v float64, unit string) string {
	switch unit {
	case "ms":
		return fmt.Sprintf("%.2f ms", v)
	case "B":
		return fmt.Sprintf("%.0f B", v)
	case "% of a core":
		return fmt.Sprintf("%.2f %%", v)
	default:
		return fmt.Sprintf("%.0f %s", v, unit)
	}
}
