package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync/atomic"
	"time"
)

// KindsResult compares the built-in kinds whose rules are kube's own
// and heavy (Pods, Deployments) with ConfigMaps, whose rules are light:
// creates over HTTP, their delivery to watchers, and lists from the
// watch cache. The watch cache and the watch path hold encoded bytes,
// so a Pod list or watch should cost what a ConfigMap one of the same
// size costs; creates pay for kube's defaulting, validation and
// managedFields.
type KindsResult struct {
	Objects  int       `json:"objects"`
	Clients  int       `json:"clients"`
	Watchers int       `json:"watchers"`
	Rows     []KindRow `json:"rows"`
}

// KindRow is one kind.
type KindRow struct {
	Kind string `json:"kind"`
	// ObjectBytes is the size of one stored object as a list serves it.
	ObjectBytes   int     `json:"objectBytes"`
	CreatesPerSec float64 `json:"createsPerSec"`
	CPU           CPUUse  `json:"cpu"`
	// WatchLagMs is how long after the last create was acknowledged
	// every watcher had received every ADDED event.
	WatchLagMs float64 `json:"watchLagMs"`
	// ListMs is the median of GET ?resourceVersion=0 (from the cache).
	ListMs float64 `json:"listMs"`
}

// kindCase is one kind the scenario writes: its collection path below a
// namespace and a body for object name.
type kindCase struct {
	kind, plural, prefix string
	body                 func(ns, name string) []byte
}

var kindCases = []kindCase{
	{"ConfigMap", "configmaps", "/api/v1", func(ns, name string) []byte {
		// About the size of the Pod below as stored with its defaults.
		return configMapJSON(ns, name, 0, 1800)
	}},
	{"Pod", "pods", "/api/v1", func(ns, name string) []byte {
		return fmt.Appendf(nil, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q,"namespace":%q,"labels":{"run":"web"}},`+
			`"spec":{"containers":[{"name":"web","image":"nginx:1.27","ports":[{"containerPort":80}],"env":[{"name":"MODE","value":"prod"}],`+
			`"resources":{"requests":{"cpu":"100m","memory":"64Mi"}}}]}}`, name, ns)
	}},
	{"Deployment", "deployments", "/apis/apps/v1", func(ns, name string) []byte {
		return fmt.Appendf(nil, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":%q,"namespace":%q,"labels":{"app":"web"}},`+
			`"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},`+
			`"spec":{"containers":[{"name":"nginx","image":"nginx:1.27","ports":[{"containerPort":80}],"env":[{"name":"MODE","value":"prod"}],`+
			`"resources":{"requests":{"cpu":"100m","memory":"64Mi"}}}]}}}}`, name, ns)
	}},
}

// kindTarget is a kind's collection in one namespace, for watchers.
type kindTarget struct{ url string }

func (t kindTarget) watchURL(from int64) string {
	return fmt.Sprintf("%s?watch=1&resourceVersion=%d&allowWatchBookmarks=false", t.url, from)
}

// runKinds measures each kind in its own namespace of one server.
func runKinds(ctx context.Context, cfg config) (*KindsResult, error) {
	m, err := startMiniapi(ctx, serverConfig())
	if err != nil {
		return nil, err
	}
	defer m.close()
	res := &KindsResult{Objects: cfg.KindsObjects, Clients: cfg.KindsClients, Watchers: cfg.KindsWatchers}
	client := newHTTPClient(2 * cfg.KindsClients)
	defer client.CloseIdleConnections()
	for _, k := range kindCases {
		ns := "kinds-" + k.plural
		if err := m.createNamespace(ctx, ns); err != nil {
			return res, err
		}
		url := m.url() + k.prefix + "/namespaces/" + ns + "/" + k.plural
		row, err := measureKind(ctx, cfg, m, client, k, ns, url)
		if err != nil {
			return res, fmt.Errorf("%s: %w", k.kind, err)
		}
		res.Rows = append(res.Rows, row)
		logf(cfg, "kinds %s: %.0f creates/s (cores self %.2f), watch lag %.1f ms, list of %d from cache %.1f ms (%d B each)",
			k.kind, row.CreatesPerSec, row.CPU.Self, row.WatchLagMs, cfg.KindsObjects, row.ListMs, row.ObjectBytes)
	}
	return res, nil
}

func measureKind(ctx context.Context, cfg config, m *miniapi, client *http.Client, k kindCase, ns, url string) (KindRow, error) {
	row := KindRow{Kind: k.kind}
	list, err := do(ctx, m.http, http.MethodGet, url+"?limit=1", nil, http.StatusOK)
	if err != nil {
		return row, err
	}
	from, err := parseRV(list)
	if err != nil {
		return row, err
	}
	ws, err := openWatchers(ctx, kindTarget{url}, newHTTPClient(cfg.KindsWatchers), cfg.KindsWatchers, from)
	if err != nil {
		return row, err
	}
	defer closeWatchers(ws)

	meter := startCPU()
	start := time.Now()
	var last atomic.Int64
	err = parallel(ctx, cfg.KindsObjects, cfg.KindsClients, func(ctx context.Context, i int) error {
		body, err := do(ctx, client, http.MethodPost, url, k.body(ns, objName("k", i)), http.StatusCreated)
		if err != nil {
			return err
		}
		rv, err := parseRV(body)
		if err != nil {
			return err
		}
		for {
			old := last.Load()
			if rv <= old || last.CompareAndSwap(old, rv) {
				return nil
			}
		}
	})
	if err != nil {
		return row, err
	}
	acked := now()
	row.CreatesPerSec = float64(cfg.KindsObjects) / time.Since(start).Seconds()
	row.CPU = meter.stop()

	// Every watcher must see every create; the lag is to the last one.
	deadline := time.Now().Add(30 * time.Second)
	var latest int64
	for _, w := range ws {
		for w.lastRV.Load() < last.Load() {
			if time.Now().After(deadline) {
				return row, fmt.Errorf("a watcher stopped at resourceVersion %d of %d", w.lastRV.Load(), last.Load())
			}
			time.Sleep(time.Millisecond)
		}
		recs := w.take()
		if n := len(recs); n != cfg.KindsObjects {
			return row, fmt.Errorf("a watcher received %d events, want %d", n, cfg.KindsObjects)
		}
		latest = max(latest, recs[len(recs)-1].at)
	}
	row.WatchLagMs = float64(max(latest-acked, 0)) / 1e6

	var times []float64
	for range 10 {
		t := time.Now()
		body, err := do(ctx, m.http, http.MethodGet, url+"?resourceVersion=0", nil, http.StatusOK)
		if err != nil {
			return row, err
		}
		times = append(times, float64(time.Since(t).Microseconds())/1000)
		row.ObjectBytes = len(body) / cfg.KindsObjects
	}
	slices.Sort(times)
	row.ListMs = times[len(times)/2]
	return row, nil
}
