package e2e

import (
	"encoding/base64"
	"io"
	"reflect"
	"syscall"
	"testing"
)

// TestRestart stops the server and starts it again on the same data
// directory: every object comes back exactly as it was, resourceVersions
// included, and new writes continue above them.
func TestRestart(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	dir := t.TempDir()
	srv := startServer(t, dir)

	const (
		nsPath     = "/api/v1/namespaces/keep"
		cmPath     = nsPath + "/configmaps/settings"
		secretPath = nsPath + "/secrets/token"
		leasePath  = "/apis/coordination.k8s.io/v1/namespaces/keep/leases/leader"
		twicePath  = nsPath + "/configmaps/twice"
	)
	srv.must(t, 201, "POST", "/api/v1/namespaces", namespace("keep"))
	srv.must(t, 201, "POST", nsPath+"/configmaps", configMap("settings", map[string]string{"app": "keep"}, map[string]string{"mode": "fast"}))
	srv.must(t, 201, "POST", nsPath+"/secrets", map[string]any{
		"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "token"}, "type": "Opaque",
		"data": map[string]string{"password": base64.StdEncoding.EncodeToString([]byte("s3cr3t"))},
	})
	srv.must(t, 201, "POST", "/apis/coordination.k8s.io/v1/namespaces/keep/leases", map[string]any{
		"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": map[string]any{"name": "leader"},
		"spec": map[string]any{"holderIdentity": "node-a", "leaseDurationSeconds": 15},
	})
	srv.must(t, 201, "POST", nsPath+"/configmaps", configMap("twice", nil, map[string]string{"v": "0"}))
	srv.must(t, 200, "PATCH", twicePath, `{"data":{"v":"1"}}`, "Content-Type", "application/merge-patch+json")
	srv.must(t, 200, "PATCH", twicePath, `{"data":{"v":"2"}}`, "Content-Type", "application/merge-patch+json")

	paths := []string{nsPath, cmPath, secretPath, leasePath, twicePath}
	before := map[string]map[string]any{}
	for _, p := range paths {
		before[p] = srv.must(t, 200, "GET", p, nil)
	}
	if str(before[twicePath], "data.v") != "2" || len(get(before[twicePath], "metadata.managedFields").([]any)) != 1 {
		t.Fatalf("object updated twice: %v", before[twicePath])
	}
	lastRV := str(srv.must(t, 200, "GET", "/api/v1/configmaps", nil), "metadata.resourceVersion")

	srv.stop(t)
	if t.Failed() {
		t.FailNow()
	}
	srv = startServer(t, dir)

	for _, p := range paths {
		after := srv.must(t, 200, "GET", p, nil)
		if !reflect.DeepEqual(after, before[p]) {
			t.Errorf("GET %s after restart:\n got  %v\n want %v", p, after, before[p])
		}
	}
	list := srv.must(t, 200, "GET", nsPath+"/configmaps", nil)
	if rv := str(list, "metadata.resourceVersion"); rvInt(t, rv) < rvInt(t, lastRV) {
		t.Errorf("list resourceVersion after restart %s, below %s before it", rv, lastRV)
	}
	if n := names(t, list); !reflect.DeepEqual(n, []string{"settings", "twice"}) {
		t.Errorf("configmaps after restart: %v", n)
	}
	got := srv.must(t, 200, "GET", nsPath+"/configmaps?resourceVersion="+str(before[twicePath], "metadata.resourceVersion")+"&resourceVersionMatch=NotOlderThan", nil)
	if len(items(t, got)) != 2 {
		t.Errorf("list NotOlderThan the last pre-restart write: %v", got)
	}

	// One more write: its resourceVersion is above everything before.
	next := srv.must(t, 200, "PATCH", twicePath, `{"data":{"v":"3"}}`, "Content-Type", "application/merge-patch+json")
	if rv := str(next, "metadata.resourceVersion"); rvInt(t, rv) <= rvInt(t, lastRV) {
		t.Errorf("write after restart got resourceVersion %s, not above %s", rv, lastRV)
	}
	// The first write after a restart builds the merge schemas; its
	// managedFields entry still merges with the one stored before.
	if str(next, "data.v") != "3" || str(next, "metadata.uid") != str(before[twicePath], "metadata.uid") ||
		len(get(next, "metadata.managedFields").([]any)) != 1 {
		t.Errorf("write after restart: %v", next)
	}
}

// TestSignals checks SIGINT shuts the server down as cleanly as SIGTERM:
// exit code 0, and the data directory opens again with its data.
func TestSignals(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	dir := t.TempDir()
	srv := startServer(t, dir)
	created := srv.must(t, 201, "POST", "/api/v1/namespaces", namespace("sigint"))
	srv.stopWith(t, syscall.SIGINT)
	if t.Failed() {
		t.FailNow()
	}

	srv = startServer(t, dir)
	if got := srv.must(t, 200, "GET", "/api/v1/namespaces/sigint", nil); !reflect.DeepEqual(got, created) {
		t.Errorf("after SIGINT and restart: got %v, want %v", got, created)
	}
	srv.stopWith(t, syscall.SIGINT)
}

// TestShutdownEndsWatches checks a graceful shutdown does not wait for
// open watches: they end cleanly, and the server still exits 0 (a
// shutdown stuck behind a watch would time out and exit non-zero).
func TestShutdownEndsWatches(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	srv := startServer(t, t.TempDir())
	resp, err := srv.client.Get(srv.URL + "/api/v1/namespaces?watch=true")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("watch = %d", resp.StatusCode)
	}
	srv.stop(t)
	// The stream ends once the server is gone; the client's timeout
	// bounds the read should it not.
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Errorf("watch stream did not end cleanly at shutdown: %v", err)
	}
}

// TestInstancesSideBySide runs two servers at once, each with its own data
// directory: nothing listens on fixed ports, so they do not collide, and
// they do not share data.
func TestInstancesSideBySide(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	a := startServer(t, t.TempDir())
	b := startServer(t, t.TempDir())
	if a.URL == b.URL {
		t.Fatalf("both servers on %s", a.URL)
	}
	a.must(t, 201, "POST", "/api/v1/namespaces", namespace("only-a"))
	wantStatus(t, b.do(t, "GET", "/api/v1/namespaces/only-a", nil), 404, "NotFound")
	for _, srv := range []*serverProc{a, b} {
		for _, p := range []string{"/healthz", "/livez", "/readyz"} {
			if r := srv.do(t, "GET", p, nil); r.code != 200 {
				t.Errorf("%s %s = %d: %s", srv.URL, p, r.code, r.body)
			}
		}
	}
}
