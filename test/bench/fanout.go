package main

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// fanoutTarget is a server the fan-out scenario drives: writes go in,
// watch streams come out.
type fanoutTarget interface {
	streamTarget
	// name labels the target in results.
	name() string
	// write makes the i-th write and returns the resourceVersion its
	// response acknowledged.
	write(ctx context.Context, c *http.Client, i int) (int64, error)
	// currentRV is the revision a new watch should start after.
	currentRV(ctx context.Context) (int64, error)
	// streams is the number of watches the server has registered.
	streams() int
	// terminated counts watches the server closed as too slow.
	terminated() int64
}

// miniapiTarget updates ConfigMaps in benchNS with PUT and watches them.
type miniapiTarget struct {
	m       *miniapi
	objects int // updated round-robin
	size    int
	seq     atomic.Int64
}

func (t *miniapiTarget) name() string { return "miniapi" }

func (t *miniapiTarget) watchURL(from int64) string {
	return t.m.collectionURL(benchNS) + "?watch=true&resourceVersion=" + strconv.FormatInt(from, 10)
}

func (t *miniapiTarget) write(ctx context.Context, c *http.Client, i int) (int64, error) {
	name := objName("fan", i%t.objects)
	body, err := do(ctx, c, http.MethodPut, t.m.collectionURL(benchNS)+"/"+name,
		configMapJSON(benchNS, name, t.seq.Add(1), t.size), http.StatusOK)
	if err != nil {
		return 0, err
	}
	return parseRV(body)
}

func (t *miniapiTarget) currentRV(ctx context.Context) (int64, error) {
	return t.m.listRV(ctx, benchNS)
}

func (t *miniapiTarget) streams() int { return t.m.configMaps().Stats().Watchers }

func (t *miniapiTarget) terminated() int64 { return t.m.configMaps().Stats().TerminatedWatchers }

// rawTarget publishes to the raw-stream baseline with the same request
// body a miniapi update sends.
type rawTarget struct {
	r    *rawStreams
	size int
	seq  atomic.Int64
}

func (t *rawTarget) name() string                             { return "raw streams" }
func (t *rawTarget) watchURL(from int64) string               { return t.r.watchURL(from) }
func (t *rawTarget) streams() int                             { return t.r.streams() }
func (t *rawTarget) terminated() int64                        { return 0 }
func (t *rawTarget) currentRV(context.Context) (int64, error) { return t.r.currentRV(), nil }

func (t *rawTarget) write(ctx context.Context, c *http.Client, i int) (int64, error) {
	body, err := do(ctx, c, http.MethodPut, t.r.publishURL(),
		configMapJSON(benchNS, objName("fan", i), t.seq.Add(1), t.size), http.StatusOK)
	if err != nil {
		return 0, err
	}
	return parseRV(body)
}

// FanoutResult is the fan-out scenario's outcome.
type FanoutResult struct {
	// ObjectBytes and FrameBytes are the sizes of one updated object and
	// of its watch frame.
	ObjectBytes int         `json:"objectBytes"`
	FrameBytes  int         `json:"frameBytes"`
	Writers     int         `json:"writers"`
	Runs        []FanoutRun `json:"runs"`
}

// FanoutRun is one target with one watcher count, rate by rate.
type FanoutRun struct {
	Target   string `json:"target"`
	Watchers int    `json:"watchers"`
	// Sustained is the highest rate (events/s) sustained: p99 within the
	// bound, nothing missing, writers on pace. Saturated is false when
	// even the highest rate tried passed, so Sustained is a lower bound.
	Sustained float64 `json:"sustainedEventsPerSec"`
	Saturated bool    `json:"saturated"`
	// PeakRate is the highest write rate achieved (whatever the target)
	// in any step with p99 within the bound and nothing missing, and
	// PeakDelivered the deliveries per second in that step: a finer
	// figure than Sustained where the writers, starved of CPU, could
	// not keep the target pace.
	PeakRate      float64      `json:"peakEventsPerSec"`
	PeakDelivered float64      `json:"peakDeliveredPerSec"`
	OpenSeconds   float64      `json:"openSeconds"`
	Steps         []FanoutStep `json:"steps"`
}

// FanoutStep is one rate held for one step.
type FanoutStep struct {
	TargetRate float64 `json:"targetRate"`
	Attempt    int     `json:"attempt"`
	delivery
	Sustained bool   `json:"sustained"`
	Why       string `json:"why,omitempty"`
	// Disturbed marks a step that failed while other processes kept
	// more than disturbedCores busy; it is repeated (up to
	// DisturbedRetries times) without counting as an attempt.
	Disturbed bool `json:"disturbed,omitempty"`
}

// delivery is what a set of watchers received of a set of acknowledged
// writes.
type delivery struct {
	Planned     int     `json:"planned"`
	Acked       int     `json:"acked"`
	WriteErrors int     `json:"writeErrors"`
	FirstError  string  `json:"firstError,omitempty"`
	WriteRate   float64 `json:"writeRate"`
	// Delivered counts events received (each watcher counts each event
	// once); DeliveredRate divides by the step or, if later, the time of
	// the last receipt.
	Delivered     int64   `json:"delivered"`
	DeliveredRate float64 `json:"deliveredRate"`
	// Latency from the write's acknowledgement (its response read) to
	// receipt; 0 when the event arrived first. SentP50ms and SentP99ms
	// measure from the write's request instead: they include the write
	// path, and stay meaningful when the writers' own goroutines wait for
	// CPU and read their responses late.
	P50ms      float64 `json:"p50ms"`
	P99ms      float64 `json:"p99ms"`
	MaxMs      float64 `json:"maxMs"`
	SentP50ms  float64 `json:"sentP50ms"`
	SentP99ms  float64 `json:"sentP99ms"`
	Missing    int64   `json:"missing"`
	Duplicates int64   `json:"duplicates"`
	Rewatches  int64   `json:"rewatches"`
	Terminated int64   `json:"terminated"`
	// ErrorFrames counts ERROR frames and re-watches that failed.
	ErrorFrames int64 `json:"errorFrames"`
	// CPU is the cores used while writing and delivering.
	CPU CPUUse `json:"cpu"`
}

// runFanout measures fan-out on miniapi and on the raw-stream baseline for
// every watcher count. The two targets climb their ladders in step, rate
// by rate (miniapi, then the baseline, at each rate), so that the load
// other processes put on the shared machine falls on both alike.
func runFanout(ctx context.Context, cfg config) (*FanoutResult, error) {
	m, err := startMiniapi(ctx, serverConfig())
	if err != nil {
		return nil, err
	}
	defer m.close()
	if err := m.createConfigMaps(ctx, benchNS, "fan", cfg.FanoutObjects, cfg.ObjectSize, 16); err != nil {
		return nil, err
	}
	sample, err := do(ctx, m.http, http.MethodGet, m.collectionURL(benchNS)+"/"+objName("fan", 0), nil, http.StatusOK)
	if err != nil {
		return nil, err
	}
	raw, err := startRawStreams(sample)
	if err != nil {
		return nil, err
	}
	defer raw.close()
	res := &FanoutResult{
		ObjectBytes: len(sample),
		FrameBytes:  len(objStart) + len(sample) + len(frameEnd),
		Writers:     cfg.Writers,
	}
	targets := []fanoutTarget{
		&miniapiTarget{m: m, objects: cfg.FanoutObjects, size: cfg.ObjectSize},
		&rawTarget{r: raw, size: cfg.ObjectSize},
	}
	writeClient := newHTTPClient(2 * cfg.Writers)
	defer writeClient.CloseIdleConnections()
	for _, n := range cfg.Watchers {
		runs := make([]*FanoutRun, len(targets))
		ladders := make([]*ladder, len(targets))
		for i, t := range targets {
			runs[i] = &FanoutRun{Target: t.name(), Watchers: n}
			ladders[i] = &ladder{rates: cfg.Rates, refine: cfg.Refine}
		}
		var err error
		for progress := true; progress && err == nil; {
			progress = false
			for i, t := range targets {
				rate, ok := ladders[i].next()
				if !ok {
					continue
				}
				progress = true
				var sustained bool
				if sustained, err = tryRate(ctx, cfg, t, writeClient, n, rate, runs[i]); err != nil {
					break
				}
				ladders[i].report(rate, sustained)
			}
		}
		for i := range targets {
			runs[i].Sustained, runs[i].Saturated = ladders[i].good, ladders[i].bad != 0
			for _, st := range runs[i].Steps {
				if st.Missing == 0 && st.Duplicates == 0 && st.P99ms <= float64(cfg.MaxP99)/float64(time.Millisecond) && st.WriteRate > runs[i].PeakRate {
					runs[i].PeakRate, runs[i].PeakDelivered = st.WriteRate, st.DeliveredRate
				}
			}
			res.Runs = append(res.Runs, *runs[i])
		}
		if err != nil {
			return res, fmt.Errorf("%d watchers: %w", n, err)
		}
	}
	return res, nil
}

// ladder walks the target rates up until one is not sustained, then
// bisects between the last rate sustained and the first one not.
type ladder struct {
	rates  []float64
	refine int // bisection steps left

	i         int     // next rate on the ladder
	good, bad float64 // highest sustained, lowest not sustained (0: none yet)
}

// next is the rate to try next; ok is false when the ladder is done.
func (l *ladder) next() (rate float64, ok bool) {
	if l.bad == 0 {
		if l.i < len(l.rates) {
			return l.rates[l.i], true
		}
		return 0, false
	}
	if l.refine <= 0 {
		return 0, false
	}
	mid := math.Round((l.good + l.bad) / 2)
	if mid <= l.good || mid >= l.bad {
		return 0, false
	}
	return mid, true
}

// report records whether rate was sustained.
func (l *ladder) report(rate float64, sustained bool) {
	if l.bad == 0 {
		l.i++
	} else {
		l.refine--
	}
	if sustained {
		l.good = rate
	} else {
		l.bad = rate
	}
}

// disturbedCores is how many cores other processes may take during a step
// before a failure is blamed on them and the step is repeated.
const disturbedCores = 0.5

// tryRate runs rate against n fresh watchers of t, up to cfg.Attempts
// times (plus up to cfg.DisturbedRetries repetitions of attempts other
// processes disturbed), and reports whether one attempt sustained it.
func tryRate(ctx context.Context, cfg config, t fanoutTarget, wc *http.Client, n int, rate float64, run *FanoutRun) (bool, error) {
	disturbed := 0
	for attempt := 1; attempt <= max(cfg.Attempts, 1); {
		a, closeAll, err := attachWatchers(ctx, cfg, t, n)
		if err != nil {
			return false, err
		}
		run.OpenSeconds = max(run.OpenSeconds, a.openTime.Seconds())
		stop := cfg.profile(fmt.Sprintf("fanout-%s-%d-%g-%d", strings.ReplaceAll(t.name(), " ", "-"), n, rate, attempt))
		st := runStep(ctx, cfg, t, wc, a.ws, rate)
		stop()
		closeAll()
		st.Attempt = attempt
		others := st.CPU.Machine - st.CPU.Self
		st.Disturbed = !st.Sustained && others > disturbedCores && cfg.Step >= time.Second
		run.Steps = append(run.Steps, st)
		logf(cfg, "fanout %s n=%d rate=%g: writes %.0f/s, delivered %.0f/s, p50 %.1fms p99 %.1fms, missing %d, rewatches %d, cores %.2f (others %.2f) → %v %s",
			t.name(), n, rate, st.WriteRate, st.DeliveredRate, st.P50ms, st.P99ms, st.Missing, st.Rewatches, st.CPU.Self, others, st.Sustained, st.Why)
		if st.Sustained || ctx.Err() != nil {
			return st.Sustained, ctx.Err()
		}
		if st.Disturbed && disturbed < cfg.DisturbedRetries {
			disturbed++
			continue
		}
		attempt++
	}
	return false, ctx.Err()
}

// attached is a set of open watchers.
type attached struct {
	ws       []*watcher
	openTime time.Duration
}

// attachWatchers opens n watchers on t from its current revision and
// waits until the server has registered them all. closeAll closes them
// and waits, bounded, for the server to let go of them.
func attachWatchers(ctx context.Context, cfg config, t fanoutTarget, n int) (*attached, func(), error) {
	client := &http.Client{Transport: newTransport(64)}
	from, err := t.currentRV(ctx)
	if err != nil {
		return nil, nil, err
	}
	// Counted before the streams open: a server may register a stream
	// after its response headers are out.
	before := t.streams()
	start := time.Now()
	ws, err := openWatchers(ctx, t, client, n, from)
	if err != nil {
		return nil, nil, err
	}
	if !waitFor(ctx, 30*time.Second, func() bool { return t.streams()-before >= n }) {
		closeWatchers(ws)
		return nil, nil, fmt.Errorf("the server registered %d of %d watches", t.streams(), n)
	}
	a := &attached{ws: ws, openTime: time.Since(start)}
	return a, func() {
		closeWatchers(ws)
		client.CloseIdleConnections()
		if !waitFor(context.Background(), 30*time.Second, func() bool { return t.streams() <= before }) {
			logf(cfg, "warning: %s still has %d watches 30 s after the clients left", t.name(), t.streams())
		}
	}, nil
}

// runStep holds rate for cfg.Step and measures what the watchers got.
func runStep(ctx context.Context, cfg config, t fanoutTarget, wc *http.Client, ws []*watcher, rate float64) FanoutStep {
	for _, w := range ws {
		w.take()
	}
	rewatches, dups, errFrames := counters(ws)
	terminated := t.terminated()
	meter := startCPU()
	start := now()
	acks, planned, errs, firstErr := pacedWrites(ctx, rate, cfg.Step, cfg.Writers, func(ctx context.Context, i int) (int64, error) {
		return t.write(ctx, wc, i)
	})
	writeEnd := now()
	d := collect(ctx, cfg, ws, acks, start, writeEnd, cfg.Step)
	d.CPU = meter.stop()
	d.Planned, d.WriteErrors, d.FirstError = planned, errs, firstErr
	r2, d2, e2 := counters(ws)
	d.Rewatches, d.Duplicates, d.ErrorFrames = r2-rewatches, d2-dups, e2-errFrames
	d.Terminated = t.terminated() - terminated
	st := FanoutStep{TargetRate: rate, delivery: d}
	st.Sustained, st.Why = judge(cfg, d)
	return st
}

// judge says whether a step's delivery meets the sustained-rate bar.
func judge(cfg config, d delivery) (bool, string) {
	switch {
	case float64(d.Acked) < 0.9*float64(d.Planned):
		return false, fmt.Sprintf("writers fell behind (%d of %d writes)", d.Acked, d.Planned)
	case d.Missing > 0:
		return false, fmt.Sprintf("%d events missing", d.Missing)
	case d.Duplicates > 0:
		return false, fmt.Sprintf("%d duplicate events", d.Duplicates)
	case d.ErrorFrames > 0:
		return false, fmt.Sprintf("%d ERROR frames or failed re-watches", d.ErrorFrames)
	case d.P99ms > float64(cfg.MaxP99)/float64(time.Millisecond):
		return false, fmt.Sprintf("p99 %.0fms > %v", d.P99ms, cfg.MaxP99)
	}
	return true, ""
}

// counters sums the watchers' counters.
func counters(ws []*watcher) (rewatches, dups, errs int64) {
	for _, w := range ws {
		rewatches += w.rewatches.Load()
		dups += w.duplicates.Load()
		errs += w.errFrames.Load()
	}
	return rewatches, dups, errs
}

// collect waits, up to cfg.Drain, until every watcher has received the
// last acknowledged write, then matches every watcher's receipts against
// the acknowledgements: latency is receipt minus acknowledgement (an event
// that arrives before its write's response counts as 0), an acknowledged
// write a watcher never received is missing.
func collect(ctx context.Context, cfg config, ws []*watcher, acks []ack, start, writeEnd int64, window time.Duration) delivery {
	slices.SortFunc(acks, func(a, b ack) int { return cmp.Compare(a.rv, b.rv) })
	d := delivery{Acked: len(acks)}
	if span := float64(writeEnd-start) / 1e9; span > 0 {
		d.WriteRate = float64(len(acks)) / max(span, window.Seconds())
	}
	if len(acks) == 0 {
		return d
	}
	last := acks[len(acks)-1].rv
	waitFor(ctx, cfg.Drain, func() bool {
		for _, w := range ws {
			if w.lastRV.Load() < last {
				return false
			}
		}
		return true
	})
	lats := make([]int64, 0, len(acks)*len(ws))
	fromSent := make([]int64, 0, len(acks)*len(ws))
	var lastAt int64
	for _, w := range ws {
		recs := w.take()
		i, j, matched := 0, 0, 0
		for i < len(acks) && j < len(recs) {
			switch {
			case recs[j].rv == acks[i].rv:
				lats = append(lats, max(recs[j].at-acks[i].at, 0))
				fromSent = append(fromSent, recs[j].at-acks[i].sent)
				lastAt = max(lastAt, recs[j].at)
				matched++
				i++
				j++
			case recs[j].rv < acks[i].rv:
				j++ // not an acknowledged write of this step
			default:
				i++ // acknowledged, not received
			}
		}
		d.Missing += int64(len(acks) - matched)
	}
	d.Delivered = int64(len(lats))
	d.DeliveredRate = float64(d.Delivered) / max(float64(lastAt-start)/1e9, window.Seconds())
	slices.Sort(lats)
	slices.Sort(fromSent)
	if len(lats) > 0 {
		d.P50ms, d.P99ms, d.MaxMs = percentile(lats, 50), percentile(lats, 99), ms(lats[len(lats)-1])
		d.SentP50ms, d.SentP99ms = percentile(fromSent, 50), percentile(fromSent, 99)
	}
	return d
}

// percentile is the p-th percentile of sorted, in milliseconds.
func percentile(sorted []int64, p int) float64 {
	return ms(sorted[min(len(sorted)-1, len(sorted)*p/100)])
}

// ack is one acknowledged write: its resourceVersion, when its request
// was sent and when its response was read.
type ack struct{ rv, sent, at int64 }

// ms converts nanoseconds to milliseconds.
func ms(ns int64) float64 { return float64(ns) / 1e6 }

// pacedWrites issues ceil(rate*dur) writes at rate with up to writers in
// flight. A write due while every writer is busy and the small queue is
// full is skipped: the shortfall shows as acknowledged < planned.
func pacedWrites(ctx context.Context, rate float64, dur time.Duration, writers int, write func(ctx context.Context, i int) (int64, error)) (acks []ack, planned, failed int, firstErr string) {
	planned = int(math.Ceil(rate * dur.Seconds()))
	tokens := make(chan int, writers)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for i := range tokens {
				sent := now()
				rv, err := write(ctx, i)
				at := now()
				mu.Lock()
				if err != nil {
					failed++
					if firstErr == "" {
						firstErr = err.Error()
					}
				} else {
					acks = append(acks, ack{rv: rv, sent: sent, at: at})
				}
				mu.Unlock()
			}
		})
	}
	start := time.Now()
	interval := float64(time.Second) / rate
	timer := time.NewTimer(0)
	<-timer.C
	for k := 0; k < planned && ctx.Err() == nil; k++ {
		due := start.Add(time.Duration(float64(k) * interval))
		if wait := time.Until(due); wait > time.Millisecond {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-ctx.Done():
			}
		}
		select {
		case tokens <- k:
		default: // every writer busy: skipped
		}
	}
	close(tokens)
	wg.Wait()
	return acks, planned, failed, firstErr
}
