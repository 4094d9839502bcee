package endpoints

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"k8s.io/apiserver/pkg/server/healthz"
)

// TestHealthChecks serves /healthz, /livez and /readyz as kube-apiserver
// does: "ok", the named checks one per line with ?verbose, each check at
// /<path>/<name>, ?exclude= to leave one out, and a 500 naming the failed
// checks (without their reasons) when one fails.
func TestHealthChecks(t *testing.T) {
	f := newFixture(t)
	var etcdDown atomic.Bool
	srv := httptest.NewServer(New(Config{Registry: f.reg, Ready: func(ctx context.Context) error {
		if etcdDown.Load() {
			return errors.New("etcd3: not ready: context deadline exceeded")
		}
		return nil
	}}))
	defer srv.Close()
	get := getter(t, srv.URL)
	checkGets(t, get, "", []healthCase{
		{"/healthz", 200, "ok"},
		{"/livez", 200, "ok"},
		{"/readyz", 200, "ok"},
		{"/healthz?verbose", 200, "[+]ping ok\n[+]etcd ok\nhealthz check passed\n"},
		{"/livez?verbose", 200, "[+]ping ok\n[+]etcd ok\nlivez check passed\n"},
		{"/readyz?verbose", 200, "[+]ping ok\n[+]etcd ok\n[+]etcd-readiness ok\nreadyz check passed\n"},
		{"/healthz/ping", 200, "ok"},
		{"/livez/etcd", 200, "ok"},
		{"/readyz/etcd-readiness", 200, "ok"},
		{"/readyz?verbose&exclude=etcd", 200, "[+]ping ok\n[+]etcd excluded: ok\n[+]etcd-readiness ok\nreadyz check passed\n"},
		{"/healthz?verbose&exclude=nope", 200, "[+]ping ok\n[+]etcd ok\nwarn: some health checks cannot be excluded: no matches for \"nope\"\nhealthz check passed\n"},
	})
	if code, _ := get("/healthz/nope"); code != 404 {
		t.Errorf("GET /healthz/nope = %d, want 404", code)
	}

	etcdDown.Store(true)
	checkGets(t, get, "with etcd down, ", []healthCase{
		{"/readyz", 500, "[+]ping ok\n[-]etcd failed: reason withheld\n[-]etcd-readiness failed: reason withheld\nreadyz check failed\n"},
		{"/livez", 500, "[+]ping ok\n[-]etcd failed: reason withheld\nlivez check failed\n"},
		{"/healthz?exclude=etcd", 200, "ok"},
		{"/readyz/etcd", 500, "internal server error: etcd3: not ready: context deadline exceeded\n"},
		{"/readyz/ping", 200, "ok"},
	})
}

// TestHealthChecksPostStart: a post-start check is in all three, fails
// them until it passes, and the readiness-only checks are in /readyz
// alone, first and last.
func TestHealthChecksPostStart(t *testing.T) {
	f := newFixture(t)
	var done atomic.Bool
	hook := healthz.NamedCheck("poststarthook/rbac/bootstrap-roles", func(*http.Request) error {
		if !done.Load() {
			return errors.New("not finished")
		}
		return nil
	})
	srv := httptest.NewServer(New(Config{Registry: f.reg, Ready: func(context.Context) error { return nil }, Checks: HealthChecks{
		PostStart:  []healthz.HealthChecker{hook},
		ReadyFirst: []healthz.HealthChecker{healthz.NamedCheck("informer-sync", func(*http.Request) error { return nil })},
		ReadyLast:  []healthz.HealthChecker{healthz.NamedCheck("shutdown", func(*http.Request) error { return nil })},
	}}))
	defer srv.Close()
	get := getter(t, srv.URL)
	checkGets(t, get, "", []healthCase{
		{"/readyz?verbose", 500, "[+]ping ok\n[+]etcd ok\n[+]etcd-readiness ok\n[+]informer-sync ok\n[-]poststarthook/rbac/bootstrap-roles failed: reason withheld\n[+]shutdown ok\nreadyz check failed\n"},
		{"/livez", 500, "[+]ping ok\n[+]etcd ok\n[-]poststarthook/rbac/bootstrap-roles failed: reason withheld\nlivez check failed\n"},
		{"/healthz/poststarthook/rbac/bootstrap-roles", 500, "internal server error: not finished\n"},
	})
	done.Store(true)
	if code, body := get("/livez?verbose"); code != 200 || body != "[+]ping ok\n[+]etcd ok\n[+]poststarthook/rbac/bootstrap-roles ok\nlivez check passed\n" {
		t.Errorf("GET /livez?verbose = %d %q once the hook is done", code, body)
	}
}

// healthCase is a GET and the answer it must get.
type healthCase struct {
	path string
	code int
	body string
}

// checkGets GETs each case's path and reports, after prefix, the
// answers that differ.
func checkGets(t *testing.T, get func(string) (int, string), prefix string, cases []healthCase) {
	t.Helper()
	for _, c := range cases {
		if code, body := get(c.path); code != c.code || body != c.body {
			t.Errorf("%sGET %s = %d %q, want %d %q", prefix, c.path, code, body, c.code, c.body)
		}
	}
}

// getter returns a function that GETs a path of the server at url and
// returns the status code and body.
func getter(t *testing.T, url string) func(path string) (int, string) {
	return func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}
}
