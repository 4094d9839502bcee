package handlers

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/miniapi/miniapi/internal/apitest"
)

// syncBuffer is a bytes.Buffer safe for a logger and the test to share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestClientCancelIsNotAnError logs a request the client cancelled at
// debug, not as an internal error at ERROR (one HTTP/2 rapid-reset
// connection wrote thousands of lines), and answers it with
// kube-apiserver's 504 for a request that did not complete.
func TestClientCancelIsNotAnError(t *testing.T) {
	reg, _ := apitest.Registry(t)
	var logs syncBuffer
	h := New(Config{Registry: reg, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct{ method, path, body string }{
		{"GET", "/api/v1/namespaces/default/configmaps/a", ""},
		{"GET", "/api/v1/namespaces/default/configmaps", ""},
		{"POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"a"}}`},
	} {
		r := httptest.NewRequestWithContext(ctx, tc.method, tc.path, strings.NewReader(tc.body))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		info, ok := resourcePath(r.URL.Path)
		if !ok {
			t.Fatal(tc.path)
		}
		h.ServeResource(w, r, info)
		if w.Code != 504 || !strings.Contains(w.Body.String(), "request did not complete within requested timeout - context canceled") {
			t.Errorf("%s %s = %d %s, want kube's 504", tc.method, tc.path, w.Code, w.Body)
		}
	}
	out := logs.String()
	if strings.Contains(out, "level=ERROR") {
		t.Errorf("a cancelled request was logged at ERROR:\n%s", out)
	}
	if got := strings.Count(out, "level=DEBUG msg=\"request ended before it completed\""); got != 3 {
		t.Errorf("%d debug lines for 3 cancelled requests:\n%s", got, out)
	}
}
