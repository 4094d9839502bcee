package journal

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/apiserver/pkg/endpoints/request"
)

// The ring keeps the last entries, oldest first, and says how many it
// forgot.
func TestRing(t *testing.T) {
	j := New(3)
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		j.add(Entry{Kind: Request, Verb: "get", Resource: "pods", Namespace: "ns", Name: name, Code: 200})
	}
	var names []string
	for _, e := range j.Entries() {
		names = append(names, e.Name)
	}
	if got := strings.Join(names, ","); got != "c,d,e" {
		t.Errorf("entries %s, want c,d,e", got)
	}
	if d := j.Dropped(); d != 2 {
		t.Errorf("dropped %d, want 2", d)
	}
	mark := j.Mark()
	j.add(Entry{Kind: Request, Verb: "create", Resource: "pods", Namespace: "ns", Name: "f", Code: 201, After: "9"})
	since := j.Entries(Since(mark))
	if len(since) != 1 || since[0].Name != "f" {
		t.Errorf("since the mark: %+v", since)
	}
	if n := len(j.Entries(Stored(), Object("pods", "ns", "f"))); n != 1 {
		t.Errorf("stored writes of pods ns/f: %d", n)
	}
	if tl := Timeline(j.Entries()); strings.Count(tl, "\n") != 3 || !strings.Contains(tl, "create  pods ns/f 201") {
		t.Errorf("timeline:\n%s", tl)
	}
}

func TestSplitKey(t *testing.T) {
	for _, c := range []struct {
		key        string
		namespaced bool
		ns, name   string
	}{
		{"/registry/configmaps/ns1/cm", true, "ns1", "cm"},
		{"/registry/namespaces/ns1", false, "", "ns1"},
		{"/registry/apps/deployments/default/web", true, "default", "web"},
	} {
		if ns, name := splitKey(c.key, c.namespaced); ns != c.ns || name != c.name {
			t.Errorf("splitKey(%q) = %q, %q; want %q, %q", c.key, ns, name, c.ns, c.name)
		}
	}
}

// The filter keeps the writer's Hijacker and Flusher, which WebSocket
// and streaming libraries type-assert, and records an upgrade as 101.
func TestFilterKeepsHijackAndFlush(t *testing.T) {
	j := New(10)
	h := j.Filter(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := w.(http.Flusher); !ok {
			t.Error("the writer is no http.Flusher")
		}
		hj, ok := w.(http.Hijacker)
		if !ok {
			t.Error("the writer is no http.Hijacker")
			return
		}
		conn, buf, err := hj.Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		buf.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: test\r\nConnection: Upgrade\r\n\r\n")
		buf.Flush()
	}))
	// What kube's request-info filter would have put in the context.
	// served closes once the filter has recorded the request: the client
	// has its answer a moment before.
	served := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(served)
		info := &request.RequestInfo{IsResourceRequest: true, Verb: "watch", Resource: "configmaps", Namespace: "ns"}
		h.ServeHTTP(w, r.WithContext(request.WithRequestInfo(r.Context(), info)))
	}))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "test")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Errorf("status %d, want 101", resp.StatusCode)
	}
	<-served
	if es := j.Entries(Requests()); len(es) != 1 || es[0].Code != http.StatusSwitchingProtocols || es[0].Verb != "watch" {
		t.Errorf("entries %+v, want one watch answered 101", es)
	}
}
