// Package workqueues tells, per server, whether client-go work queues
// are idle: the one view into kube's controllers' work, which make and
// own their queues themselves.
//
// client-go reports every named queue's activity to one process-wide
// metrics provider, keyed by the queue's name alone; kube's controllers
// name theirs by controller ("deployment"), so two logical clusters'
// deployment controllers share one set of metrics, and a server reading
// them waits for every other server's controllers too. This package
// installs the provider instead, and counts each queue's activity both
// in the metrics kube-apiserver serves (same names, labels and buckets
// as component-base's provider) and in the Owner whose Own call created
// the queue.
//
// The provider is installed by this package's init, which must run
// before component-base's (k8s.io/component-base/metrics/prometheus/workqueue),
// since client-go keeps the first provider set. Go initializes, of the
// packages whose imports are initialized, the first by import path;
// this package imports nothing component-base's does not, and sorts
// before it. Installed reports whether that held.
package workqueues

import (
	"sync"
	"sync/atomic"

	"k8s.io/client-go/util/workqueue"
	k8smetrics "k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// The metrics component-base's provider serves, under the same names.
var (
	depth        = gaugeVec("depth", "Current depth of workqueue")
	adds         = counterVec("adds_total", "Total number of adds handled by workqueue")
	latency      = histogramVec("queue_duration_seconds", "How long in seconds an item stays in workqueue before being requested.")
	workDuration = histogramVec("work_duration_seconds", "How long in seconds processing an item from workqueue takes.")
	unfinished   = gaugeVec("unfinished_work_seconds", "How many seconds of work has done that is in progress and hasn't been observed by work_duration. "+
		"Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.")
	longestRunning = gaugeVec("longest_running_processor_seconds", "How many seconds has the longest running processor for workqueue been running.")
	retries        = counterVec("retries_total", "Total number of retries handled by workqueue")

	registerOnce sync.Once
)

// gaugeVec, counterVec and histogramVec define a work-queue metric as
// component-base does: subsystem workqueue, BETA, labelled by queue name.
func gaugeVec(name, help string) *k8smetrics.GaugeVec {
	return k8smetrics.NewGaugeVec(&k8smetrics.GaugeOpts{
		Subsystem: "workqueue", Name: name, Help: help, StabilityLevel: k8smetrics.BETA,
	}, []string{"name"})
}

func counterVec(name, help string) *k8smetrics.CounterVec {
	return k8smetrics.NewCounterVec(&k8smetrics.CounterOpts{
		Subsystem: "workqueue", Name: name, Help: help, StabilityLevel: k8smetrics.BETA,
	}, []string{"name"})
}

func histogramVec(name, help string) *k8smetrics.HistogramVec {
	return k8smetrics.NewHistogramVec(&k8smetrics.HistogramOpts{
		Subsystem: "workqueue", Name: name, Help: help, StabilityLevel: k8smetrics.BETA,
		Buckets: k8smetrics.ExponentialBuckets(10e-9, 10, 10),
	}, []string{"name"})
}

func register() {
	registerOnce.Do(func() {
		for _, m := range []k8smetrics.Registerable{depth, adds, latency, workDuration, unfinished, longestRunning, retries} {
			legacyregistry.MustRegister(m)
		}
	})
}

func init() {
	workqueue.SetProvider(provider{})
}

// probeName names the queue Installed makes.
const probeName = "workqueues-probe"

// installed is set by the provider's first use: client-go only calls
// the provider it kept.
var installed atomic.Bool

// Installed reports whether client-go's queues report to this package:
// false if another provider was set first. It makes a queue to find out.
func Installed() bool {
	q := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[int]{Name: probeName})
	q.ShutDown()
	return installed.Load()
}

// Owner counts the activity of the queues created in its Own calls: a
// server's. Its zero value is ready.
type Owner struct {
	mu    sync.Mutex
	names []string // of the queues

	depth atomic.Int64  // keys waiting
	adds  atomic.Uint64 // keys added
	gets  atomic.Uint64 // keys handed to a worker
	dones atomic.Uint64 // keys a worker is done with
}

// Queues returns the names of the owner's queues, in the order they
// were created.
func (o *Owner) Queues() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.names...)
}

// Idle reports how many keys the owner's queues have been given so far,
// and whether none is waiting or in a worker's hands. Keys added for
// later (AddAfter, rate-limited retries) are not waiting until due.
func (o *Owner) Idle() (added uint64, idle bool) {
	dones := o.dones.Load() // before gets: a key got after this is counted as unfinished
	return o.adds.Load(), o.depth.Load() == 0 && o.gets.Load() == dones
}

var (
	// ownMu serializes Own calls; current is the owner of the queues
	// being created, nil outside Own.
	ownMu   sync.Mutex
	current atomic.Pointer[Owner]
)

// Own attributes to o every queue created until the call it returns
// is made. Owning is process-wide and one owner at a time (a second Own
// waits for the first to end), so what runs meanwhile should only build
// things: a queue another goroutine creates meanwhile is attributed to
// o too. Queues created outside Own belong to no owner.
func Own(o *Owner) (done func()) {
	ownMu.Lock()
	current.Store(o)
	return func() {
		current.Store(nil)
		ownMu.Unlock()
	}
}

// owner is the owner of a queue being created now, or nil.
func owner() *Owner { return current.Load() }

// unowned holds the names of the queues created outside Own.
var unowned sync.Map

// Unowned returns the names of the queues created outside Own so far,
// for tests that check a server owns every queue it creates.
func Unowned() []string {
	var out []string
	unowned.Range(func(k, _ any) bool {
		out = append(out, k.(string))
		return true
	})
	return out
}

// provider is client-go's MetricsProvider: component-base's metrics,
// and the owner's counts.
type provider struct{}

func (provider) NewDepthMetric(name string) workqueue.GaugeMetric {
	register()
	installed.Store(true)
	o := owner()
	switch {
	case o != nil:
		o.mu.Lock()
		o.names = append(o.names, name)
		o.mu.Unlock()
	case name != probeName:
		unowned.Store(name, true)
	}
	return depthMetric{depth.WithLabelValues(name), o}
}

func (provider) NewAddsMetric(name string) workqueue.CounterMetric {
	register()
	return counterMetric{adds.WithLabelValues(name), ownerCounter(owner(), func(o *Owner) *atomic.Uint64 { return &o.adds })}
}

func (provider) NewLatencyMetric(name string) workqueue.HistogramMetric {
	register()
	return histogramMetric{latency.WithLabelValues(name), ownerCounter(owner(), func(o *Owner) *atomic.Uint64 { return &o.gets })}
}

func (provider) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	register()
	return histogramMetric{workDuration.WithLabelValues(name), ownerCounter(owner(), func(o *Owner) *atomic.Uint64 { return &o.dones })}
}

func (provider) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	register()
	return unfinished.WithLabelValues(name)
}

func (provider) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	register()
	return longestRunning.WithLabelValues(name)
}

func (provider) NewRetriesMetric(name string) workqueue.CounterMetric {
	register()
	return retries.WithLabelValues(name)
}

// ownerCounter is o's counter that pick names, or nil without an owner.
func ownerCounter(o *Owner, pick func(*Owner) *atomic.Uint64) *atomic.Uint64 {
	if o == nil {
		return nil
	}
	return pick(o)
}

type depthMetric struct {
	m k8smetrics.GaugeMetric
	o *Owner
}

func (d depthMetric) Inc() {
	d.m.Inc()
	if d.o != nil {
		d.o.depth.Add(1)
	}
}

func (d depthMetric) Dec() {
	d.m.Dec()
	if d.o != nil {
		d.o.depth.Add(-1)
	}
}

type counterMetric struct {
	m k8smetrics.CounterMetric
	n *atomic.Uint64
}

func (c counterMetric) Inc() {
	c.m.Inc()
	if c.n != nil {
		c.n.Add(1)
	}
}

type histogramMetric struct {
	m k8smetrics.ObserverMetric
	n *atomic.Uint64
}

func (h histogramMetric) Observe(v float64) {
	h.m.Observe(v)
	if h.n != nil {
		h.n.Add(1)
	}
}
