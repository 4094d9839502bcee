package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/miniapi/miniapi/controllers"
	"github.com/miniapi/miniapi/server"
	"github.com/miniapi/miniapi/storage/cacher"
	"github.com/miniapi/miniapi/storage/etcd3"
)

// benchNS is the namespace every scenario writes its ConfigMaps to.
const benchNS = "bench"

// requestTimeout bounds every single HTTP request that is not a watch.
const requestTimeout = 30 * time.Second

// epoch is the origin of now; timestamps are monotonic nanoseconds since it.
var epoch = time.Now()

// now is the harness clock: monotonic nanoseconds since the process began.
func now() int64 { return int64(time.Since(epoch)) }

// miniapi is an in-process server over its own embedded etcd in a
// temporary directory.
type miniapi struct {
	srv *server.Server
	dir string
	// http is a client for ordinary requests (not watches).
	http *http.Client
}

// startMiniapi starts a server on a free loopback port with fsync off. cfg
// may set fields other than Listen, DataDir and UnsafeNoFsync.
func startMiniapi(ctx context.Context, cfg server.Config) (*miniapi, error) {
	dir, err := os.MkdirTemp("", "miniapi-bench-")
	if err != nil {
		return nil, err
	}
	cfg.Listen = "127.0.0.1:0"
	cfg.DataDir = dir
	cfg.UnsafeNoFsync = true
	srv, err := server.Start(ctx, cfg)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	m := &miniapi{srv: srv, dir: dir, http: newHTTPClient(64)}
	if err := m.createNamespace(ctx, benchNS); err != nil {
		m.close()
		return nil, err
	}
	return m, nil
}

// close shuts the server down and removes its data.
func (m *miniapi) close() {
	m.http.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = m.srv.Shutdown(ctx)
	os.RemoveAll(m.dir)
}

// url is the server's base URL.
func (m *miniapi) url() string { return m.srv.URL() }

// configMaps returns the cacher serving ConfigMaps, for its Stats.
func (m *miniapi) configMaps() *cacher.Cacher {
	res, ok := m.srv.Registry().Snapshot().Lookup("", "v1", "configmaps")
	if !ok {
		return nil
	}
	c, _ := res.Store.Storage().(*cacher.Cacher)
	return c
}

// collectionURL is the ConfigMap collection of namespace ns.
func (m *miniapi) collectionURL(ns string) string {
	return m.url() + "/api/v1/namespaces/" + ns + "/configmaps"
}

// createNamespace creates namespace ns.
func (m *miniapi) createNamespace(ctx context.Context, ns string) error {
	body := fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, ns)
	_, err := do(ctx, m.http, http.MethodPost, m.url()+"/api/v1/namespaces", []byte(body), http.StatusCreated)
	return err
}

// createConfigMaps creates n ConfigMaps named prefix-000000 ... in ns with
// conc concurrent clients.
func (m *miniapi) createConfigMaps(ctx context.Context, ns, prefix string, n, size, conc int) error {
	return parallel(ctx, n, conc, func(ctx context.Context, i int) error {
		_, err := do(ctx, m.http, http.MethodPost, m.collectionURL(ns), configMapJSON(ns, objName(prefix, i), 0, size), http.StatusCreated)
		return err
	})
}

// listRV returns the resourceVersion of a one-item list of ns.
func (m *miniapi) listRV(ctx context.Context, ns string) (int64, error) {
	body, err := do(ctx, m.http, http.MethodGet, m.collectionURL(ns)+"?limit=1", nil, http.StatusOK)
	if err != nil {
		return 0, err
	}
	return parseRV(body)
}

// objName is the name of the i-th benchmark object.
func objName(prefix string, i int) string { return fmt.Sprintf("%s-%06d", prefix, i) }

// configMapJSON is a ConfigMap whose encoding, once the server has added
// uid, creationTimestamp and resourceVersion, is about size bytes. seq is
// written with a fixed width so every update has the same size and changes
// the object.
func configMapJSON(ns, name string, seq int64, size int) []byte {
	// Measured: the server adds ~130 bytes of metadata; the template
	// below is ~120 bytes without the payload.
	pad := max(size-250, 0)
	return fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":%q},"data":{"seq":"%012d","payload":"%s"}}`,
		name, ns, seq, strings.Repeat("x", pad))
}

// newHTTPClient returns a client with its own HTTP/1.1 connection pool
// keeping up to idle connections. Compression is off so that list sizes
// and costs are those of the JSON itself.
func newHTTPClient(idle int) *http.Client {
	return &http.Client{Transport: newTransport(idle)}
}

// newTransport is an HTTP/1.1 transport with no limit on connections per
// host, keeping up to idle of them. Over HTTPS it authenticates with the
// bench token every server knows (benchTokenFile) and trusts any
// certificate: each server makes its own CA, and the benchmarks measure
// the server, not certificate checks.
func newTransport(idle int) http.RoundTripper {
	return &tokenTransport{Transport: &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        idle,
		MaxIdleConnsPerHost: idle,
		MaxConnsPerHost:     0, // unlimited: every watch holds its own connection
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: true},
	}}
}

// tokenTransport adds the bench token to every HTTPS request.
type tokenTransport struct{ *http.Transport }

func (t *tokenTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Scheme == "https" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+benchToken)
	}
	return t.Transport.RoundTrip(r)
}

// benchToken authenticates the harness to every server it starts, as a
// member of system:masters, through a --token-auth-file.
const benchToken = "miniapi-bench-admin"

// benchTokenFile writes the token file once and returns its path.
var benchTokenFile = sync.OnceValues(func() (string, error) {
	f, err := os.CreateTemp("", "miniapi-bench-tokens-*.csv")
	if err != nil {
		return "", err
	}
	defer f.Close()
	_, err = fmt.Fprintf(f, "%s,bench-admin,bench-admin,\"system:masters\"\n", benchToken)
	return f.Name(), err
})

// plainHTTP makes every server of the run serve plain HTTP without
// authentication (-plain-http), to compare with the secure default.
var plainHTTP bool

// do sends one request and returns the response body, failing unless the
// status is want.
func do(ctx context.Context, c *http.Client, method, url string, body []byte, want int) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != want {
		return nil, fmt.Errorf("%s %s: %d: %.200s", method, url, resp.StatusCode, out)
	}
	return out, nil
}

// rvKey precedes an object's resourceVersion in its encoding.
var rvKey = []byte(`"resourceVersion":"`)

// parseRV returns the first resourceVersion in an encoded object or list:
// metadata's, because metadata precedes everything that could contain
// another.
func parseRV(b []byte) (int64, error) {
	i := bytes.Index(b, rvKey)
	if i < 0 {
		return 0, errors.New("no resourceVersion")
	}
	var rv int64
	j := i + len(rvKey)
	for ; j < len(b) && b[j] >= '0' && b[j] <= '9'; j++ {
		rv = rv*10 + int64(b[j]-'0')
	}
	if j == i+len(rvKey) || j == len(b) || b[j] != '"' {
		return 0, fmt.Errorf("bad resourceVersion in %.100s", b[i:])
	}
	return rv, nil
}

// parallel calls f(i) for i in [0, n) with conc workers, stopping at the
// first error.
func parallel(ctx context.Context, n, conc int, f func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(conc, n) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := f(ctx, i); err != nil {
					cancel(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return context.Cause(ctx)
}

// startEtcd starts a bare embedded etcd member configured as miniapi's
// (in-process client, fsync off) in a temporary directory; close stops it
// and removes the directory.
func startEtcd(ctx context.Context) (e *etcd3.Embedded, close func(), err error) {
	dir, err := os.MkdirTemp("", "miniapi-bench-etcd-")
	if err != nil {
		return nil, nil, err
	}
	e, err = etcd3.StartEmbedded(ctx, etcd3.EmbeddedConfig{Dir: dir, UnsafeNoFsync: true})
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return e, func() { e.Close(); os.RemoveAll(dir) }, nil
}

// memSample is the process's live memory after a full collection.
type memSample struct {
	Heap       uint64
	Stack      uint64
	Goroutines int
}

// sampleMemory collects garbage twice (the second pass frees what
// finalizers released) and reads the live heap, stacks and goroutines.
func sampleMemory() memSample {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return memSample{Heap: ms.HeapAlloc, Stack: ms.StackInuse, Goroutines: runtime.NumGoroutine()}
}

// raiseFileLimit lifts the soft limit on open files to the hard limit:
// every watch holds a client and a server socket. It warns when even the
// hard limit is too low for the largest watcher count.
func raiseFileLimit(cfg config) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return
	}
	if lim.Cur < lim.Max {
		lim.Cur = lim.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
	need := 512
	for _, n := range append(cfg.Watchers, cfg.MemWatchers, cfg.WritePathWatchers) {
		need = max(need, 2*n+512)
	}
	if lim.Cur < uint64(need) {
		logf(cfg, "warning: open-file limit %d is below the %d the largest watcher count needs", lim.Cur, need)
	}
}

// waitFor polls cond every 5 ms until it holds or timeout passes, and
// reports whether it held.
func waitFor(ctx context.Context, timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// serverConfig is the configuration every scenario's server starts from:
// miniapi's defaults, logs discarded.
func serverConfig() server.Config {
	file, err := benchTokenFile()
	if err != nil {
		panic(err) // a temporary file that cannot be written: nothing can run
	}
	return server.Config{TokenAuthFile: file, UnsafePlainHTTP: plainHTTP, Controllers: benchControllers}
}

// benchControllers are the built-in controllers the scenarios' servers
// run: the ones miniapi ran before kube-controller-manager's workload
// controllers came (issue 14), so that figures stay comparable across
// runs, and no controller's informers watch, or its objects
// (kube-root-ca.crt), join what a scenario measures. The startup
// scenario runs them all, as the binary does by default.
var benchControllers = []string{controllers.NamespaceControllerName, controllers.GarbageCollectorName, controllers.ServiceAccountControllerName}

// quietLogger discards everything: the scenarios' own components log
// nothing during measurements.
func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// cpuMeter measures how many cores this process, and the whole machine,
// kept busy between start and stop. The machine is shared: the difference
// is what other processes took from the measurement.
type cpuMeter struct {
	wall         time.Time
	self         time.Duration
	busy, total  uint64
	haveProcStat bool
}

// CPUUse is a cpuMeter's reading, in cores.
type CPUUse struct {
	// Self is this process (server, etcd and clients); Machine is every
	// process, from /proc/stat.
	Self    float64 `json:"selfCores"`
	Machine float64 `json:"machineCores"`
}

// startCPU starts measuring CPU use.
func startCPU() cpuMeter {
	m := cpuMeter{wall: time.Now(), self: selfCPU()}
	m.busy, m.total, m.haveProcStat = procStat()
	return m
}

// stop returns the cores used since start.
func (m cpuMeter) stop() CPUUse {
	wall := time.Since(m.wall)
	u := CPUUse{Self: float64(selfCPU()-m.self) / float64(wall)}
	if busy, total, ok := procStat(); ok && m.haveProcStat && total > m.total {
		u.Machine = float64(busy-m.busy) / float64(total-m.total) * float64(runtime.NumCPU())
	}
	return u
}

// selfCPU is the user and system CPU time the process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procStat returns the machine's busy and total CPU ticks.
func procStat() (busy, total uint64, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return 0, 0, false
	}
	for i, s := range f[1:] {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		total += n
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy, total, true
}
