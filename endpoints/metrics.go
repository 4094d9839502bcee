package endpoints

import (
	"net/http"
	"net/http/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/miniapi/miniapi/endpoints/handlers"
	"github.com/miniapi/miniapi/registry"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/endpoints/metrics"
	"k8s.io/apiserver/pkg/endpoints/request"
	cachermetrics "k8s.io/apiserver/pkg/storage/cacher/metrics"
	etcd3metrics "k8s.io/apiserver/pkg/storage/etcd3/metrics"
	storagemetrics "k8s.io/apiserver/pkg/storage/metrics"
	fcmetrics "k8s.io/apiserver/pkg/util/flowcontrol/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// RegisterMetrics registers, once per process, the kube-apiserver
// metrics miniapi records in legacyregistry, the registry /metrics
// serves: the request metrics of k8s.io/apiserver's endpoints/metrics,
// the storage, watch cache and etcd metrics of its storage packages.
// Kube's metrics are process-global; every server in a process records
// into the same series. New calls it; so can anything that records
// before a handler exists, and must before kube's priority and fairness
// filter is built: it latches onto the flow-control gauges registered
// here (apiserver_flowcontrol_*).
func RegisterMetrics() {
	metrics.Register()
	fcmetrics.Register()
	storagemetrics.Register()
	cachermetrics.Register()
	etcd3metrics.Register()
}

// installMetrics serves /metrics, in Prometheus' text format from
// legacyregistry as kube-apiserver serves it, and net/http/pprof at
// kube's /debug/pprof paths. Who may read them is the authorization
// filter's decision, as for every non-resource path.
func installMetrics(r chi.Router) {
	RegisterMetrics()
	r.Handle("/metrics", legacyregistry.Handler())

	r.HandleFunc("/debug/pprof", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/debug/pprof/", http.StatusFound)
	})
	r.HandleFunc("/debug/pprof/*", pprof.Index)
	r.HandleFunc("/debug/pprof/profile", pprof.Profile)
	r.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	r.HandleFunc("/debug/pprof/trace", pprof.Trace)
}

// monitor serves a request for a served resource and records it as
// kube-apiserver's installer records each route it serves:
// apiserver_request_total, apiserver_request_duration_seconds and the
// other series of metrics.MonitorRequest, labelled from kube's
// RequestInfo, and apiserver_longrunning_requests while a watch or
// connect request runs. Paths that address no served resource are not
// recorded, as kube's router has no route to instrument for them.
func monitor(w http.ResponseWriter, r *http.Request, t *registry.Type, serve http.HandlerFunc) {
	start, ok := request.ReceivedTimestampFrom(r.Context())
	if !ok {
		start = time.Now()
	}
	info := requestInfo(r)
	rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
	if LongRunning(r, info) {
		metrics.RecordLongRunning(r, info, metrics.APIServerComponent, func() { serve(rec, r) })
	} else {
		serve(rec, r)
	}
	// The verb is what kube's installer passes for the route: it
	// decides whether the response size is recorded (GET and LIST) and
	// marks the legacy /watch/ paths; MonitorRequest derives the
	// reported verb itself.
	scope := metrics.CleanScope(info)
	verb := metrics.CanonicalVerb(r.Method, scope)
	if info.Verb == "watch" {
		verb = metrics.MethodWatch
	}
	metrics.MonitorRequest(r, verb, info.APIGroup, info.APIVersion, info.Resource, info.Subresource,
		scope, metrics.APIServerComponent, t.DeprecationWarning != "", "",
		rec.code, rec.written, time.Since(start))
}

// servedType returns the type a resource request addresses, if it is
// served at that path.
func (s *server) servedType(info handlers.RequestInfo) (*registry.Type, bool) {
	res, ok := s.reg.Snapshot().Lookup(info.Group, info.Version, info.Resource)
	if !ok || !handlers.ScopeMatches(&res.Type, info) {
		return nil, false
	}
	return &res.Type, true
}

// requestInfos resolves kube's RequestInfo for requests whose context
// holds none (kube's WithRequestInfo filter normally sets it first).
var requestInfos = &request.RequestInfoFactory{
	APIPrefixes:          sets.NewString("api", "apis"),
	GrouplessAPIPrefixes: sets.NewString("api"),
}

// requestInfo returns the request's RequestInfo from its context, or
// resolves it.
func requestInfo(r *http.Request) *request.RequestInfo {
	if info, ok := request.RequestInfoFrom(r.Context()); ok && info != nil {
		return info
	}
	info, err := requestInfos.NewRequestInfo(r)
	if err != nil {
		return &request.RequestInfo{Verb: strings.ToLower(r.Method), Path: r.URL.Path}
	}
	return info
}

// countInflight counts the requests executing, read-only (get, list)
// and mutating apart, for apiserver_current_inflight_requests. Long
// running requests (watches, connects) are left out, as kube-apiserver's
// in-flight limit leaves them out.
//
// It runs only when no kube filter in front keeps that gauge
// (Config.InflightCounted): API priority and fairness and the
// max-in-flight limit do.
func countInflight(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := requestInfo(r)
		if LongRunning(r, info) {
			next.ServeHTTP(w, r)
			return
		}
		c := &inflight.mutating
		if info.Verb == "get" || info.Verb == "list" {
			c = &inflight.readOnly
		}
		inflight.add(c, 1)
		defer inflight.add(c, -1)
		next.ServeHTTP(w, r)
	})
}

// inflight is the process's in-flight request count: process-global, as
// the gauge it feeds is.
var inflight = &inflightGauge{period: time.Second}

// inflightGauge keeps kube's apiserver_current_inflight_requests: the
// most requests of each kind that executed at once during the last
// period. While requests come, a timer publishes the period's highest
// counts every period and starts the next from the current counts; one
// quiet period publishes the (then idle) counts and stops the timer, so
// an idle process runs nothing.
type inflightGauge struct {
	period time.Duration
	// readOnly and mutating count executing requests; each high holds
	// its counter's highest value this period.
	readOnly, mutating inflightCounter
	// armed is set while a publish is scheduled.
	armed atomic.Bool
	// mu serializes publishes.
	mu sync.Mutex
}

type inflightCounter struct {
	now, high atomic.Int64
}

// add moves c by delta, raises its high mark and makes sure a publish
// is scheduled.
func (g *inflightGauge) add(c *inflightCounter, delta int64) {
	n := c.now.Add(delta)
	for {
		h := c.high.Load()
		if n <= h || c.high.CompareAndSwap(h, n) {
			break
		}
	}
	if !g.armed.Load() && g.armed.CompareAndSwap(false, true) {
		time.AfterFunc(g.period, g.publish)
	}
}

// publish reports the period's high marks and starts the next period.
// It schedules itself again unless the period was idle.
func (g *inflightGauge) publish() {
	g.mu.Lock()
	ro := g.readOnly.high.Swap(g.readOnly.now.Load())
	mut := g.mutating.high.Swap(g.mutating.now.Load())
	metrics.UpdateInflightRequestMetrics(metrics.ExecutingPhase, int(ro), int(mut))
	g.mu.Unlock()
	// Disarm before looking, so a request arriving meanwhile arms a
	// publish of its own; the CompareAndSwap keeps it to one.
	g.armed.Store(false)
	if ro+mut > 0 && g.armed.CompareAndSwap(false, true) {
		time.AfterFunc(g.period, g.publish)
	}
}
