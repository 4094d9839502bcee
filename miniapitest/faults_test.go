package miniapitest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/miniapi/miniapi/faults"
	"github.com/miniapi/miniapi/miniapitest"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
)

// TestFaults injects each kind of fault into a server's requests and
// watches through the Go API, and checks what a client-go client sees:
// kube's Statuses, a watch that ends, breaks or expires, late events,
// an etcd that does not answer.
func TestFaults(t *testing.T) {
	t.Parallel()
	env := miniapitest.Start(t, miniapitest.WithNamespaces("f"))
	cs := kubernetes.NewForConfigOrDie(env.Config)
	ctx := t.Context()
	cms := cs.CoreV1().ConfigMaps("f")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	add := func(t *testing.T, r faults.Rule) faults.Rule {
		t.Helper()
		r, err := env.Faults.Add(r)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(env.Faults.Clear)
		return r
	}
	injected := func(t *testing.T, name string) int64 {
		t.Helper()
		for _, r := range env.Faults.Rules() {
			if r.Name == name {
				return r.Injected
			}
		}
		return -1 // spent or gone
	}
	update := func() error {
		cm, err := cms.Get(ctx, "cm", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cm.Data = map[string]string{"n": time.Now().String()}
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		return err
	}

	t.Run("the next updates conflict", func(t *testing.T) {
		add(t, faults.Rule{Name: "conflicts", Match: faults.Match{Verbs: []string{"update"}, Resources: []string{"configmaps"}},
			Error: faults.Conflict(), Times: 2})
		for range 2 {
			err := update()
			if !apierrors.IsConflict(err) {
				t.Fatalf("update: %v, want a conflict", err)
			}
			if want := `Operation cannot be fulfilled on configmaps "cm": ` + faults.OptimisticLockMessage; err.Error() != want {
				t.Errorf("conflict says %q, want %q", err, want)
			}
		}
		if err := update(); err != nil {
			t.Fatalf("the third update: %v", err)
		}
		if n := injected(t, "conflicts"); n != -1 {
			t.Errorf("the spent rule remains with %d injected", n)
		}
		// client-go's conflict retry gets through a conflict.
		add(t, faults.Rule{Match: faults.Match{Verbs: []string{"update"}}, Error: faults.Conflict(), Times: 1})
		if err := retry.RetryOnConflict(retry.DefaultRetry, update); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("429 with Retry-After", func(t *testing.T) {
		add(t, faults.Rule{Name: "busy", Match: faults.Match{Verbs: []string{"get"}, Names: []string{"cm"}},
			Error: faults.TooManyRequests(1), Times: 1})
		resp := rawGet(t, env, "/api/v1/namespaces/f/configmaps/cm")
		if resp.code != http.StatusTooManyRequests || resp.header.Get("Retry-After") != "1" {
			t.Fatalf("got %d, Retry-After %q; want 429 with Retry-After 1", resp.code, resp.header.Get("Retry-After"))
		}
		var st metav1.Status
		if err := json.Unmarshal(resp.body, &st); err != nil || st.Reason != metav1.StatusReasonTooManyRequests {
			t.Errorf("body %s is not a TooManyRequests Status (%v)", resp.body, err)
		}
		// client-go waits Retry-After and tries again.
		add(t, faults.Rule{Match: faults.Match{Verbs: []string{"get"}}, Error: faults.TooManyRequests(1), Times: 1})
		start := time.Now()
		if _, err := cms.Get(ctx, "cm", metav1.GetOptions{}); err != nil {
			t.Fatalf("client-go did not retry a 429: %v", err)
		}
		if waited := time.Since(start); waited < time.Second {
			t.Errorf("client-go retried after %v, before Retry-After", waited)
		}
	})

	t.Run("errors and latency", func(t *testing.T) {
		for _, c := range []struct {
			err   *faults.Error
			check func(error) bool
		}{
			{faults.InternalError(), apierrors.IsInternalError},
			{faults.Timeout(), apierrors.IsTimeout},
			{&faults.Error{Code: 503}, apierrors.IsServiceUnavailable},
			{&faults.Error{Code: 422, Reason: metav1.StatusReasonInvalid, Message: "the fault says no"}, func(err error) bool {
				return apierrors.IsInvalid(err) && strings.Contains(err.Error(), "the fault says no")
			}},
		} {
			r := add(t, faults.Rule{Match: faults.Match{Verbs: []string{"list"}, Resources: []string{"configmaps"}}, Error: c.err, Times: 1})
			// A Retry-After on 503 makes client-go retry; ask once.
			_, err := cms.List(ctx, metav1.ListOptions{})
			if c.err.Code == 503 && err == nil {
				continue
			}
			if !c.check(err) {
				t.Errorf("rule %s (%d): list answered %v", r.Name, c.err.Code, err)
			}
		}
		add(t, faults.Rule{Match: faults.Match{Verbs: []string{"list"}}, Latency: metav1.Duration{Duration: 300 * time.Millisecond}})
		start := time.Now()
		if _, err := cms.List(ctx, metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d < 300*time.Millisecond {
			t.Errorf("a list with 300ms of latency took %v", d)
		}
	})

	t.Run("watches end, break and expire", func(t *testing.T) {
		for _, action := range []faults.WatchAction{faults.WatchEnd, faults.WatchReset, faults.WatchExpire} {
			w, err := cms.Watch(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			r := add(t, faults.Rule{Match: faults.Match{Resources: []string{"configmaps"}}, Watch: action, Times: 1})
			var events []watch.Event
			for ev := range w.ResultChan() {
				events = append(events, ev)
			}
			w.Stop()
			switch action {
			case faults.WatchEnd, faults.WatchReset:
				// An ended watch closes; a broken one closes, perhaps
				// after client-go reports the broken stream.
				for _, ev := range events {
					if ev.Type == watch.Error && action == faults.WatchEnd {
						t.Errorf("%s: an ERROR event: %+v", action, ev.Object)
					}
				}
			case faults.WatchExpire:
				// The initial ADDED events, perhaps, then the ERROR.
				last := events[len(events)-1]
				if last.Type != watch.Error {
					t.Fatalf("expire: events %+v, want an ERROR last", events)
				}
				if st, ok := last.Object.(*metav1.Status); !ok || st.Code != http.StatusGone || st.Reason != metav1.StatusReasonExpired ||
					!strings.HasPrefix(st.Message, "too old resource version: ") {
					t.Errorf("expire: the ERROR event holds %+v, want 410 Expired", last.Object)
				}
			}
			if n := injected(t, r.Name); n != -1 {
				t.Errorf("%s: the rule remains with %d injected", action, n)
			}
		}
	})

	t.Run("a reset is not a clean end", func(t *testing.T) {
		hc, err := rest.HTTPClientFor(env.Config)
		if err != nil {
			t.Fatal(err)
		}
		for _, action := range []faults.WatchAction{faults.WatchEnd, faults.WatchReset} {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, env.URL+"/api/v1/namespaces/f/configmaps?watch=true", nil)
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			add(t, faults.Rule{Match: faults.Match{Resources: []string{"configmaps"}}, Watch: action, Times: 1})
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			if (err == nil) != (action == faults.WatchEnd) {
				t.Errorf("%s: reading the stream to its end: %v", action, err)
			}
		}
	})

	t.Run("watch events are delayed", func(t *testing.T) {
		w, err := cms.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=late"})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		add(t, faults.Rule{Match: faults.Match{Resources: []string{"configmaps"}}, WatchDelay: metav1.Duration{Duration: 400 * time.Millisecond}})
		start := time.Now()
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "late"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		select {
		case ev := <-w.ResultChan():
			if ev.Type != watch.Added {
				t.Fatalf("got %s, want ADDED", ev.Type)
			}
			if d := time.Since(start); d < 400*time.Millisecond {
				t.Errorf("the event came after %v, before the 400ms delay", d)
			}
		case <-time.After(testTimeout):
			t.Fatal("no event")
		}
	})

	t.Run("etcd is unavailable", func(t *testing.T) {
		r := add(t, faults.Rule{Name: "outage", EtcdUnavailable: true, For: metav1.Duration{Duration: time.Second}})
		_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "during"}}, metav1.CreateOptions{})
		if !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), "etcdserver: request timed out") {
			t.Errorf("a create during the outage: %v, want 500 etcdserver: request timed out", err)
		}
		// Reads served from the watch cache still answer.
		if _, err := cms.Get(ctx, "cm", metav1.GetOptions{ResourceVersion: "0"}); err != nil {
			t.Errorf("a cached get during the outage: %v", err)
		}
		if n := injected(t, "outage"); n < 1 {
			t.Errorf("the outage injected %d faults", n)
		}
		time.Sleep(time.Until(r.Expires.Time))
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{}); err != nil {
			t.Errorf("a create after the outage: %v", err)
		}
		if _, err := cms.Get(ctx, "during", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the create refused during the outage is stored: %v", err)
		}
	})
}

// TestFaultsAdminEndpoint drives the rules over HTTP, as a user of the
// binary would with kubectl get --raw or curl.
func TestFaultsAdminEndpoint(t *testing.T) {
	t.Parallel()
	env := miniapitest.Start(t, miniapitest.WithFaultSeed(42))
	post := func(body string) rawResponse {
		return rawDo(t, env.Config, http.MethodPost, env.URL+faults.Path, body)
	}
	resp := post(`{"name":"slow-pods","match":{"verbs":["list"],"resources":["pods"]},"latency":"10ms","times":3}`)
	if resp.code != http.StatusCreated {
		t.Fatalf("POST: %d %s", resp.code, resp.body)
	}
	var r faults.Rule
	if err := json.Unmarshal(resp.body, &r); err != nil || r.Name != "slow-pods" || r.Latency.Duration != 10*time.Millisecond {
		t.Fatalf("POST answered %s (%v)", resp.body, err)
	}
	cs := kubernetes.NewForConfigOrDie(env.Config)
	if _, err := cs.CoreV1().Pods("default").List(t.Context(), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	resp = rawDo(t, env.Config, http.MethodGet, env.URL+faults.Path, "")
	var list faults.List
	if err := json.Unmarshal(resp.body, &list); err != nil {
		t.Fatalf("GET: %s (%v)", resp.body, err)
	}
	if list.Seed != 42 || list.Injected != 1 || len(list.Rules) != 1 || list.Rules[0].Injected != 1 {
		t.Errorf("GET answered %s, want seed 42 and one rule with one fault injected", resp.body)
	}
	for _, bad := range []string{`{"match":{}}`, `{"error":{"code":409},"bogus":1}`, `{`} {
		if resp := post(bad); resp.code != http.StatusBadRequest || !bytes.Contains(resp.body, []byte(`"kind":"Status"`)) {
			t.Errorf("POST %s: %d %s, want a 400 Status", bad, resp.code, resp.body)
		}
	}
	if resp := rawDo(t, env.Config, http.MethodDelete, env.URL+faults.Path+"/slow-pods", ""); resp.code != http.StatusOK {
		t.Errorf("DELETE slow-pods: %d %s", resp.code, resp.body)
	}
	if resp := rawDo(t, env.Config, http.MethodDelete, env.URL+faults.Path+"/slow-pods", ""); resp.code != http.StatusNotFound {
		t.Errorf("DELETE slow-pods again: %d %s", resp.code, resp.body)
	}
	// Only who may use non-resource paths may: anonymous may not.
	anon := rest.AnonymousClientConfig(env.Config)
	if resp := rawDo(t, anon, http.MethodGet, env.URL+faults.Path, ""); resp.code != http.StatusForbidden {
		t.Errorf("anonymous GET: %d %s, want 403", resp.code, resp.body)
	}
}

type rawResponse struct {
	code   int
	header http.Header
	body   []byte
}

func rawGet(t *testing.T, env *miniapitest.Env, path string) rawResponse {
	return rawDo(t, env.Config, http.MethodGet, env.URL+path, "")
}

// rawDo sends one request with cfg's credentials and no client-go
// retries.
func rawDo(t *testing.T, cfg *rest.Config, method, url, body string) rawResponse {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return rawResponse{code: resp.StatusCode, header: resp.Header, body: b}
}
