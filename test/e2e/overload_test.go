package e2e

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestOverload floods the built server, sized small
// (--max-requests-inflight 1, --max-mutating-requests-inflight 1), with
// 2,000 concurrent lists from one user (1,200 under the race detector), while a second user reads on:
// kube's priority and fairness answers the excess 429 with Retry-After,
// the second user is served, and the server's memory stays bounded.
func TestOverload(t *testing.T) {
	skipIfShort(t)
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte("noisy-token,noisy,uid-noisy\nlight-token,light,uid-light\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, filepath.Join(dir, "data"), "--token-auth-file", tokens, "--authorization-mode", "AlwaysAllow",
		"--max-requests-inflight", "1", "--max-mutating-requests-inflight", "1")
	for i := range 100 {
		srv.must(t, 201, "POST", "/api/v1/namespaces/default/configmaps", map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": fmt.Sprintf("cm-%03d", i)},
			"data": map[string]any{"v": strings.Repeat("x", 1000)},
		})
	}
	// Until kube's config controller has read the FlowSchemas, requests
	// fall into the catch-all level; wait until the noisy user's requests
	// are classified by the suggested schemas.
	tlsConfig := insecureTLS()
	client := &http.Client{Timeout: requestTimeout, Transport: &http.Transport{TLSClientConfig: tlsConfig, MaxConnsPerHost: 0, MaxIdleConnsPerHost: 2500}}
	defer client.CloseIdleConnections()
	get := func(token, path string) (int, http.Header) {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, resp.Header
	}
	waitUntil(t, "the noisy user's requests to be classified", func() bool {
		_, h := get("noisy-token", "/api/v1/namespaces/default/configmaps?limit=1")
		return h != nil && h.Get("X-Kubernetes-Pf-Flowschema-Uid") != "" && h.Get("X-Kubernetes-Pf-Prioritylevel-Uid") != ""
	})
	rssBefore := processRSS(t, srv.cmd.Process.Pid)

	clients := 2000
	if raceEnabled {
		// The race detector allows 8,128 live goroutines: 2,000 clients
		// and their connections' goroutines come close on either side.
		clients = 1200
	}
	var ok, throttled, retryAfter, other atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range clients {
		wg.Go(func() {
			<-start
			code, h := get("noisy-token", "/api/v1/namespaces/default/configmaps")
			switch {
			case code == 200:
				ok.Add(1)
			case code == 429:
				throttled.Add(1)
				if h.Get("Retry-After") != "" {
					retryAfter.Add(1)
				}
			default:
				other.Add(1)
			}
		})
	}
	close(start)
	// The light user, meanwhile: a different flow, served.
	lightServed, lightTries := 0, 0
	for range 10 {
		for try := 0; try < 5; try++ {
			lightTries++
			if code, _ := get("light-token", "/api/v1/namespaces/default/configmaps/cm-000"); code == 200 {
				lightServed++
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	rssPeak := processRSS(t, srv.cmd.Process.Pid)
	wg.Wait()
	t.Logf("noisy: %d served, %d answered 429 (%d with Retry-After), %d other; light: %d of 10 served in %d tries; RSS %d MiB before, %d MiB during",
		ok.Load(), throttled.Load(), retryAfter.Load(), other.Load(), lightServed, lightTries, rssBefore>>20, rssPeak>>20)
	if throttled.Load() == 0 || retryAfter.Load() != throttled.Load() {
		t.Errorf("%d of %d requests answered 429, %d of them with Retry-After; want some, all with it", throttled.Load(), clients, retryAfter.Load())
	}
	if lightServed != 10 {
		t.Errorf("the light user was served %d of 10 reads (in %d tries) during the flood", lightServed, lightTries)
	}
	// Measured: about 100 MiB for 2,000 clients; the race detector's
	// shadow memory multiplies a process's memory 5-10 times.
	bound := int64(512 << 20)
	if raceEnabled {
		bound = 2 << 30
	}
	if grown := rssPeak - min(rssPeak, rssBefore); grown > bound {
		t.Errorf("the server's RSS grew by %d MiB under the flood", grown>>20)
	}
	if logs := srv.Stderr(); strings.Contains(logs, "level=ERROR") {
		t.Errorf("the flood logged errors:\n%s", logs)
	}
}

// insecureTLS trusts any certificate: the test authenticates by token
// and measures load, not verification.
func insecureTLS() *tls.Config {
	return &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}}
}

// processRSS reads a process's resident set from /proc.
func processRSS(t *testing.T, pid int) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc status")
	return 0
}
