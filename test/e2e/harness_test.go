package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
)

// Bounds on every wait the harness does.
const (
	// startTimeout bounds how long a server may take to print its URL.
	// Generous: the race-built binary, started by several parallel tests
	// on a 2-core machine shared with builds, has taken over 20 s.
	startTimeout = 60 * time.Second
	// stopTimeout bounds how long a server may take to exit after a
	// signal; miniapi itself gives in-flight requests up to 30 s.
	stopTimeout = 40 * time.Second
	// requestTimeout bounds every HTTP request a test makes.
	requestTimeout = 30 * time.Second
)

// isServingLine reports whether line is the one miniapi prints on stdout
// once it serves: "miniapi <version> serving on <url>".
func isServingLine(line string) bool {
	return strings.HasPrefix(line, "miniapi ") && strings.Contains(line, " serving on ")
}

// serverProc is a running miniapi binary.
type serverProc struct {
	// URL is the base URL the server printed, e.g. https://127.0.0.1:41234.
	URL string
	// DataDir is the data directory it was started with.
	DataDir string

	cmd    *exec.Cmd
	client *http.Client
	stdout *lineWatcher
	stderr *syncBuffer
	// exited is closed once the process has exited and waitErr is set.
	exited  chan struct{}
	waitErr error
	// stopOnce makes stop idempotent, so a test may stop the server
	// itself and still leave the cleanup registered.
	stopOnce sync.Once
}

// bareServer are the flags of a server like the reference
// kube-apiserver: without the simulated cluster (no nodes, scheduler or
// kubelet; a new pod stays Pending) and, as envtest, without the
// ServiceAccount admission plugin. For tests that compare answers with
// kube-apiserver alone.
var bareServer = []string{"--nodes=0", "--scheduler=false", "--kubelet=false", "--disable-admission-plugins=ServiceAccount"}

// e2eControllers are the built-in controllers a test's server runs unless
// it passes --controllers: the ones miniapi ran before
// kube-controller-manager's workload controllers (issue 14). The tests
// written before them count the objects of a namespace exactly and
// compare answers with a kube-apiserver that ran no
// kube-controller-manager; with the binary's default, every namespace
// gains kube-root-ca.crt and every Deployment a ReplicaSet. Tests of the
// controllers pass --controllers=*.
var e2eControllers = []string{"namespace-controller", "garbage-collector-controller", "serviceaccount-controller"}

// startServer starts the built miniapi on a free loopback port with
// dataDir and extraArgs, and returns once it has printed the URL it serves
// (failing the test after startTimeout). A cleanup stops it with SIGTERM
// and checks it exits 0, unless the test stopped it already.
func startServer(t *testing.T, dataDir string, extraArgs ...string) *serverProc {
	t.Helper()
	if binPath == "" {
		t.Fatal("e2e: the miniapi binary was not built (TestMain skipped the build under -short)")
	}
	args := append([]string{"--listen", "127.0.0.1:0", "--data-dir", dataDir, "--unsafe-no-fsync"}, extraArgs...)
	if !slices.ContainsFunc(extraArgs, func(a string) bool { return strings.HasPrefix(a, "--controllers") }) {
		args = append(args, "--controllers="+strings.Join(e2eControllers, ","))
	}
	p := &serverProc{
		DataDir: dataDir,
		cmd:     exec.Command(binPath, args...),
		stdout:  newLineWatcher(isServingLine),
		stderr:  &syncBuffer{},
		exited:  make(chan struct{}),
	}
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", binPath, err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.exited)
	}()

	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	var line string
	select {
	case line = <-p.stdout.found:
	case <-p.exited:
		t.Fatalf("miniapi %v exited before serving (%v)\nstdout:\n%s\nstderr:\n%s", args, p.waitErr, p.stdout, p.stderr)
	case <-timer.C:
		p.cmd.Process.Kill()
		<-p.exited
		t.Fatalf("miniapi %v did not print %q within %v\nstdout:\n%s\nstderr:\n%s", args, "serving on <url>", startTimeout, p.stdout, p.stderr)
	}
	_, url, ok := strings.Cut(line, " serving on ")
	if !ok || !strings.HasPrefix(url, "https://127.0.0.1:") {
		p.kill()
		t.Fatalf("unexpected serving line %q, want \"miniapi <version> serving on https://127.0.0.1:<port>\"", line)
	}
	p.URL = strings.TrimSpace(url)
	t.Cleanup(func() { p.stop(t) })
	p.client = p.httpClient(t, clientConfig(t, p))
	return p
}

// httpClient is a plain HTTP client with the TLS settings and credentials
// of cfg (the kubeconfig's: the server's CA, the admin's certificate), for
// tests that send requests by hand. ExpectContinueTimeout makes "Expect:
// 100-continue" wait for the server's verdict before sending a body, as
// curl does for big ones.
func (p *serverProc) httpClient(t *testing.T, cfg *rest.Config) *http.Client {
	t.Helper()
	tlsConfig, err := rest.TLSConfigFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{TLSClientConfig: tlsConfig, ExpectContinueTimeout: 5 * time.Second, ForceAttemptHTTP2: true}
	var rt http.RoundTripper = tr
	if cfg.BearerToken != "" {
		rt = transport.NewBearerAuthRoundTripper(cfg.BearerToken, rt)
	}
	return &http.Client{Timeout: requestTimeout, Transport: rt}
}

// stop shuts the server down with SIGTERM; see stopWith.
func (p *serverProc) stop(t *testing.T) { p.stopWith(t, syscall.SIGTERM) }

// stopWith sends sig, waits (up to stopTimeout) for the process to exit
// and fails the test unless it exits 0. Only the first call acts.
func (p *serverProc) stopWith(t *testing.T, sig os.Signal) {
	t.Helper()
	p.stopOnce.Do(func() {
		if p.client != nil {
			p.client.CloseIdleConnections()
		}
		if err := p.cmd.Process.Signal(sig); err != nil {
			t.Errorf("signal %v to miniapi: %v", sig, err)
		}
		timer := time.NewTimer(stopTimeout)
		defer timer.Stop()
		select {
		case <-p.exited:
		case <-timer.C:
			p.cmd.Process.Kill()
			<-p.exited
			t.Errorf("miniapi did not exit within %v of %v; killed\nstderr:\n%s", stopTimeout, sig, p.stderr)
			return
		}
		if code := p.cmd.ProcessState.ExitCode(); code != 0 {
			t.Errorf("miniapi exited with %v after %v, want exit code 0\nstderr:\n%s", p.waitErr, sig, p.stderr)
		}
	})
}

// kill ends the process without checking how it exits, for failures
// during start.
func (p *serverProc) kill() {
	p.stopOnce.Do(func() {
		p.cmd.Process.Kill()
		<-p.exited
	})
}

// runToExit runs the binary with args, expecting it to exit on its own
// (within startTimeout), and returns its combined output and exit code.
func runToExit(t *testing.T, args ...string) (string, int) {
	t.Helper()
	if binPath == "" {
		t.Fatal("e2e: the miniapi binary was not built")
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, binPath, args...).CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("miniapi %v did not exit within %v; output:\n%s", args, startTimeout, out)
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Fatalf("run miniapi %v: %v", args, err)
	}
	if exitErr != nil {
		return string(out), exitErr.ExitCode()
	}
	return string(out), 0
}

// Stderr returns what the server has logged so far.
func (p *serverProc) Stderr() string { return p.stderr.String() }

// response is one HTTP answer, read in full.
type response struct {
	code   int
	header http.Header
	body   []byte
}

// do sends one request to the server and reads the whole answer, failing
// the test on a transport error. body may be nil, a string or []byte
// (sent as is, with Content-Type application/json unless headers set
// one), an io.Reader (sent as is, chunked, since its length is unknown)
// or any other value (encoded as JSON). headers are name, value pairs.
func (p *serverProc) do(t *testing.T, method, path string, body any, headers ...string) response {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	case io.Reader:
		rd = b
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, p.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := p.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v\nserver stderr:\n%s", method, path, err, p.stderr)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", method, path, err)
	}
	return response{code: resp.StatusCode, header: resp.Header, body: data}
}

// must sends a request, fails the test unless the answer has code, and
// returns the body decoded as a JSON object.
func (p *serverProc) must(t *testing.T, code int, method, path string, body any, headers ...string) map[string]any {
	t.Helper()
	r := p.do(t, method, path, body, headers...)
	if r.code != code {
		t.Fatalf("%s %s = %d, want %d: %s", method, path, r.code, code, r.body)
	}
	return r.object(t)
}

// object decodes the body as one JSON object.
func (r response) object(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("answer is not a JSON object: %v: %s", err, r.body)
	}
	return m
}

// wantStatus fails the test unless r is a failure Status with code and
// reason, as every miniapi error is, and returns it decoded.
func wantStatus(t *testing.T, r response, code int, reason string) map[string]any {
	t.Helper()
	if r.code != code {
		t.Fatalf("HTTP %d, want %d: %s", r.code, code, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	st := r.object(t)
	if st["kind"] != "Status" || st["apiVersion"] != "v1" || st["status"] != "Failure" {
		t.Fatalf("not a failure Status (kind Status, apiVersion v1, status Failure): %s", r.body)
	}
	if st["reason"] != reason || st["code"] != float64(code) {
		t.Fatalf("reason %v code %v, want %s %d: %s", st["reason"], st["code"], reason, code, r.body)
	}
	if msg, _ := st["message"].(string); msg == "" {
		t.Fatalf("Status has no message: %s", r.body)
	}
	return st
}

// get reads a dotted path ("metadata.resourceVersion") from a decoded
// JSON object; nil when any step is missing.
func get(m map[string]any, path string) any {
	var cur any = m
	for _, k := range strings.Split(path, ".") {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[k]
	}
	return cur
}

// str is get for string values; "" when absent or not a string.
func str(m map[string]any, path string) string {
	s, _ := get(m, path).(string)
	return s
}

// mustJSON encodes v as JSON.
func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// items returns a decoded list's items.
func items(t *testing.T, list map[string]any) []map[string]any {
	t.Helper()
	raw, ok := list["items"].([]any)
	if !ok {
		t.Fatalf("list has no items array: %v", list)
	}
	out := make([]map[string]any, len(raw))
	for i, it := range raw {
		if out[i], ok = it.(map[string]any); !ok {
			t.Fatalf("list item %d is not an object: %v", i, it)
		}
	}
	return out
}

// names returns the metadata.name of each item of a decoded list.
func names(t *testing.T, list map[string]any) []string {
	t.Helper()
	var out []string
	for _, it := range items(t, list) {
		out = append(out, str(it, "metadata.name"))
	}
	return out
}

// rvInt parses a resourceVersion for ordering checks; resourceVersions
// are opaque to clients, but miniapi documents them as etcd revisions.
func rvInt(t *testing.T, rv string) int64 {
	t.Helper()
	var n int64
	if _, err := fmt.Sscan(rv, &n); err != nil || rv == "" {
		t.Fatalf("resourceVersion %q is not an integer", rv)
	}
	return n
}

// namespace is a Namespace object to create.
func namespace(name string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}
}

// configMap is a ConfigMap object to create; labels may be nil.
func configMap(name string, labels, data map[string]string) map[string]any {
	meta := map[string]any{"name": name}
	if labels != nil {
		meta["labels"] = labels
	}
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}
}

// skipIfShort skips integration tests under -short.
func skipIfShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration: needs the built binary")
	}
}

// lineWatcher is the server's stdout: it keeps everything written and
// delivers the first complete line that match accepts on found.
type lineWatcher struct {
	match func(line string) bool
	found chan string // buffered; receives at most one line

	mu   sync.Mutex // mu protects buf and sent
	buf  bytes.Buffer
	sent bool
}

func newLineWatcher(match func(line string) bool) *lineWatcher {
	return &lineWatcher{match: match, found: make(chan string, 1)}
}

// Write records p and looks for the line once it is complete.
func (w *lineWatcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if w.sent {
		return len(p), nil
	}
	for _, line := range strings.SplitAfter(w.buf.String(), "\n") {
		if strings.HasSuffix(line, "\n") && w.match(strings.TrimSuffix(line, "\n")) {
			w.sent = true
			w.found <- strings.TrimSuffix(line, "\n") // never blocks: buffered, sent once
			break
		}
	}
	return len(p), nil
}

// String returns everything written so far.
func (w *lineWatcher) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// syncBuffer is a bytes.Buffer safe for the process's writer goroutine
// and the test reading it at once.
type syncBuffer struct {
	mu sync.Mutex // mu protects b
	b  bytes.Buffer
}

// Write appends p.
func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitEstablished polls the CRD named name until its Established
// condition is True, as clients of kube-apiserver do before using a new
// CRD (kubectl wait --for=condition=Established), failing the test after
// startTimeout.
func (p *serverProc) waitEstablished(t *testing.T, name string) {
	t.Helper()
	deadline := time.Now().Add(startTimeout)
	for {
		r := p.do(t, "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"+name, nil)
		var crd struct {
			Status struct {
				Conditions []struct{ Type, Status string } `json:"conditions"`
			} `json:"status"`
		}
		if r.code == 200 && json.Unmarshal(r.body, &crd) == nil {
			for _, c := range crd.Status.Conditions {
				if c.Type == "Established" && c.Status == "True" {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("CRD %s not Established after %v: %d %s", name, startTimeout, r.code, r.body)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
