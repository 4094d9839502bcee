package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miniapi/miniapi/registry"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// openWatch starts a watch request and returns its response; the body is
// closed at test end.
func openWatch(t *testing.T, c *http.Client, url string) *http.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// createCM creates a configmap and returns its resourceVersion.
func createCM(t *testing.T, c *http.Client, base, name string, labels string) string {
	t.Helper()
	body := fmt.Sprintf(`{"metadata":{"name":%q,"labels":{%s}}}`, name, labels)
	resp, err := c.Post(base+"/api/v1/namespaces/ns1/configmaps", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Metadata struct{ ResourceVersion string } `json:"metadata"`
	}
	json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode != 201 {
		t.Fatalf("create %s = %d", name, resp.StatusCode)
	}
	return out.Metadata.ResourceVersion
}

func TestWatchFromResourceVersion(t *testing.T) {
	srv := start(t, Config{})
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	seed(t, srv, c)
	rv := createCM(t, c, srv.URL(), "a", "")
	createCM(t, c, srv.URL(), "b", "")
	createCM(t, c, srv.URL(), "c", "")
	for _, path := range []string{
		"/api/v1/namespaces/ns1/configmaps?watch=1&resourceVersion=" + rv,
		"/api/v1/watch/namespaces/ns1/configmaps?resourceVersion=" + rv,
		"/api/v1/watch/configmaps?resourceVersion=" + rv,
	} {
		t.Run(path, func(t *testing.T) {
			resp := openWatch(t, c, srv.URL()+path)
			evs := readEvents(t, bufio.NewScanner(resp.Body), 2)
			if evs[0].Object.Metadata.Name != "b" || evs[1].Object.Metadata.Name != "c" || evs[0].Type != "ADDED" {
				t.Fatalf("events after %s: %+v", rv, evs)
			}
		})
	}
	// The legacy path to one object watches only it.
	resp := openWatch(t, c, srv.URL()+"/api/v1/watch/namespaces/ns1/configmaps/c?resourceVersion="+rv)
	ev := readEvents(t, bufio.NewScanner(resp.Body), 1)[0]
	if ev.Object.Metadata.Name != "c" {
		t.Fatalf("single-object watch got %+v", ev)
	}
}

func TestWatchSelectors(t *testing.T) {
	srv := start(t, Config{})
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	seed(t, srv, c)
	rv := createCM(t, c, srv.URL(), "x", `"tier":"db"`)
	resp := openWatch(t, c, srv.URL()+"/api/v1/namespaces/ns1/configmaps?watch=true&labelSelector=tier%3Dweb&resourceVersion="+rv)
	sc := bufio.NewScanner(resp.Body)
	byName := openWatch(t, c, srv.URL()+"/api/v1/namespaces/ns1/configmaps?watch=true&fieldSelector=metadata.name%3Dx&resourceVersion="+rv)
	scName := bufio.NewScanner(byName.Body)

	createCM(t, c, srv.URL(), "y", `"tier":"web"`)
	patch := func(name, body string) {
		req, _ := http.NewRequest("PATCH", srv.URL()+"/api/v1/namespaces/ns1/configmaps/"+name, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/merge-patch+json")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	patch("x", `{"metadata":{"labels":{"tier":"web"}}}`) // starts matching
	patch("x", `{"metadata":{"labels":{"tier":"db"}}}`)  // stops matching
	evs := readEvents(t, sc, 3)
	want := []string{"ADDED y", "ADDED x", "DELETED x"}
	for i, ev := range evs {
		if got := ev.Type + " " + ev.Object.Metadata.Name; got != want[i] {
			t.Fatalf("event %d = %s, want %s", i, got, want[i])
		}
	}
	named := readEvents(t, scName, 2)
	if named[0].Type != "MODIFIED" || named[0].Object.Metadata.Name != "x" || named[1].Object.Metadata.Name != "x" {
		t.Fatalf("metadata.name watch: %+v", named)
	}
}

func TestWatchTooOldAndTooNew(t *testing.T) {
	srv := start(t, Config{WatchCacheSize: 4})
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	seed(t, srv, c)
	first := createCM(t, c, srv.URL(), "a0", "")
	for i := 1; i < 12; i++ {
		createCM(t, c, srv.URL(), fmt.Sprintf("a%d", i), "")
	}
	// A consistent list returns only once the cache has caught up with
	// etcd, so its history has moved past the first write.
	if resp, err := c.Get(srv.URL() + "/api/v1/namespaces/ns1/configmaps"); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	resp := openWatch(t, c, srv.URL()+"/api/v1/namespaces/ns1/configmaps?watch=true&resourceVersion="+first)
	if resp.StatusCode != 200 {
		t.Fatalf("watch from a compacted-out RV answered %d, want 200 and an ERROR event", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	if !sc.Scan() {
		t.Fatal("no event")
	}
	var ev struct {
		Type   string `json:"type"`
		Object struct {
			Kind, Reason, Message string
			Code                  int
		} `json:"object"`
	}
	if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Type != "ERROR" || ev.Object.Kind != "Status" || ev.Object.Code != 410 || ev.Object.Reason != "Expired" ||
		!strings.HasPrefix(ev.Object.Message, "too old resource version: "+first+" (") {
		t.Fatalf("got %s", sc.Bytes())
	}
	if sc.Scan() {
		t.Fatalf("stream continued after the ERROR event: %s", sc.Bytes())
	}

	// A resourceVersion not reached yet: accepted, as by kube-apiserver
	// 1.37, and nothing sent before it is reached, though writes go on.
	tooNew := openWatch(t, c, srv.URL()+"/api/v1/namespaces/ns1/configmaps?watch=true&resourceVersion=999999&timeoutSeconds=1")
	createCM(t, c, srv.URL(), "later", "")
	body, _ := io.ReadAll(tooNew.Body)
	if tooNew.StatusCode != 200 || len(body) != 0 {
		t.Fatalf("too-new RV: %d %s", tooNew.StatusCode, body)
	}
}

func TestWatchTimeoutSeconds(t *testing.T) {
	srv := start(t, Config{})
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	seed(t, srv, c)
	resp := openWatch(t, c, srv.URL()+"/api/v1/namespaces/ns1/configmaps?watch=true&timeoutSeconds=1&allowWatchBookmarks=true")
	done := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(resp.Body)
		done <- b
	}()
	select {
	case b := <-done:
		if !strings.Contains(string(b), `"name":"first"`) {
			t.Fatalf("stream before timeout: %s", b)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("watch with timeoutSeconds=1 still open after 20s")
	}
}

func TestTypesAddedAndRemovedWhileServing(t *testing.T) {
	srv := start(t, Config{})
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	seed(t, srv, c)
	url := srv.URL() + "/apis/example.com/v1/namespaces/ns1/gadgets"
	get := func() int {
		resp, err := c.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get(); code != 404 {
		t.Fatalf("before Add: %d", code)
	}
	gadget := registry.Type{Group: "example.com", Version: "v1", Kind: "Gadget", Plural: "gadgets", Namespaced: true}
	if err := srv.Registry().Add(gadget); err != nil {
		t.Fatal(err)
	}
	post(t, c, url, `{"metadata":{"name":"g"}}`)
	if code := get(); code != 200 {
		t.Fatalf("after Add: %d", code)
	}
	if err := srv.Registry().Remove(gadget.GVR()); err != nil {
		t.Fatal(err)
	}
	if code := get(); code != 404 {
		t.Fatalf("after Remove: %d", code)
	}
}

func TestCompactorBoundsHistory(t *testing.T) {
	srv := start(t, Config{CompactionInterval: 100 * time.Millisecond})
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	seed(t, srv, c)
	first, _ := strconv.ParseInt(createCM(t, c, srv.URL(), "old", ""), 10, 64)
	createCM(t, c, srv.URL(), "newer", "")
	// Within a few intervals etcd's history no longer reaches the first write.
	waitFor(t, "etcd to compact past the first write", func() bool {
		_, err := srv.client.Get(context.Background(), "/registry/core/configmaps/ns1/old", clientv3.WithRev(first))
		return errors.Is(err, rpctypes.ErrCompacted)
	})
	// The caches are told, once the compactor's call returns: a list
	// pinned to the compacted revision is then refused as etcd refuses
	// it, not served from the cache's memory.
	var code int
	var msg string
	waitFor(t, "an Exact list at the compacted revision to be refused", func() bool {
		code, msg = listExact(t, c, srv.URL(), first)
		return code != http.StatusOK
	})
	if code != http.StatusGone || !strings.Contains(msg, "too old") {
		t.Fatalf("Exact list at a compacted revision = %d %q, want 410 and too old", code, msg)
	}
	// A watch from it is still served from the cache's history, as
	// kube-apiserver's cache serves it.
	w := openWatch(t, c, srv.URL()+"/api/v1/namespaces/ns1/configmaps?watch=true&resourceVersion="+strconv.FormatInt(first, 10))
	if ev := readEvents(t, bufio.NewScanner(w.Body), 1)[0]; ev.Type != "ADDED" || ev.Object.Metadata.Name != "newer" {
		t.Fatalf("watch from the compacted revision: first event %s %s, want ADDED newer", ev.Type, ev.Object.Metadata.Name)
	}
	// Serving goes on: the cache was not disturbed.
	createCM(t, c, srv.URL(), "after", "")
}

// listExact lists ns1's configmaps at exactly rev, and returns the status
// code and, for an error, the Status message.
func listExact(t *testing.T, c *http.Client, base string, rev int64) (int, string) {
	t.Helper()
	resp, err := c.Get(fmt.Sprintf("%s/api/v1/namespaces/ns1/configmaps?resourceVersion=%d&resourceVersionMatch=Exact", base, rev))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct{ Message string }
	json.NewDecoder(resp.Body).Decode(&st)
	return resp.StatusCode, st.Message
}

// TestWatchTimeoutAlreadyPast: a watch whose timeoutSeconds is negative
// has timed out before it starts; kube's timer ends it at once, and so
// does miniapi's: 200 and no events, where opening it through the cache
// with the past deadline answered 500.
func TestWatchTimeoutAlreadyPast(t *testing.T) {
	srv := start(t, Config{})
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	seed(t, srv, c)
	createCM(t, c, srv.URL(), "a", "")
	for _, q := range []string{"timeoutSeconds=-1", "timeoutSeconds=-1&resourceVersion=0", "timeoutSeconds=-99999999999", "timeoutSeconds=-1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"} {
		resp, err := c.Get(srv.URL() + "/api/v1/namespaces/ns1/configmaps?watch=1&" + q)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || strings.Contains(string(body), `"code":500`) {
			t.Errorf("watch with %s: %d %.300s, want 200 and no error", q, resp.StatusCode, body)
		}
	}
}
