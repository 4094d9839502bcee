package endpoints

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miniapi/miniapi/builtin"
	"github.com/miniapi/miniapi/internal/apitest"
	"github.com/miniapi/miniapi/registry"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// gadgetType is served only by TestMetrics, so the series labelled with
// it move only by what the test does, whatever else runs in the process.
var gadgetType = registry.Type{
	Group: "metrics.example.com", Version: "v1", Kind: "Gadget", Plural: "gadgets",
	Namespaced: true, Strategy: registry.GenericStrategy{},
}

// scrape reads /metrics into series (as printed: name{labels}) and values.
func scrape(t *testing.T, c *apitest.Client) map[string]float64 {
	t.Helper()
	r := c.Do(http.MethodGet, "/metrics", nil)
	if r.Code != http.StatusOK {
		t.Fatalf("GET /metrics = %d: %s", r.Code, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Fatalf("Content-Type = %q, want Prometheus text as kube serves it", ct)
	}
	series := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(string(r.Body)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("bad sample line %q: %v", line, err)
		}
		series[line[:i]] = v
	}
	return series
}

// gadget is the labels kube-apiserver puts on a request metric for
// gadgets, in the order Prometheus prints them.
func gadget(name, code, scope, verb string) string {
	if code != "" {
		code = fmt.Sprintf("code=%q,", code)
	}
	return fmt.Sprintf(`%s{%scomponent="apiserver",dry_run="",group="metrics.example.com",resource="gadgets",scope=%q,subresource="",verb=%q,version="v1"}`,
		name, code, scope, verb)
}

// waitFor scrapes until cond holds for the series, failing after a while.
func waitFor(t *testing.T, c *apitest.Client, what string, cond func(map[string]float64) bool) map[string]float64 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		m := scrape(t, c)
		if cond(m) {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics never showed %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestMetrics drives creates, a list, a watch and 404s through a server
// over a cached registry on a real etcd, and checks /metrics shows
// kube-apiserver's series for them, with kube's names and labels, and
// that they moved.
func TestMetrics(t *testing.T) {
	reg, _ := apitest.CachedRegistry(t)
	if err := reg.Add(gadgetType); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(Config{Registry: reg, OpenAPI: &builtin.OpenAPI{}}))
	t.Cleanup(srv.Close)
	c := &apitest.Client{T: t, URL: srv.URL}
	const coll = "/apis/metrics.example.com/v1/namespaces/ns1/gadgets"
	gadgetObj := func(name string) map[string]any {
		return map[string]any{"apiVersion": "metrics.example.com/v1", "kind": "Gadget", "metadata": map[string]any{"name": name}}
	}

	c.Must(http.StatusCreated, http.MethodPost, "/api/v1/namespaces", apitest.Namespace("ns1"))
	before := scrape(t, c)
	c.Must(http.StatusCreated, http.MethodPost, coll, gadgetObj("a"))
	c.Must(http.StatusCreated, http.MethodPost, coll, gadgetObj("b"))
	c.Must(http.StatusOK, http.MethodGet, coll, nil)
	c.Status(c.Do(http.MethodGet, coll+"/missing", nil), http.StatusNotFound, "NotFound")
	c.Status(c.Do(http.MethodGet, "/apis/metrics.example.com/v1/namespaces/ns1/nosuch", nil), http.StatusNotFound, "NotFound")

	// A watch from "0" starts with the two objects as ADDED events.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+coll+"?watch=true&resourceVersion=0", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	frames := bufio.NewReader(resp.Body)
	for range 2 {
		if _, err := frames.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	longRunning := `apiserver_longrunning_requests{component="apiserver",group="metrics.example.com",resource="gadgets",scope="namespace",subresource="",verb="WATCH",version="v1"}`
	during := waitFor(t, c, "the open watch", func(m map[string]float64) bool { return m[longRunning] == 1 })

	moved := func(m map[string]float64, series string, atLeast float64) {
		t.Helper()
		v, ok := m[series]
		if !ok {
			t.Errorf("no series %s", series)
			return
		}
		if d := v - before[series]; d < atLeast {
			t.Errorf("%s moved by %v, want at least %v", series, d, atLeast)
		}
	}
	moved(during, gadget("apiserver_request_total", "201", "resource", "POST"), 2)
	moved(during, gadget("apiserver_request_total", "200", "namespace", "LIST"), 1)
	moved(during, gadget("apiserver_request_total", "404", "resource", "GET"), 1)
	moved(during, gadget("apiserver_request_duration_seconds_count", "", "resource", "POST"), 2)
	moved(during, `apiserver_response_sizes_count{component="apiserver",group="metrics.example.com",resource="gadgets",scope="namespace",subresource="",verb="LIST",version="v1"}`, 1)
	moved(during, `apiserver_watch_events_total{group="metrics.example.com",resource="gadgets",version="v1"}`, 2)
	moved(during, `etcd_requests_total{group="metrics.example.com",operation="create",resource="gadgets"}`, 2)
	moved(during, `etcd_request_duration_seconds_count{group="metrics.example.com",operation="create",resource="gadgets"}`, 2)
	// The cache was filled when the type was added, before the test began.
	if v := during[`apiserver_watch_cache_initializations_total{group="metrics.example.com",resource="gadgets"}`]; v < 1 {
		t.Errorf("apiserver_watch_cache_initializations_total for gadgets = %v, want at least 1", v)
	}
	for _, le := range []string{"0.005", "0.2", "60", "+Inf"} {
		if _, ok := during[strings.TrimSuffix(gadget("apiserver_request_duration_seconds_bucket", "", "resource", "POST"), "}")+`,le="`+le+`"}`]; !ok {
			t.Errorf("apiserver_request_duration_seconds has no bucket le=%q (kube's buckets)", le)
		}
	}
	for s := range during {
		if strings.Contains(s, `resource="nosuch"`) {
			t.Errorf("a path with no served resource was recorded, which kube does not: %s", s)
		}
	}

	// The reflector records asynchronously; the in-flight gauge is
	// published once a second.
	waitFor(t, c, "the watch cache's events and object count", func(m map[string]float64) bool {
		return m[`apiserver_watch_cache_events_received_total{group="metrics.example.com",resource="gadgets"}`] >= 2 &&
			m[`apiserver_watch_cache_events_dispatched_total{group="metrics.example.com",resource="gadgets"}`] >= 2 &&
			m[`apiserver_resource_objects{group="metrics.example.com",resource="gadgets"}`] == 2 &&
			m[`apiserver_storage_objects{resource="gadgets.metrics.example.com"}`] == 2
	})
	waitFor(t, c, "apiserver_current_inflight_requests", func(m map[string]float64) bool {
		_, ro := m[`apiserver_current_inflight_requests{request_kind="readOnly"}`]
		_, mut := m[`apiserver_current_inflight_requests{request_kind="mutating"}`]
		return ro && mut
	})

	// The watch ends: no longer long-running, and counted as a request.
	cancel()
	io.Copy(io.Discard, resp.Body)
	watches := gadget("apiserver_request_total", "200", "namespace", "WATCH")
	waitFor(t, c, "the watch's end", func(m map[string]float64) bool {
		return m[longRunning] == 0 && m[watches]-before[watches] >= 1
	})
}

// TestPprof checks the profiling endpoints are served at kube's paths.
func TestPprof(t *testing.T) {
	f := newFixture(t)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(f.url + "/debug/pprof")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/debug/pprof/" {
		t.Errorf("GET /debug/pprof = %d to %q, want a redirect to /debug/pprof/", resp.StatusCode, resp.Header.Get("Location"))
	}
	for path, want := range map[string]string{
		"/debug/pprof/":                   "goroutine",
		"/debug/pprof/goroutine?debug=1":  "goroutine profile:",
		"/debug/pprof/symbol":             "num_symbols",
		"/debug/pprof/heap?debug=1":       "heap profile:",
		"/debug/pprof/profile?seconds=1":  "",
		"/debug/pprof/trace?seconds=0.05": "",
	} {
		r := f.Do(http.MethodGet, path, nil)
		if r.Code != http.StatusOK || !strings.Contains(string(r.Body), want) {
			t.Errorf("GET %s = %d, want 200 with %q: %.200s", path, r.Code, want, r.Body)
		}
	}
	// kube-apiserver routes only index, profile, symbol and trace; the
	// index answers other names only for runtime profiles.
	if r := f.Do(http.MethodGet, "/debug/pprof/cmdline", nil); r.Code != http.StatusNotFound {
		t.Errorf("GET /debug/pprof/cmdline = %d, want 404 as kube-apiserver", r.Code)
	}
}

// BenchmarkRequestMetrics measures what recording kube's request metrics
// adds to one request: the in-flight count and monitor around a handler
// that does nothing, against the bare handler, with a RequestInfo in the
// context as kube's filter leaves it.
func BenchmarkRequestMetrics(b *testing.B) {
	noop := func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }
	req := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/ns1/configmaps/a", nil)
	info, err := requestInfos.NewRequestInfo(req)
	if err != nil {
		b.Fatal(err)
	}
	req = req.WithContext(request.WithRequestInfo(req.Context(), info))
	typ := &registry.Type{Version: "v1", Kind: "ConfigMap", Plural: "configmaps", Namespaced: true}
	RegisterMetrics()
	w := httptest.NewRecorder()
	b.Run("bare", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			noop(w, req)
		}
	})
	instrumented := countInflight(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { monitor(w, r, typ, noop) }))
	b.Run("metrics", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			instrumented.ServeHTTP(w, req)
		}
	})
}
