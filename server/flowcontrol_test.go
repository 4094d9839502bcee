package server

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	flowcontrolclient "k8s.io/client-go/kubernetes/typed/flowcontrol/v1"
	fclisters "k8s.io/client-go/listers/flowcontrol/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/kubernetes/pkg/registry/flowcontrol/ensurer"
)

// startWithUsers runs a server that authenticates, as miniapi does by
// default, with users from a token file: "<name>-token" is <name>'s
// token. Authorization is AlwaysAllow: these tests are about flow
// control, not RBAC.
func startWithUsers(t *testing.T, cfg Config, users ...string) *Server {
	t.Helper()
	dir := t.TempDir()
	var tokens strings.Builder
	for i, u := range users {
		fmt.Fprintf(&tokens, "%s-token,%s,uid-%d\n", u, u, i)
	}
	cfg.TokenAuthFile = filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(cfg.TokenAuthFile, []byte(tokens.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.AuthorizationModes = []string{"AlwaysAllow"}
	cfg.DataDir = filepath.Join(dir, "data")
	return startConfig(t, cfg)
}

// userClient is an HTTPS client acting as one user of the token file.
type userClient struct {
	c     *http.Client
	url   string
	token string
}

// newUserClient speaks HTTP/1.1, one connection per concurrent request,
// so that many requests are in flight at once (HTTP/2 would cap them at
// the server's 100 streams per connection).
func newUserClient(srv *Server, user string) *userClient {
	return &userClient{
		c: &http.Client{Transport: &http.Transport{
			TLSClientConfig:     &tls.Config{InsecureSkipVerify: true}, // the test server's own CA
			TLSNextProto:        map[string]func(string, *tls.Conn) http.RoundTripper{},
			MaxIdleConnsPerHost: 2000,
		}},
		url: srv.URL(), token: user + "-token",
	}
}

// do sends a request and reads the whole answer.
func (u *userClient) do(ctx context.Context, method, path, body string) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, u.url+path, strings.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+u.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := u.c.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

// flowControlClient is a client of the server's flowcontrol group with
// the server's own (privileged) identity.
func flowControlClient(t *testing.T, srv *Server) flowcontrolclient.FlowcontrolV1Interface {
	t.Helper()
	c, err := flowcontrolclient.NewForConfig(srv.ownConfig())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestFlowControlBootstrapConfiguration checks that a new server holds
// kube's mandatory and suggested FlowSchemas and
// PriorityLevelConfigurations, with kube's specs (compared as kube's own
// ensurer compares them), and no others.
func TestFlowControlBootstrapConfiguration(t *testing.T) {
	srv := startWithUsers(t, Config{})
	c := flowControlClient(t, srv)
	ctx := context.Background()

	fss, err := c.FlowSchemas().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pls, err := c.PriorityLevelConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fsIndex := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for i := range fss.Items {
		fsIndex.Add(&fss.Items[i])
	}
	plIndex := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for i := range pls.Items {
		plIndex.Add(&pls.Items[i])
	}
	fsOps := ensurer.NewFlowSchemaOps(c.FlowSchemas(), fclisters.NewFlowSchemaLister(fsIndex))
	plOps := ensurer.NewPriorityLevelConfigurationOps(c.PriorityLevelConfigurations(), fclisters.NewPriorityLevelConfigurationLister(plIndex))

	var wantFS, gotFS []string
	for _, want := range slices.Concat(bootstrap.MandatoryFlowSchemas, bootstrap.SuggestedFlowSchemas) {
		wantFS = append(wantFS, want.Name)
		got, err := fsOps.Get(want.Name)
		if err != nil {
			t.Errorf("FlowSchema %s: %v", want.Name, err)
			continue
		}
		if !fsOps.SpecEqualish(want, got) {
			t.Errorf("FlowSchema %s: spec %+v, want kube's %+v", want.Name, got.Spec, want.Spec)
		}
		if got.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] != "true" {
			t.Errorf("FlowSchema %s: annotations %v, want kube's autoupdate-spec", want.Name, got.Annotations)
		}
	}
	var wantPL, gotPL []string
	for _, want := range slices.Concat(bootstrap.MandatoryPriorityLevelConfigurations, bootstrap.SuggestedPriorityLevelConfigurations) {
		wantPL = append(wantPL, want.Name)
		got, err := plOps.Get(want.Name)
		if err != nil {
			t.Errorf("PriorityLevelConfiguration %s: %v", want.Name, err)
			continue
		}
		if !plOps.SpecEqualish(want, got) {
			t.Errorf("PriorityLevelConfiguration %s: spec %+v, want kube's %+v", want.Name, got.Spec, want.Spec)
		}
	}
	for _, fs := range fss.Items {
		gotFS = append(gotFS, fs.Name)
	}
	for _, pl := range pls.Items {
		gotPL = append(gotPL, pl.Name)
	}
	slices.Sort(wantFS)
	slices.Sort(wantPL)
	if !slices.Equal(gotFS, wantFS) {
		t.Errorf("FlowSchemas %v, want kube's %v", gotFS, wantFS)
	}
	if !slices.Equal(gotPL, wantPL) {
		t.Errorf("PriorityLevelConfigurations %v, want kube's %v", gotPL, wantPL)
	}

	// A suggested object a user changed is put back, as kube's ensurer
	// does while its autoupdate annotation says so.
	// The config controller patches the status meanwhile, so the update
	// retries on a conflict as any client must.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		fs, err := c.FlowSchemas().Get(ctx, "global-default", metav1.GetOptions{})
		if err != nil {
			return err
		}
		fs.Spec.MatchingPrecedence = 9901
		_, err = c.FlowSchemas().Update(ctx, fs, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// The ensurer reads the informer's copy, as kube's does.
	waitFor(t, "the informer to see the change", func() bool {
		fs, err := fclisters.NewFlowSchemaLister(srv.flowControl.flowSchemas.GetIndexer()).Get("global-default")
		return err == nil && fs.Spec.MatchingPrecedence == 9901
	})
	// Each pass is what the server's periodic ensure does: one may
	// read a copy the config controller's status patch has just made
	// stale and lose the update (seen once in CI), the next puts it back.
	waitFor(t, "global-default's precedence to be put back", func() bool {
		if err := srv.flowControl.ensure(ctx); err != nil {
			t.Logf("ensure: %v", err)
		}
		fs, err := c.FlowSchemas().Get(ctx, "global-default", metav1.GetOptions{})
		return err == nil && fs.Spec.MatchingPrecedence == 9900
	})
}

// gauge sums a legacyregistry metric's samples whose labels include
// labels.
func gauge(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if hasLabels(m, labels) {
				sum += m.GetGauge().GetValue() + m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

func hasLabels(m *dto.Metric, labels map[string]string) bool {
	n := 0
	for _, l := range m.GetLabel() {
		if v, ok := labels[l.GetName()]; ok && v == l.GetValue() {
			n++
		}
	}
	return n == len(labels)
}

// TestFlowControlUnderFlood floods a server whose concurrency limit is 2
// (--max-requests-inflight=1, --max-mutating-requests-inflight=1) with
// far more concurrent lists from one user than kube's global-default
// priority level queues for one flow (6 queues of 50), while another user
// reads now and then. The flood gets kube's 429 with Retry-After, the
// other user is served every time, and what waits stays bounded by the
// queues: memory does not grow with the flood.
func TestFlowControlUnderFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("floods a server")
	}
	srv := startWithUsers(t, Config{MaxRequestsInFlight: 1, MaxMutatingRequestsInFlight: 1}, "noisy", "light")
	noisy, light := newUserClient(srv, "noisy"), newUserClient(srv, "light")
	defer noisy.c.CloseIdleConnections()
	defer light.c.CloseIdleConnections()
	ctx := context.Background()

	// Lists of 400 ConfigMaps of 1 KiB take milliseconds each, so the
	// flood outruns the one seat global-default has. The server's own
	// identity writes them: system:masters is exempt.
	cms, err := corev1client.NewForConfig(srv.ownConfig())
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for i := w; i < 400; i += 16 {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}, Data: map[string]string{"d": strings.Repeat("x", 1024)}}
				if _, err := cms.ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
					t.Errorf("create cm-%d: %v", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	// The requests are classified by kube's bootstrap configuration.
	fs, err := flowControlClient(t, srv).FlowSchemas().Get(ctx, "global-default", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "requests to be classified as global-default", func() bool {
		resp, _, err := light.do(ctx, "GET", "/api/v1/namespaces/default/configmaps/cm-0", "")
		return err == nil && resp.Header.Get(flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID) == string(fs.UID)
	})

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	goroutinesBefore := runtime.NumGoroutine()

	const flood = 1500
	var (
		ok, rejected, failed atomic.Int64
		retryAfter           sync.Map
		mu                   sync.Mutex
		sample429            *http.Response
		body429              []byte
	)
	stop := make(chan struct{})
	var sampler sync.WaitGroup
	var peakQueued, peakHeap atomic.Int64
	sampler.Go(func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			q := int64(gauge(t, "apiserver_flowcontrol_current_inqueue_requests", map[string]string{"priority_level": "global-default"}))
			if q > peakQueued.Load() {
				peakQueued.Store(q)
			}
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if h := int64(m.HeapAlloc); h > peakHeap.Load() {
				peakHeap.Store(h)
			}
		}
	})
	var lightCodes []int
	var lightOther []string
	lightDone := make(chan struct{})
	go func() {
		defer close(lightDone)
		time.Sleep(50 * time.Millisecond) // into the flood
		for range 20 {
			resp, b, err := light.do(ctx, "GET", "/api/v1/namespaces/default/configmaps/cm-1", "")
			code := 0
			if err == nil {
				code = resp.StatusCode
			}
			if code != http.StatusOK {
				lightOther = append(lightOther, fmt.Sprintf("%d %v %s", code, err, b))
			}
			lightCodes = append(lightCodes, code)
			time.Sleep(10 * time.Millisecond)
		}
	}()
	var floodWG sync.WaitGroup
	for range flood {
		floodWG.Go(func() {
			resp, b, err := noisy.do(ctx, "GET", "/api/v1/namespaces/default/configmaps", "")
			switch {
			case err != nil:
				failed.Add(1)
			case resp.StatusCode == http.StatusOK:
				ok.Add(1)
			case resp.StatusCode == http.StatusTooManyRequests:
				rejected.Add(1)
				retryAfter.Store(resp.Header.Get("Retry-After"), true)
				mu.Lock()
				if sample429 == nil {
					sample429, body429 = resp, b
				}
				mu.Unlock()
			default:
				failed.Add(1)
			}
		})
	}
	floodWG.Wait()
	<-lightDone
	close(stop)
	sampler.Wait()

	t.Logf("flood of %d: %d served, %d answered 429, %d failed; peak queued %d; heap %d MiB → peak %d MiB; light user: %v",
		flood, ok.Load(), rejected.Load(), failed.Load(), peakQueued.Load(), before.HeapAlloc>>20, peakHeap.Load()>>20, lightCodes)
	if failed.Load() > 0 {
		t.Errorf("%d flood requests failed otherwise than 200 or 429", failed.Load())
	}
	if rejected.Load() == 0 || sample429 == nil {
		t.Fatal("no flood request was answered 429")
	}
	// kube's answer: 429, Retry-After in seconds, its text, the
	// classification's UIDs.
	retryAfter.Range(func(k, _ any) bool {
		if n, err := strconv.Atoi(k.(string)); err != nil || n < 1 {
			t.Errorf("Retry-After %q, want whole seconds", k)
		}
		return true
	})
	if string(body429) != "Too many requests, please try again later.\n" {
		t.Errorf("429 body %q, want kube's", body429)
	}
	if got := sample429.Header.Get(flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID); got != string(fs.UID) {
		t.Errorf("429 %s = %q, want global-default's %s", flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID, got, fs.UID)
	}
	// Fairness: the light user's flow has queues of its own, so flow
	// control serves it while it turns most of the flood away. On a
	// saturated machine (the race detector, other packages' tests) one
	// of its reads has been answered 500 once, and once 429 after
	// waiting past the queue's time limit behind a list that crawled;
	// one miss is logged, more fail: without fairness it would be
	// turned away as often as the flood is.
	served := 0
	for _, code := range lightCodes {
		if code == http.StatusOK {
			served++
		}
	}
	if len(lightOther) > 0 {
		t.Logf("light user's reads not served: %q", lightOther)
	}
	if served < len(lightCodes)-1 {
		t.Errorf("light user's requests during the flood: %v, want all but at most one 200 (rejections: queue-full %v, time-out %v, concurrency-limit %v)", lightCodes,
			gauge(t, "apiserver_flowcontrol_rejected_requests_total", map[string]string{"priority_level": "global-default", "reason": "queue-full"}),
			gauge(t, "apiserver_flowcontrol_rejected_requests_total", map[string]string{"priority_level": "global-default", "reason": "time-out"}),
			gauge(t, "apiserver_flowcontrol_rejected_requests_total", map[string]string{"reason": "concurrency-limit"}))
	}
	// Bounded: one flow queues at most hand size × queue length
	// requests (the light user's one request aside); the rest are
	// turned away at once rather than held.
	if limit := int64(6*50 + 1); peakQueued.Load() > limit {
		t.Errorf("%d requests queued at the peak, want at most %d", peakQueued.Load(), limit)
	}
	// The heap's peak counts both ends (1,500 TLS connections, 300-450
	// list bodies of 450 KB read by the clients) and garbage, more of it
	// the busier the machine is (538 MiB seen once with other tests
	// running): the bound catches a server holding all 1,500 requests'
	// answers (~1.4 GiB); what matters most is that none of it is kept.
	if grew := peakHeap.Load() - int64(before.HeapAlloc); grew > 768<<20 {
		t.Errorf("heap grew by %d MiB during the flood", grew>>20)
	}
	noisy.c.CloseIdleConnections()
	waitFor(t, "the flood's goroutines to end", func() bool {
		return runtime.NumGoroutine() < goroutinesBefore+50
	})
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if kept := int64(after.HeapAlloc) - int64(before.HeapAlloc); kept > 64<<20 {
		t.Errorf("the flood left %d MiB on the heap", kept>>20)
	}
}

// TestFlowControlWatchesTakeNoSeat opens more watches than the server's
// concurrency limit: each holds a seat only until it is initialized, so
// they all run and other requests are still served.
func TestFlowControlWatchesTakeNoSeat(t *testing.T) {
	srv := startWithUsers(t, Config{MaxRequestsInFlight: 1, MaxMutatingRequestsInFlight: 1}, "watcher")
	u := newUserClient(srv, "watcher")
	defer u.c.CloseIdleConnections()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Until kube's config controller has read the bootstrap
	// configuration, requests fall in the mandatory catch-all level,
	// which rejects rather than queues.
	fs, err := flowControlClient(t, srv).FlowSchemas().Get(ctx, "global-default", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "requests to be classified as global-default", func() bool {
		resp, _, err := u.do(ctx, "GET", "/api/v1/namespaces/default/configmaps", "")
		return err == nil && resp.Header.Get(flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID) == string(fs.UID)
	})
	for i := range 10 {
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL()+"/api/v1/namespaces/default/configmaps?watch=true", nil)
		req.Header.Set("Authorization", "Bearer "+u.token)
		resp, err := u.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("watch %d: %d", i, resp.StatusCode)
		}
	}
	for i := range 5 {
		resp, b, err := u.do(ctx, "GET", "/api/v1/namespaces/default/configmaps", "")
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("list %d beside 10 watches: %v %s", i, err, b)
		}
		var list struct{ Kind string }
		if err := json.Unmarshal(b, &list); err != nil || list.Kind != "ConfigMapList" {
			t.Fatalf("list %d: %s", i, b)
		}
	}
}

// TestFlowControlStartCost measures what priority and fairness adds to
// Start, on a new data directory (the bootstrap configuration written)
// and on a restart (only read): runs alternate with it on and off, so
// the machine's noise hits both alike. It only reports; run it with
// MINIAPI_START_COST=<runs>.
func TestFlowControlStartCost(t *testing.T) {
	runs, _ := strconv.Atoi(os.Getenv("MINIAPI_START_COST"))
	if runs == 0 {
		t.Skip("set MINIAPI_START_COST=<runs> to measure")
	}
	startOnce := func(dir string, disable bool) time.Duration {
		cfg := Config{Listen: "127.0.0.1:0", DataDir: dir, UnsafeNoFsync: true, DisablePriorityAndFairness: disable}
		begin := time.Now()
		srv, err := Start(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		d := time.Since(begin)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		return d
	}
	median := func(ds []time.Duration) time.Duration {
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	for _, restart := range []bool{false, true} {
		var on, off []time.Duration
		dirs := map[bool]string{true: t.TempDir(), false: t.TempDir()}
		if restart {
			startOnce(dirs[true], true)
			startOnce(dirs[false], false)
		}
		for i := range 2 * runs {
			disable := i%2 == 1
			dir := dirs[disable]
			if !restart {
				dir = t.TempDir()
			}
			d := startOnce(dir, disable)
			if disable {
				off = append(off, d)
			} else {
				on = append(on, d)
			}
		}
		mOn, mOff := median(on), median(off)
		t.Logf("restart=%v: Start median with APF %v, without %v: ratio %.2f (+%v)", restart, mOn, mOff, float64(mOn)/float64(mOff), mOn-mOff)
	}
}
