package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestReadyzWaitsForPostStartHooks: a client that polls /readyz from
// the moment the server listens, as a script waiting for a new server
// does, finds on its first 200 what kube-apiserver's post-start hooks
// put in place before it is ready: the whole bootstrap policy, flow
// control's configuration, the default ServiceCIDR. It got 200 while
// the policy was still being written before the hooks were checks.
func TestReadyzWaitsForPostStartHooks(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	dir := t.TempDir()
	type started struct {
		srv *Server
		err error
	}
	done := make(chan started, 1)
	go func() {
		srv, err := Start(context.Background(), Config{Listen: addr, DataDir: dir, UnsafeNoFsync: true})
		done <- started{srv, err}
	}()
	var srv *Server
	var client *http.Client
	t.Cleanup(func() {
		if client != nil {
			client.CloseIdleConnections()
		}
		if srv == nil {
			srv = (<-done).srv
		}
		if srv != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := srv.Shutdown(ctx); err != nil {
				t.Errorf("shutdown: %v", err)
			}
		}
	})

	deadline := time.Now().Add(30 * time.Second)
	for {
		if time.Now().After(deadline) {
			t.Fatal("/readyz never answered 200")
		}
		select {
		case s := <-done:
			if s.err != nil {
				t.Fatal(s.err)
			}
			srv = s.srv
		default:
		}
		if client == nil {
			client = adminClient(dir)
		}
		if client != nil {
			if resp, err := client.Get("https://" + addr + "/readyz"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
		}
		time.Sleep(time.Millisecond)
	}
	count := func(path string) int {
		resp, err := client.Get("https://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var list struct{ Items []json.RawMessage }
		if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
			t.Fatal(err)
		}
		return len(list.Items)
	}
	paths := []string{
		"/apis/rbac.authorization.k8s.io/v1/clusterroles",
		"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
		"/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas",
		"/apis/networking.k8s.io/v1/servicecidrs",
	}
	var atReady []int
	for _, p := range paths {
		atReady = append(atReady, count(p))
	}
	if srv == nil {
		s := <-done
		if s.err != nil {
			t.Fatal(s.err)
		}
		srv = s.srv
	}
	for i, p := range paths {
		if later := count(p); atReady[i] != later || later == 0 {
			t.Errorf("%s: %d at the first /readyz 200, %d once started", p, atReady[i], later)
		}
	}
}

// adminClient is a client with the admin credentials Start writes into
// dir, once they are all there; nil before.
func adminClient(dir string) *http.Client {
	pki := filepath.Join(dir, "pki")
	ca, err := os.ReadFile(filepath.Join(pki, "ca.crt"))
	if err != nil {
		return nil
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(pki, "admin.crt"), filepath.Join(pki, "admin.key"))
	if err != nil {
		return nil
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil
	}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}},
	}}
}
