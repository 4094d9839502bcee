package faults

import (
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestMatch(t *testing.T) {
	deployScale := attrs{verb: "update", group: "apps", resource: "deployments", subresource: "scale", namespace: "ns", name: "web",
		userAgent: "manager/v0.0.0 (linux/amd64)", user: "alice", fieldManager: "mgr"}
	pods := attrs{verb: "create", resource: "pods", namespace: "ns"}
	cases := []struct {
		m    Match
		q    attrs
		want bool
	}{
		{Match{}, deployScale, true},
		{Match{Resources: []string{"deployments"}}, deployScale, false}, // the subresource must be named
		{Match{Resources: []string{"deployments/scale"}}, deployScale, true},
		{Match{Resources: []string{"deployments.apps/scale"}}, deployScale, true},
		{Match{Resources: []string{"deployments.extensions/scale"}}, deployScale, false},
		{Match{Resources: []string{"pods"}}, pods, true},
		{Match{Resources: []string{"pods/status"}}, pods, false},
		{Match{Verbs: []string{"update", "patch"}}, deployScale, true},
		{Match{Verbs: []string{"patch"}}, deployScale, false},
		{Match{Namespaces: []string{"other"}}, deployScale, false},
		{Match{Names: []string{"web"}, Namespaces: []string{"ns"}}, deployScale, true},
		{Match{UserAgents: []string{"manager"}}, deployScale, true},
		{Match{UserAgents: []string{"kubectl"}}, deployScale, false},
		{Match{Users: []string{"alice"}}, deployScale, true},
		{Match{FieldManagers: []string{"mgr"}}, deployScale, true},
		{Match{FieldManagers: []string{"mgr"}}, pods, false},
	}
	for n, c := range cases {
		if got := c.m.matches(&c.q); got != c.want {
			t.Errorf("case %d: %+v matches %+v = %v, want %v", n, c.m, c.q, got, c.want)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		r    Rule
		want string
	}{
		{Rule{}, "exactly one"},
		{Rule{Error: Conflict(), Watch: WatchEnd}, "exactly one"},
		{Rule{Error: &Error{Code: 200}}, "not an HTTP error code"},
		{Rule{Error: Conflict(), Probability: 2}, "not between 0 and 1"},
		{Rule{Error: Conflict(), Times: -1}, "negative"},
		{Rule{Watch: "later"}, "none of end, reset, expire"},
		{Rule{Watch: WatchEnd, Match: Match{Verbs: []string{"list"}}}, "matches only watches"},
		{Rule{Error: Conflict(), Match: Match{Verbs: []string{"put"}}}, `verb "put"`},
	} {
		if _, err := New(0, nil).Add(c.r); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Add(%+v) = %v, want an error with %q", c.r, err, c.want)
		}
	}
	i := New(0, nil)
	if _, err := i.Add(Rule{Name: "a", Error: Conflict(), Latency: metav1.Duration{Duration: time.Millisecond}}); err != nil {
		t.Fatal(err)
	}
	if _, err := i.Add(Rule{Name: "a", Error: Conflict()}); err == nil {
		t.Error("a second rule named a was accepted")
	}
}

// A rule with Times injects that many faults, then is gone; the counts
// say so.
func TestTimes(t *testing.T) {
	i := New(0, nil)
	r, err := i.Add(Rule{Error: Conflict(), Times: 2, Match: Match{Verbs: []string{"update"}}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Name != "fault-1" {
		t.Errorf("the rule is named %q, want fault-1", r.Name)
	}
	update := attrs{verb: "update", resource: "configmaps"}
	get := attrs{verb: "get", resource: "configmaps"}
	var got []bool
	for _, q := range []attrs{update, get, update, update} {
		got = append(got, i.forRequest(&q).err != nil)
	}
	if want := []bool{true, false, true, false}; !slices.Equal(got, want) {
		t.Errorf("faulted %v, want %v", got, want)
	}
	if n := i.Injected(); n != 2 {
		t.Errorf("Injected() = %d, want 2", n)
	}
	if rules := i.Rules(); len(rules) != 0 {
		t.Errorf("a spent rule remains: %+v", rules)
	}
}

// The same seed draws the same faults; another seed, others.
func TestSeedIsDeterministic(t *testing.T) {
	draw := func(seed uint64) []bool {
		i := New(seed, nil)
		if _, err := i.Add(Rule{Error: InternalError(), Probability: 0.5}); err != nil {
			t.Fatal(err)
		}
		var out []bool
		for range 64 {
			out = append(out, i.forRequest(&attrs{verb: "get", resource: "pods"}).err != nil)
		}
		return out
	}
	a, b, c := draw(7), draw(7), draw(8)
	if !slices.Equal(a, b) {
		t.Errorf("seed 7 drew %v, then %v", a, b)
	}
	if slices.Equal(a, c) {
		t.Errorf("seeds 7 and 8 drew the same %v", a)
	}
	faulted := 0
	for _, f := range a {
		if f {
			faulted++
		}
	}
	if faulted < 16 || faulted > 48 {
		t.Errorf("probability 0.5 faulted %d of 64", faulted)
	}
}

func TestForExpires(t *testing.T) {
	i := New(0, nil)
	r, err := i.Add(Rule{EtcdUnavailable: true, For: metav1.Duration{Duration: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Expires == nil {
		t.Fatal("a rule with For has no expiry")
	}
	if !i.etcdUnavailable() {
		t.Fatal("etcd is available during the outage")
	}
	time.Sleep(time.Until(r.Expires.Time) + time.Millisecond)
	if i.etcdUnavailable() {
		t.Error("etcd is unavailable after the outage")
	}
	if len(i.Rules()) != 0 {
		t.Error("the expired rule remains")
	}
}

// A watch rule signals the matching watches open when it is added and
// those opened while it lasts, each once.
func TestWatchSignals(t *testing.T) {
	i := New(0, nil)
	pods, done := i.openWatch(attrs{verb: "watch", resource: "pods"})
	defer done()
	cms, done2 := i.openWatch(attrs{verb: "watch", resource: "configmaps"})
	defer done2()
	if _, err := i.Add(Rule{Watch: WatchExpire, Match: Match{Resources: []string{"pods"}}}); err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-pods.Signals():
		if a != WatchExpire {
			t.Errorf("the pods watch got %q", a)
		}
	default:
		t.Error("the open pods watch was not signalled")
	}
	select {
	case a := <-cms.Signals():
		t.Errorf("the configmaps watch got %q", a)
	default:
	}
	later, done3 := i.openWatch(attrs{verb: "watch", resource: "pods"})
	defer done3()
	if len(later.Signals()) != 1 {
		t.Error("a pods watch opened later was not signalled")
	}
	var none *Watch
	if none.Signals() != nil || none.Delay() != 0 {
		t.Error("a nil Watch signals")
	}
	if _, err := i.Add(Rule{WatchDelay: metav1.Duration{Duration: time.Second}, Match: Match{Resources: []string{"configmaps"}}}); err != nil {
		t.Fatal(err)
	}
	if d := cms.Delay(); d != time.Second {
		t.Errorf("the configmaps watch is delayed %v, want 1s", d)
	}
	if d := later.Delay(); d != 0 {
		t.Errorf("the pods watch is delayed %v", d)
	}
}
