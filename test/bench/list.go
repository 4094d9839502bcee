package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/miniapi/miniapi/builtin"
	"github.com/miniapi/miniapi/registry"
	"github.com/miniapi/miniapi/storage"
	"github.com/miniapi/miniapi/storage/cacher"
	"github.com/miniapi/miniapi/storage/etcd3"
)

// ListResult compares a list of many objects served from the watch cache
// with the same list served from etcd.
type ListResult struct {
	Objects     int `json:"objects"`
	ObjectBytes int `json:"objectBytes"`
	// Storage is in-process: cacher.Cacher.List against etcd3.Store.List
	// on the same member. HTTP is a GET of the collection: from the cache
	// (resourceVersion=0, and unset) against resourceVersionMatch=Exact
	// at a revision the cache's history no longer covers, which the
	// cacher passes to etcd.
	Storage        []ListTiming `json:"storage"`
	HTTP           []ListTiming `json:"http"`
	ResponseBytes  int          `json:"responseBytes"`
	StorageSpeedup float64      `json:"storageSpeedup"`
	HTTPSpeedup    float64      `json:"httpSpeedup"`
}

// ListTiming is one way of listing, repeated.
type ListTiming struct {
	Path     string  `json:"path"`
	Served   string  `json:"servedFrom"`
	MedianMs float64 `json:"medianMs"`
	MinMs    float64 `json:"minMs"`
	Iters    int     `json:"iters"`
}

// configMapPrefix is where ConfigMaps live in etcd, as miniapi lays keys
// out.
var configMapPrefix = storage.ResourceKeys{Resource: "configmaps", Namespaced: true}

// configMapAttrs is the attribute function miniapi's ConfigMap cacher
// uses.
func configMapAttrs() storage.AttrFunc {
	for _, t := range builtin.Types(builtin.Config{}) {
		if t.Kind == "ConfigMap" {
			return registry.AttrFunc(&t)
		}
	}
	return storage.DefaultAttrs
}

// storedConfigMap is a ConfigMap as miniapi stores one: with uid and
// creationTimestamp.
func storedConfigMap(ns, name string, size int) []byte {
	cm := configMapJSON(ns, name, 0, size)
	meta := fmt.Appendf(nil, `"namespace":%q,"uid":"%08d-0000-4000-8000-000000000000","creationTimestamp":"2026-01-01T00:00:00Z"`, ns, len(name))
	return bytes.Replace(cm, fmt.Appendf(nil, `"namespace":%q`, ns), meta, 1)
}

// fillStore creates n objects under ns in st with 32 workers and returns
// the size of one.
func fillStore(ctx context.Context, st storage.Interface, ns, prefix string, n, size int) (int, error) {
	err := parallel(ctx, n, 32, func(ctx context.Context, i int) error {
		name := objName(prefix, i)
		_, err := st.Create(ctx, configMapPrefix.Key(ns, name), storedConfigMap(ns, name, size))
		return err
	})
	return len(storedConfigMap(ns, objName(prefix, 0), size)), err
}

// runList measures the storage-level and the HTTP-level list.
func runList(ctx context.Context, cfg config) (*ListResult, error) {
	res := &ListResult{Objects: cfg.ListObjects}
	if err := listStorage(ctx, cfg, res); err != nil {
		return res, err
	}
	if err := listHTTP(ctx, cfg, res); err != nil {
		return res, err
	}
	return res, nil
}

// listStorage lists in-process, through a Cacher and through the etcd3
// Store it wraps.
func listStorage(ctx context.Context, cfg config, res *ListResult) error {
	e, closeEtcd, err := startEtcd(ctx)
	if err != nil {
		return err
	}
	defer closeEtcd()
	st := etcd3.New(etcd3.Config{Client: e.Client})
	if res.ObjectBytes, err = fillStore(ctx, st, benchNS, "list", cfg.ListObjects, cfg.ObjectSize); err != nil {
		return err
	}
	c, err := cacher.New(st, cacher.Config{Prefix: configMapPrefix.Prefix(), Attrs: configMapAttrs(), Logger: quietLogger()})
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Ready(ctx); err != nil {
		return err
	}
	prefix := configMapPrefix.NamespacePrefix(benchNS)
	list := func(s storage.Interface, rv string) func() (int, error) {
		return func() (int, error) {
			l, err := s.List(ctx, prefix, storage.ListOptions{ResourceVersion: rv})
			if err != nil {
				return 0, err
			}
			if len(l.Items) != cfg.ListObjects {
				return 0, fmt.Errorf("listed %d objects, want %d", len(l.Items), cfg.ListObjects)
			}
			return len(l.Items), nil
		}
	}
	timings, err := timeAlternating(ctx, cfg, []timed{
		{ListTiming{Path: `cacher.List rv="0"`, Served: "cache"}, list(c, "0")},
		{ListTiming{Path: `cacher.List rv="" (consistent)`, Served: "cache"}, list(c, "")},
		{ListTiming{Path: `etcd3.Store.List rv=""`, Served: "etcd"}, list(st, "")},
	})
	res.Storage = timings
	if err == nil {
		res.StorageSpeedup = timings[2].MedianMs / timings[0].MedianMs
		logf(cfg, "list storage: cache %.2fms, etcd %.2fms (%.1f×)", timings[0].MedianMs, timings[2].MedianMs, res.StorageSpeedup)
	}
	return err
}

// historyForList is the watch cache size of the server listHTTP starts:
// small, so a revision falls out of the history after a few writes and an
// Exact list at it goes to etcd.
const historyForList = 100

// listHTTP lists over HTTP from a server whose cache history is small
// enough that resourceVersionMatch=Exact at an older revision is served by
// etcd (cacher.List: listAt finds the revision below the history's floor
// and reads through).
func listHTTP(ctx context.Context, cfg config, res *ListResult) error {
	sc := serverConfig()
	sc.WatchCacheSize = historyForList
	m, err := startMiniapi(ctx, sc)
	if err != nil {
		return err
	}
	defer m.close()
	if err := m.createConfigMaps(ctx, benchNS, "list", cfg.ListObjects, cfg.ObjectSize, 32); err != nil {
		return err
	}
	rv, err := m.listRV(ctx, benchNS)
	if err != nil {
		return err
	}
	// Push rv out of the history with writes elsewhere in the type, so
	// the list at rv and the current list hold the same objects.
	const padNS = "bench-pad"
	if err := m.createNamespace(ctx, padNS); err != nil {
		return err
	}
	if err := m.createConfigMaps(ctx, padNS, "pad", 1, 256, 1); err != nil {
		return err
	}
	for i := range historyForList + 50 {
		name := objName("pad", 0)
		if _, err := do(ctx, m.http, http.MethodPut, m.collectionURL(padNS)+"/"+name, configMapJSON(padNS, name, int64(i+1), 256), http.StatusOK); err != nil {
			return err
		}
	}
	if st := m.configMaps().Stats(); st.HistoryCapacity > historyForList {
		return fmt.Errorf("watch cache history grew to %d; the Exact list would not reach etcd", st.HistoryCapacity)
	}
	client := newHTTPClient(4)
	defer client.CloseIdleConnections()
	getURL := func(url string) func() (int, error) {
		// Reused, so that the client reads into memory it already has.
		var buf bytes.Buffer
		return func() (int, error) {
			n, items, err := getList(ctx, client, url, &buf)
			if err != nil {
				return 0, err
			}
			if items != cfg.ListObjects {
				return 0, fmt.Errorf("GET %s: %d items, want %d", url, items, cfg.ListObjects)
			}
			res.ResponseBytes = n
			return n, nil
		}
	}
	get := func(query string) func() (int, error) { return getURL(m.collectionURL(benchNS) + query) }
	var floorBody bytes.Buffer
	// The transport floor: a bare net/http server answering with the
	// bytes of the cache's list response.
	_, _, err = getList(ctx, client, m.collectionURL(benchNS)+"?resourceVersion=0", &floorBody)
	if err != nil {
		return err
	}
	floor, err := serveBytes(floorBody.Bytes())
	if err != nil {
		return err
	}
	defer floor.Close()

	defer cfg.profile("list-http")()
	timings, err := timeAlternating(ctx, cfg, []timed{
		{ListTiming{Path: "GET ?resourceVersion=0", Served: "cache"}, get("?resourceVersion=0")},
		{ListTiming{Path: "GET (no resourceVersion: consistent)", Served: "cache"}, get("")},
		{ListTiming{Path: fmt.Sprintf("GET ?resourceVersion=%d&resourceVersionMatch=Exact", rv), Served: "etcd"},
			get(fmt.Sprintf("?resourceVersion=%d&resourceVersionMatch=Exact", rv))},
		{ListTiming{Path: "GET of the same bytes from a bare net/http server", Served: "memory (transport floor)"},
			getURL("http://" + floor.Addr().String() + "/")},
	})
	res.HTTP = timings
	if err == nil {
		res.HTTPSpeedup = timings[2].MedianMs / timings[0].MedianMs
		logf(cfg, "list http: cache %.2fms, etcd %.2fms (%.1f×), transport floor %.2fms",
			timings[0].MedianMs, timings[2].MedianMs, res.HTTPSpeedup, timings[3].MedianMs)
	}
	return err
}

// serveBytes serves body, with its length, to every request on a free
// loopback port. Close the server to stop it.
func serveBytes(body []byte) (*bytesServer, error) { return serveStatus(http.StatusOK, body) }

// serveStatus answers every request on a free loopback port with code and
// body, after reading the request body.
func serveStatus(code int, body []byte) (*bytesServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{
		ReadHeaderTimeout: 30 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.WriteHeader(code)
			w.Write(body)
		}),
	}
	go srv.Serve(ln)
	return &bytesServer{srv: srv, ln: ln}, nil
}

// bytesServer is a running serveBytes.
type bytesServer struct {
	srv *http.Server
	ln  net.Listener
}

// Addr is where it listens.
func (b *bytesServer) Addr() net.Addr { return b.ln.Addr() }

// Close stops it.
func (b *bytesServer) Close() error { return b.srv.Close() }

// itemMarker is in every benchmark object of a list body, and nowhere
// else: the items of a ConfigMapList carry no apiVersion or kind, as
// kube-apiserver's, so what marks one is its namespace.
var itemMarker = []byte(`"namespace":"` + benchNS + `"`)

// getList reads a whole list response into buf and returns its size and
// the number of items in it.
func getList(ctx context.Context, c *http.Client, url string, buf *bytes.Buffer) (int, int, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, 0, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	buf.Reset()
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return 0, 0, err
	}
	body := buf.Bytes()
	if resp.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("GET %s: %d: %.200s", url, resp.StatusCode, body)
	}
	return len(body), bytes.Count(body, itemMarker), nil
}

// timed is one way of doing something, for timeAlternating.
type timed struct {
	ListTiming
	f func() (int, error)
}

// timeAlternating runs each way once per round, round after round, until
// cfg.ListIters rounds or cfg.ListTime have passed, so that noise from
// the shared machine falls on all of them alike. It reports each way's
// median and minimum.
func timeAlternating(ctx context.Context, cfg config, ways []timed) ([]ListTiming, error) {
	durs := make([][]time.Duration, len(ways))
	// One warm-up round, not counted.
	for _, w := range ways {
		if _, err := w.f(); err != nil {
			return nil, fmt.Errorf("%s: %w", w.Path, err)
		}
	}
	deadline := time.Now().Add(cfg.ListTime)
	for round := 0; round < cfg.ListIters && (round < 3 || time.Now().Before(deadline)) && ctx.Err() == nil; round++ {
		for i, w := range ways {
			start := time.Now()
			if _, err := w.f(); err != nil {
				return nil, fmt.Errorf("%s: %w", w.Path, err)
			}
			durs[i] = append(durs[i], time.Since(start))
		}
	}
	out := make([]ListTiming, len(ways))
	for i, w := range ways {
		d := durs[i]
		slices.Sort(d)
		out[i] = w.ListTiming
		out[i].Iters = len(d)
		if len(d) > 0 {
			out[i].MedianMs = ms(int64(d[len(d)/2]))
			out[i].MinMs = ms(int64(d[0]))
		}
	}
	return out, ctx.Err()
}
