package server

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miniapi/miniapi/storage/cacher"
	"go.uber.org/goleak"
	"golang.org/x/net/websocket"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// start runs a server on a free port over a fresh embedded etcd and shuts
// it down when the test ends. It serves plain HTTP without
// authentication unless cfg asks for TLS: these tests are about
// transports and storage (security.go's tests cover the secure server).
func start(t *testing.T, cfg Config) *Server {
	t.Helper()
	cfg.UnsafePlainHTTP = cfg.TLSCertFile == ""
	cfg.DataDir = t.TempDir()
	return startConfig(t, cfg)
}

// startConfig runs a server with cfg on a free port, without fsync, and
// shuts it down when the test ends.
func startConfig(t *testing.T, cfg Config) *Server {
	t.Helper()
	cfg.Listen = "127.0.0.1:0"
	cfg.UnsafeNoFsync = true
	srv, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return srv
}

func post(t *testing.T, c *http.Client, url, body string) {
	t.Helper()
	resp, err := c.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST %s = %d", url, resp.StatusCode)
	}
}

// event is a decoded watch frame.
type event struct {
	Type   string `json:"type"`
	Object struct {
		Metadata struct {
			Name            string            `json:"name"`
			ResourceVersion string            `json:"resourceVersion"`
			Annotations     map[string]string `json:"annotations"`
		} `json:"metadata"`
	} `json:"object"`
}

// readEvents reads n newline-delimited frames, each within a deadline.
func readEvents(t *testing.T, sc *bufio.Scanner, n int) []event {
	t.Helper()
	out := make([]event, 0, n)
	for len(out) < n {
		if !sc.Scan() {
			t.Fatalf("stream ended after %d events: %v", len(out), sc.Err())
		}
		var ev event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("frame is not JSON: %v: %s", err, sc.Bytes())
		}
		out = append(out, ev)
	}
	return out
}

// watchOver opens a watch on configmaps in ns1 with client c and checks
// it carries the initial events, the initial-events-end bookmark and a
// live event, over the protocol major version want.
func watchOver(t *testing.T, srv *Server, c *http.Client, wantProto int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	base := srv.URL()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/v1/namespaces/ns1/configmaps?watch=true&allowWatchBookmarks=true", nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.ProtoMajor != wantProto {
		t.Fatalf("served over %s, want HTTP/%d", resp.Proto, wantProto)
	}
	if wantProto == 1 && (len(resp.TransferEncoding) == 0 || resp.TransferEncoding[0] != "chunked") {
		t.Fatalf("transfer encoding %v, want chunked", resp.TransferEncoding)
	}
	sc := bufio.NewScanner(resp.Body)
	// Initial ADDED events for what exists, then the bookmark ending them.
	var initial []string
	for {
		ev := readEvents(t, sc, 1)[0]
		if ev.Type == "BOOKMARK" {
			if ev.Object.Metadata.Annotations["k8s.io/initial-events-end"] != "true" {
				t.Fatalf("bookmark without the initial-events-end annotation: %+v", ev)
			}
			break
		}
		if ev.Type != "ADDED" {
			t.Fatalf("initial event %+v", ev)
		}
		initial = append(initial, ev.Object.Metadata.Name)
	}
	if len(initial) == 0 || initial[0] != "first" {
		t.Fatalf("initial events %v, want first among them", initial)
	}
	name := fmt.Sprintf("live-%d", wantProto)
	post(t, c, base+"/api/v1/namespaces/ns1/configmaps", fmt.Sprintf(`{"metadata":{"name":%q}}`, name))
	live := readEvents(t, sc, 1)[0]
	// The root CA publisher (on with TLS) may add its ConfigMap to ns1
	// meanwhile.
	for live.Type == "ADDED" && live.Object.Metadata.Name == "kube-root-ca.crt" {
		live = readEvents(t, sc, 1)[0]
	}
	if live.Type != "ADDED" || live.Object.Metadata.Name != name {
		t.Fatalf("live event %+v", live)
	}
}

func seed(t *testing.T, srv *Server, c *http.Client) {
	t.Helper()
	post(t, c, srv.URL()+"/api/v1/namespaces", `{"metadata":{"name":"ns1"}}`)
	post(t, c, srv.URL()+"/api/v1/namespaces/ns1/configmaps", `{"metadata":{"name":"first"}}`)
}

func TestWatchOverHTTP1AndH2C(t *testing.T) {
	srv := start(t, Config{})
	h1 := &http.Client{Transport: &http.Transport{}}
	defer h1.CloseIdleConnections()
	seed(t, srv, h1)
	watchOver(t, srv, h1, 1)

	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	h2c := &http.Client{Transport: &http.Transport{Protocols: p}}
	defer h2c.CloseIdleConnections()
	watchOver(t, srv, h2c, 2)
}

func TestWatchOverTLSWithHTTP2(t *testing.T) {
	cert, key := selfSigned(t)
	srv := start(t, Config{TLSCertFile: cert, TLSKeyFile: key})
	if !strings.HasPrefix(srv.URL(), "https://") {
		t.Fatalf("URL %s is not https", srv.URL())
	}
	admin := srv.AdminConfig()
	pair, err := tls.X509KeyPair(admin.CertData, admin.KeyData)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{
			InsecureSkipVerify: true, // self-signed test certificate
			Certificates:       []tls.Certificate{pair},
		},
		ForceAttemptHTTP2: true,
	}}
	defer c.CloseIdleConnections()
	seed(t, srv, c)
	watchOver(t, srv, c, 2)
}

func TestWatchOverWebSocket(t *testing.T) {
	srv := start(t, Config{})
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	seed(t, srv, c)
	wsURL := "ws" + strings.TrimPrefix(srv.URL(), "http") + "/api/v1/namespaces/ns1/configmaps?watch=true"
	ws, err := websocket.Dial(wsURL, "", srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	ws.SetReadDeadline(time.Now().Add(20 * time.Second))
	recv := func() event {
		var msg string
		if err := websocket.Message.Receive(ws, &msg); err != nil {
			t.Fatal(err)
		}
		var ev event
		if err := json.Unmarshal([]byte(msg), &ev); err != nil {
			t.Fatalf("message is not one JSON event: %v: %q", err, msg)
		}
		return ev
	}
	if ev := recv(); ev.Type != "ADDED" || ev.Object.Metadata.Name != "first" {
		t.Fatalf("first message %+v", ev)
	}
	post(t, c, srv.URL()+"/api/v1/namespaces/ns1/configmaps", `{"metadata":{"name":"second"}}`)
	if ev := recv(); ev.Type != "ADDED" || ev.Object.Metadata.Name != "second" {
		t.Fatalf("second message %+v", ev)
	}
}

// configMapCacher reaches the cacher serving configmaps, for its stats.
func configMapCacher(t *testing.T, srv *Server) *cacher.Cacher {
	res, ok := srv.Registry().Snapshot().Lookup("", "v1", "configmaps")
	if !ok {
		t.Fatal("configmaps not served")
	}
	c, ok := res.Store.Storage().(*cacher.Cacher)
	if !ok {
		t.Fatalf("configmaps storage is %T, want a cacher", res.Store.Storage())
	}
	return c
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestClientDisconnectReleasesWatcher(t *testing.T) {
	// The garbage collector's informer, and kube's controllers' (the
	// root CA publisher's), also watch configmaps, from a moment the test
	// cannot see; without them the count is the client's.
	srv := start(t, Config{Controllers: []string{"namespace"}})
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	seed(t, srv, c)
	cc := configMapCacher(t, srv)
	base := cc.Stats().Watchers
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL()+"/api/v1/namespaces/ns1/configmaps?watch=true", nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	readEvents(t, bufio.NewScanner(resp.Body), 1)
	if n := cc.Stats().Watchers; n != base+1 {
		t.Fatalf("%d watchers, want %d", n, base+1)
	}
	cancel()
	resp.Body.Close()
	waitFor(t, "the watcher to be released", func() bool { return cc.Stats().Watchers == base })
}

func TestShutdownEndsWatches(t *testing.T) {
	cfg := Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), UnsafeNoFsync: true, UnsafePlainHTTP: true}
	srv, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	seed(t, srv, c)
	resp, err := c.Get(srv.URL() + "/api/v1/namespaces/ns1/configmaps?watch=true")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	readEvents(t, sc, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown with an open watch: %v", err)
	}
	// Frames already sent may still be read; then the stream must end.
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		for sc.Scan() {
		}
	}()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		resp.Body.Close()
		<-ended
		t.Fatal("watch stream still open 10s after shutdown")
	}
}

func TestStartTwiceOnOneMachine(t *testing.T) {
	a := start(t, Config{})
	b := start(t, Config{})
	if a.URL() == b.URL() {
		t.Fatal("two servers on one URL")
	}
	if _, err := net.Dial("tcp", strings.TrimPrefix(b.URL(), "http://")); err != nil {
		t.Fatal(err)
	}
}

// selfSigned writes a throwaway certificate for 127.0.0.1 and returns the
// cert and key file paths.
func selfSigned(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "miniapi-test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return certFile, keyFile
}
