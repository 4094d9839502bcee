package server

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestIdleConnectionIsClosed closes a keep-alive connection left idle
// after a request, as kube-apiserver's secure serving does after 90 s
// (shortened here), rather than keeping it open forever.
func TestIdleConnectionIsClosed(t *testing.T) {
	saved := idleTimeout
	idleTimeout = 300 * time.Millisecond
	t.Cleanup(func() { idleTimeout = saved })
	srv := start(t, Config{})
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET /version HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Close {
		t.Fatalf("GET /version = %d, close %v: want a kept-alive 200", resp.StatusCode, resp.Close)
	}
	start := time.Now()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("idle connection: read = %v, want EOF when the server closes it", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("idle connection closed after %v, want about %v", took, idleTimeout)
	}
}

// TestCacheControlAsKube: every answer says no shared cache may keep it
// (kube's WithCacheControl: "no-cache, private") unless its handler says
// otherwise, as the aggregated discovery document does ("public"), the
// same as kube-apiserver 1.37.1 answers.
func TestCacheControlAsKube(t *testing.T) {
	srv := start(t, Config{})
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	for _, tc := range []struct{ path, accept, want string }{
		{"/healthz", "", "no-cache, private"},
		{"/api/v1/namespaces/default/configmaps/missing", "", "no-cache, private"},
		{"/api/v1/namespaces", "", "no-cache, private"},
		{"/apis", "", "no-cache, private"},
		{"/apis", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", "public"},
	} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL()+tc.path, nil)
		if tc.accept != "" {
			req.Header.Set("Accept", tc.accept)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Cache-Control"); got != tc.want {
			t.Errorf("%s (Accept %q): Cache-Control %q, want %q", tc.path, tc.accept, got, tc.want)
		}
	}
}
