package cacher

import (
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/storage"
	cachermetrics "k8s.io/apiserver/pkg/storage/cacher/metrics"
	etcd3metrics "k8s.io/apiserver/pkg/storage/etcd3/metrics"
	compbasemetrics "k8s.io/component-base/metrics"
)

// cacheMetrics records a Cacher in kube-apiserver's watch cache metrics
// (k8s.io/apiserver/pkg/storage/cacher/metrics), labelled with
// Config.Resource as kube labels them, and its object count and size in
// apiserver_resource_objects, apiserver_storage_objects and
// apiserver_resource_size_estimate_bytes, which kube-apiserver polls from
// etcd and the cache knows exactly. The metrics are process-global:
// every Cacher of one resource in a process writes the same series. A
// nil *cacheMetrics (no Config.Resource) records nothing.
type cacheMetrics struct {
	gr schema.GroupResource
	// The series recorded per event, looked up once.
	received, dispatched, terminated, initEvents compbasemetrics.CounterMetric
	readWait                                     compbasemetrics.ObserverMetric
}

// newCacheMetrics registers kube's metrics (once per process) and
// returns gr's recorder, or nil for an empty gr.
func newCacheMetrics(gr schema.GroupResource) *cacheMetrics {
	if gr.Resource == "" {
		return nil
	}
	cachermetrics.Register()
	etcd3metrics.Register()
	return &cacheMetrics{
		gr:         gr,
		received:   cachermetrics.EventsReceivedCounter.WithLabelValues(gr.Group, gr.Resource),
		dispatched: cachermetrics.EventsCounter.WithLabelValues(gr.Group, gr.Resource),
		terminated: cachermetrics.TerminatedWatchersCounter.WithLabelValues(gr.Group, gr.Resource),
		initEvents: cachermetrics.InitCounter.WithLabelValues(gr.Group, gr.Resource),
		readWait:   cachermetrics.WatchCacheReadWait.WithLabelValues(gr.Group, gr.Resource),
	}
}

// listed records one (re)list of the underlying storage that started at
// start: an initialization of the cache, or an initialization error.
func (m *cacheMetrics) listed(start time.Time, err error) {
	if m == nil {
		return
	}
	if err != nil {
		cachermetrics.WatchCacheInitializationErrors.WithLabelValues(m.gr.Group, m.gr.Resource).Inc()
		return
	}
	cachermetrics.WatchCacheInitializations.WithLabelValues(m.gr.Group, m.gr.Resource).Inc()
	cachermetrics.WatchCacheInitializationDuration.WithLabelValues(m.gr.Group, m.gr.Resource).Observe(time.Since(start).Seconds())
}

// eventReceived counts one event from the underlying watch.
func (m *cacheMetrics) eventReceived() {
	if m != nil {
		m.received.Inc()
	}
}

// eventDispatched counts one event the dispatcher offered the watchers.
func (m *cacheMetrics) eventDispatched() {
	if m != nil {
		m.dispatched.Inc()
	}
}

// watcherTerminated counts one watcher closed for being too slow.
func (m *cacheMetrics) watcherTerminated() {
	if m != nil {
		m.terminated.Inc()
	}
}

// initialEvents counts the initial events a watch sent.
func (m *cacheMetrics) initialEvents(n int) {
	if m != nil && n > 0 {
		m.initEvents.Add(float64(n))
	}
}

// revision records the revision the cache reflects.
func (m *cacheMetrics) revision(rev int64) {
	if m != nil {
		cachermetrics.RecordResourceVersion(m.gr, uint64(rev))
	}
}

// objects records how many objects the cache holds and their size.
func (m *cacheMetrics) objects(n int, bytes int64) {
	if m == nil {
		return
	}
	var avg int64
	if n > 0 {
		avg = bytes / int64(n)
	}
	etcd3metrics.UpdateStoreStats(m.gr, storage.Stats{ObjectCount: int64(n), EstimatedAverageObjectSizeBytes: avg}, nil)
}

// initialCapacity records the history's capacity at start.
func (m *cacheMetrics) initialCapacity(n int) {
	if m != nil {
		cachermetrics.WatchCacheCapacity.WithLabelValues(m.gr.Group, m.gr.Resource).Set(float64(n))
	}
}

// capacity records a change of the history's capacity.
func (m *cacheMetrics) capacity(old, new int) {
	if m != nil {
		cachermetrics.RecordsWatchCacheCapacityChange(m.gr, old, new)
	}
}

// waited records how long a read waited for the cache to reach the
// revision it asked for.
func (m *cacheMetrics) waited(d time.Duration) {
	if m != nil {
		m.readWait.Observe(d.Seconds())
	}
}

// consistentRead records a consistent list: served from the cache
// (fallback false) or read through, and whether it succeeded.
func (m *cacheMetrics) consistentRead(fallback bool, err error) {
	if m != nil {
		cachermetrics.ConsistentReadTotal.WithLabelValues(m.gr.Group, m.gr.Resource,
			strconv.FormatBool(err == nil), strconv.FormatBool(fallback)).Inc()
	}
}

// close removes the object count series of a resource no longer served.
func (m *cacheMetrics) close() {
	if m != nil {
		etcd3metrics.DeleteStoreStats(m.gr)
	}
}
