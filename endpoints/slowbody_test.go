package endpoints

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/miniapi/miniapi/builtin"
	"github.com/miniapi/miniapi/internal/apitest"
)

// slowReader yields a ConfigMap's first bytes, then one space every
// 100 ms, for a minute: a client trickling its body in.
type slowReader struct{ sent int }

func (s *slowReader) Read(p []byte) (int, error) {
	if s.sent == 0 {
		s.sent = copy(p, `{"metadata":{"name":"slow"}}`)
		return s.sent, nil
	}
	if s.sent > 600 {
		return 0, io.EOF
	}
	time.Sleep(100 * time.Millisecond)
	s.sent++
	p[0] = ' '
	return 1, nil
}

// TestSlowBodyIsCut answers a request whose body is still trickling in
// when the request timeout passes with kube-apiserver's 504 (its timeout
// filter's), over HTTP/1.1 (where kube itself waits for the body) and
// HTTP/2, and stores nothing; over HTTP/1.1 the connection is closed.
func TestSlowBodyIsCut(t *testing.T) {
	reg, _ := apitest.Registry(t)
	srv := httptest.NewUnstartedServer(New(Config{Registry: reg, OpenAPI: &builtin.OpenAPI{}, RequestTimeout: time.Second}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	client := srv.Client()
	r, err := client.Post(srv.URL+"/api/v1/namespaces", "application/json", strings.NewReader(`{"metadata":{"name":"ns1"}}`))
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != 201 {
		t.Fatalf("create namespace = %d", r.StatusCode)
	}
	want := map[string]any{
		"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{}, "status": "Failure",
		"message": "Timeout: request did not complete within the allotted timeout",
		"reason":  "Timeout", "details": map[string]any{}, "code": float64(504),
	}
	check := func(proto string, code int, body []byte, took time.Duration) {
		t.Helper()
		var got map[string]any
		json.Unmarshal(body, &got)
		if code != 504 || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: slow body answered %d %s, want kube's 504 %v", proto, code, body, want)
		}
		if took > 5*time.Second {
			t.Errorf("%s: answered after %v, want about the 1s request timeout", proto, took)
		}
	}

	// HTTP/2, through the standard client.
	start := time.Now()
	resp, err := client.Post(srv.URL+cms, "application/json", &slowReader{})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Fatalf("not HTTP/2: %s", resp.Proto)
	}
	check("HTTP/2", resp.StatusCode, body, time.Since(start))

	// HTTP/1.1, by hand: headers, then the body a byte at a time.
	cfg := srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	cfg.NextProtos = []string{"http/1.1"}
	conn, err := tls.Dial("tcp", srv.Listener.Addr().String(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start = time.Now()
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", cms)
	go func() {
		for range 100 {
			time.Sleep(100 * time.Millisecond)
			if _, err := conn.Write([]byte(" ")); err != nil {
				return
			}
		}
	}()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(conn)
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("HTTP/1.1: no answer: %v", err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	check("HTTP/1.1", resp.StatusCode, body, time.Since(start))
	if !resp.Close {
		t.Error("HTTP/1.1: the connection is kept after a cut body")
	}
	if _, err := br.ReadByte(); err == nil {
		t.Error("HTTP/1.1: the connection is still open")
	}

	r, err = client.Get(srv.URL + cms + "/slow")
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != 404 {
		t.Errorf("GET slow = %d, want 404: nothing stored", r.StatusCode)
	}
}
