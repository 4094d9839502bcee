package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// call sends a JSON request and returns the status code and the decoded
// body.
func call(t *testing.T, c *http.Client, method, url, body, contentType string) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	data, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(data, &out)
	return resp.StatusCode, out
}

// TestNamespaceDeletionOverHTTP drives the whole deletion path through
// the server: the registry marks, the controllers Start runs empty the
// namespace, and watchers see each step.
func TestNamespaceDeletionOverHTTP(t *testing.T) {
	srv := start(t, Config{})
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	base := srv.URL() + "/api/v1/namespaces"
	post(t, c, base, `{"metadata":{"name":"team"}}`)
	post(t, c, base+"/team/configmaps", `{"metadata":{"name":"plain"}}`)
	post(t, c, base+"/team/secrets", `{"metadata":{"name":"s"},"stringData":{"k":"v"}}`)
	post(t, c, base+"/team/configmaps", `{"metadata":{"name":"held","finalizers":["example.com/hold"]}}`)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/team/configmaps?watch=true&fieldSelector=metadata.name%3Dheld", nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	if ev := readEvents(t, sc, 1)[0]; ev.Type != "ADDED" {
		t.Fatalf("first event %s", ev.Type)
	}

	code, ns := call(t, c, "DELETE", base+"/team", "", "")
	if code/100 != 2 || ns["kind"] != "Namespace" || ns["status"].(map[string]any)["phase"] != "Terminating" {
		t.Fatalf("DELETE namespace = %d %v", code, ns)
	}
	// The controller deletes the held object: it is marked (MODIFIED) and
	// stays; the rest goes, and nothing new may enter.
	if ev := readEvents(t, sc, 1)[0]; ev.Type != "MODIFIED" {
		t.Fatalf("held object event %s, want MODIFIED", ev.Type)
	}
	waitFor(t, "the plain objects to go", func() bool {
		a, _ := call(t, c, "GET", base+"/team/configmaps/plain", "", "")
		b, _ := call(t, c, "GET", base+"/team/secrets/s", "", "")
		return a == 404 && b == 404
	})
	code, st := call(t, c, "POST", base+"/team/configmaps", `{"metadata":{"name":"late"}}`, "application/json")
	if code != 403 || st["reason"] != "Forbidden" {
		t.Fatalf("create in a terminating namespace = %d %v", code, st)
	}
	if code, ns = call(t, c, "GET", base+"/team", "", ""); code != 200 || ns["status"].(map[string]any)["phase"] != "Terminating" {
		t.Fatalf("namespace while content is held = %d %v", code, ns)
	}
	// kube's namespace controller records what holds the namespace, in
	// its words.
	want := map[string]string{
		"NamespaceDeletionDiscoveryFailure": "False ResourcesDiscovered All resources successfully discovered",
		"NamespaceDeletionContentFailure":   "False ContentDeleted All content successfully deleted, may be waiting on finalization",
		"NamespaceContentRemaining":         "True SomeResourcesRemain Some resources are remaining: configmaps. has 1 resource instances",
		"NamespaceFinalizersRemaining":      "True SomeFinalizersRemain Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances",
	}
	var got map[string]string
	waitFor(t, "the namespace's conditions", func() bool {
		_, ns := call(t, c, "GET", base+"/team", "", "")
		got = map[string]string{}
		conds, _ := ns["status"].(map[string]any)["conditions"].([]any)
		for _, c := range conds {
			c := c.(map[string]any)
			got[c["type"].(string)] = fmt.Sprint(c["status"], " ", c["reason"], " ", c["message"])
		}
		for k, v := range want {
			if got[k] != v {
				return false
			}
		}
		return true
	})

	code, _ = call(t, c, "PATCH", base+"/team/configmaps/held", `{"metadata":{"finalizers":null}}`, "application/merge-patch+json")
	if code != 200 {
		t.Fatalf("removing the finalizer = %d", code)
	}
	if ev := readEvents(t, sc, 1)[0]; ev.Type != "DELETED" {
		t.Fatalf("held object event %s, want DELETED", ev.Type)
	}
	// The controller looks again after half its estimate for content
	// with finalizers (15 s), plus one: 8 s, as in a cluster.
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, _ := call(t, c, "GET", base+"/team", "", "")
		if code == 404 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the namespace did not go")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestUnlinkedControllerIsRefused: this test binary does not import
// server/podgc, so a server asked for the pod garbage collector by name
// (or alias) refuses to start, saying what to import; "*" runs the
// others.
func TestUnlinkedControllerIsRefused(t *testing.T) {
	for _, list := range [][]string{{"podgc"}, {"*", "pod-garbage-collector-controller"}} {
		_, err := Start(context.Background(), Config{Listen: "127.0.0.1:0", UnsafePlainHTTP: true, DataDir: t.TempDir(), Controllers: list})
		if err == nil || !strings.Contains(err.Error(), `import _ "github.com/miniapi/miniapi/server/podgc"`) {
			t.Fatalf("Start with controllers %q: %v", list, err)
		}
	}
	s, err := Start(context.Background(), Config{Listen: "127.0.0.1:0", UnsafePlainHTTP: true, DataDir: t.TempDir(), Controllers: []string{"*", "-podgc"}})
	if err != nil {
		t.Fatalf("Start with every linked controller: %v", err)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Error(err)
	}
}

func TestUnknownControllerIsRefused(t *testing.T) {
	_, err := Start(context.Background(), Config{Listen: "127.0.0.1:0", UnsafePlainHTTP: true, DataDir: t.TempDir(), Controllers: []string{"*", "-bogus-controller"}})
	if err == nil || !strings.Contains(err.Error(), "bogus-controller") {
		t.Fatalf("Start with an unknown controller: %v", err)
	}
}
