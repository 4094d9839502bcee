package server

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
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

	code, _ = call(t, c, "PATCH", base+"/team/configmaps/held", `{"metadata":{"finalizers":null}}`, "application/merge-patch+json")
	if code != 200 {
		t.Fatalf("removing the finalizer = %d", code)
	}
	if ev := readEvents(t, sc, 1)[0]; ev.Type != "DELETED" {
		t.Fatalf("held object event %s, want DELETED", ev.Type)
	}
	waitFor(t, "the namespace to go", func() bool {
		code, _ := call(t, c, "GET", base+"/team", "", "")
		return code == 404
	})
}

func TestUnknownControllerIsRefused(t *testing.T) {
	_, err := Start(context.Background(), Config{Listen: "127.0.0.1:0", UnsafePlainHTTP: true, DataDir: t.TempDir(), Controllers: []string{"*", "-bogus-controller"}})
	if err == nil || !strings.Contains(err.Error(), "bogus-controller") {
		t.Fatalf("Start with an unknown controller: %v", err)
	}
}
