package faults

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Injector holds a server's fault rules and injects them. The zero
// value is not usable; see New.
type Injector struct {
	log  *slog.Logger
	seed uint64

	// active is the number of rules, read without the lock so that a
	// server with none pays one atomic load per request.
	active atomic.Int64
	// outage is set while an etcdUnavailable rule may be live.
	outage atomic.Bool

	mu      sync.Mutex
	rng     *rand.Rand
	rules   []*Rule
	next    int
	total   int64
	watches map[*Watch]struct{}
}

// New returns an injector with no rules whose random draws (for rules
// with a Probability) come from seed: the same requests in the same
// order meet the same faults.
func New(seed uint64, log *slog.Logger) *Injector {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Injector{
		log:     log,
		seed:    seed,
		rng:     rand.New(rand.NewPCG(seed, seed)),
		watches: map[*Watch]struct{}{},
	}
}

// Seed is the seed the injector was made with.
func (i *Injector) Seed() uint64 { return i.seed }

// Add validates r and adds it; the rule returned is the one stored,
// named and with its expiry set. A watch rule acts at once on the
// matching watches already open.
func (i *Injector) Add(r Rule) (Rule, error) {
	if err := r.validate(); err != nil {
		return Rule{}, err
	}
	r.Injected = 0
	r.Expires = nil
	if r.For.Duration > 0 {
		t := metav1.NewTime(time.Now().Add(r.For.Duration))
		r.Expires = &t
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	i.next++
	if r.Name == "" {
		r.Name = fmt.Sprintf("fault-%d", i.next)
	}
	for _, old := range i.rules {
		if old.Name == r.Name {
			return Rule{}, fmt.Errorf("a fault rule named %q exists", r.Name)
		}
	}
	stored := r
	i.rules = append(i.rules, &stored)
	i.active.Store(int64(len(i.rules)))
	if stored.EtcdUnavailable {
		i.outage.Store(true)
	}
	if stored.Watch != "" {
		for w := range i.watches {
			i.signalLocked(&stored, w)
		}
	}
	return stored, nil
}

// Remove removes the named rule, reporting whether there was one.
func (i *Injector) Remove(name string) bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	n := len(i.rules)
	i.rules = slices.DeleteFunc(i.rules, func(r *Rule) bool { return r.Name == name })
	i.updateLocked()
	return len(i.rules) < n
}

// Clear removes every rule.
func (i *Injector) Clear() {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.rules = nil
	i.updateLocked()
}

// Rules returns the live rules, with their counts.
func (i *Injector) Rules() []Rule {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.pruneLocked(time.Now())
	out := make([]Rule, len(i.rules))
	for n, r := range i.rules {
		out[n] = *r
	}
	return out
}

// Injected is the number of faults injected since the injector was
// made, spent and removed rules included.
func (i *Injector) Injected() int64 {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.total
}

// attrs is what a rule matches on.
type attrs struct {
	verb, group, resource, subresource string
	namespace, name                    string
	userAgent, user, fieldManager      string
}

func (m *Match) matches(q *attrs) bool {
	if len(m.Verbs) > 0 && !slices.Contains(m.Verbs, q.verb) {
		return false
	}
	if len(m.Resources) > 0 && !slices.ContainsFunc(m.Resources, q.isResource) {
		return false
	}
	if len(m.Namespaces) > 0 && !slices.Contains(m.Namespaces, q.namespace) {
		return false
	}
	if len(m.Names) > 0 && !slices.Contains(m.Names, q.name) {
		return false
	}
	if len(m.UserAgents) > 0 && !slices.ContainsFunc(m.UserAgents, func(p string) bool { return strings.HasPrefix(q.userAgent, p) }) {
		return false
	}
	if len(m.Users) > 0 && !slices.Contains(m.Users, q.user) {
		return false
	}
	if len(m.FieldManagers) > 0 && !slices.Contains(m.FieldManagers, q.fieldManager) {
		return false
	}
	return true
}

// isResource reports whether name ("pods", "pods/status",
// "deployments.apps/scale") names the request's resource.
func (q *attrs) isResource(name string) bool {
	res, sub, _ := strings.Cut(name, "/")
	if sub != q.subresource {
		return false
	}
	r, group, dotted := strings.Cut(res, ".")
	if r != q.resource {
		return false
	}
	return !dotted || group == q.group
}

// draw decides, under the lock, whether rule r (which matched) injects
// now, and counts it if so.
func (i *Injector) drawLocked(r *Rule) bool {
	if r.Times > 0 && r.Injected >= r.Times {
		return false
	}
	if r.Probability > 0 && r.Probability < 1 && i.rng.Float64() >= r.Probability {
		return false
	}
	r.Injected++
	i.total++
	if r.Times > 0 && r.Injected >= r.Times {
		// Spent: it goes at the next prune.
		r.Expires = &metav1.Time{}
	}
	return true
}

// pruneLocked drops the rules whose time is up or that are spent.
func (i *Injector) pruneLocked(now time.Time) {
	n := len(i.rules)
	i.rules = slices.DeleteFunc(i.rules, func(r *Rule) bool { return r.expired(now) })
	if len(i.rules) != n {
		i.updateLocked()
	}
}

func (i *Injector) updateLocked() {
	i.active.Store(int64(len(i.rules)))
	i.outage.Store(slices.ContainsFunc(i.rules, func(r *Rule) bool { return r.EtcdUnavailable }))
}

// requestFault is what happens to one request that is not a watch
// signal: a latency, then an error or the request served.
type requestFault struct {
	latency time.Duration
	err     *Error
	rule    string
}

// forRequest returns the faults to inject into q, counting and logging
// them: the longest latency of the matching latency rules, and the
// first matching error rule's error.
func (i *Injector) forRequest(q *attrs) (f requestFault) {
	if i.active.Load() == 0 {
		return f
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	i.pruneLocked(time.Now())
	for _, r := range i.rules {
		if r.Error == nil && r.Latency.Duration == 0 {
			continue
		}
		if f.err != nil && r.Error != nil {
			continue
		}
		if !r.Match.matches(q) || !i.drawLocked(r) {
			continue
		}
		i.logInjected(r, q)
		f.latency = max(f.latency, r.Latency.Duration)
		if r.Error != nil {
			f.err, f.rule = r.Error, r.Name
		}
	}
	return f
}

func (i *Injector) logInjected(r *Rule, q *attrs) {
	i.log.Info("fault injected", "rule", r.Name, "verb", q.verb, "resource", q.resource, "subresource", q.subresource,
		"namespace", q.namespace, "name", q.name, "userAgent", q.userAgent, "injected", r.Injected)
}

// etcdUnavailable reports whether an etcd outage rule is live, counting
// the call it fails.
func (i *Injector) etcdUnavailable() bool {
	if !i.outage.Load() {
		return false
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	i.pruneLocked(time.Now())
	for _, r := range i.rules {
		if r.EtcdUnavailable && i.drawLocked(r) {
			i.log.Info("fault injected", "rule", r.Name, "etcdUnavailable", true, "injected", r.Injected)
			return true
		}
	}
	return false
}

// Watch is an open watch as the injector sees it: the handler that
// streams it reads Signals and asks Delay before each event.
type Watch struct {
	i   *Injector
	req attrs
	c   chan WatchAction
}

// Signals delivers the actions to take on the watch; nil on a nil
// Watch, so a handler may select on it unconditionally.
func (w *Watch) Signals() <-chan WatchAction {
	if w == nil {
		return nil
	}
	return w.c
}

// Delay is how long to hold back the next event (the longest delay of
// the live watchDelay rules that match and draw it).
func (w *Watch) Delay() time.Duration {
	if w == nil || w.i.active.Load() == 0 {
		return 0
	}
	i := w.i
	i.mu.Lock()
	defer i.mu.Unlock()
	i.pruneLocked(time.Now())
	var d time.Duration
	for _, r := range i.rules {
		if r.WatchDelay.Duration > 0 && r.Match.matches(&w.req) && i.drawLocked(r) {
			i.logInjected(r, &w.req)
			d = max(d, r.WatchDelay.Duration)
		}
	}
	return d
}

// openWatch registers a watch for the request's lifetime; the caller
// calls the returned function when it ends. Live watch rules act on it
// at once.
func (i *Injector) openWatch(q attrs) (*Watch, func()) {
	w := &Watch{i: i, req: q, c: make(chan WatchAction, 1)}
	i.mu.Lock()
	i.watches[w] = struct{}{}
	if i.active.Load() > 0 {
		i.pruneLocked(time.Now())
		for _, r := range i.rules {
			if r.Watch != "" {
				i.signalLocked(r, w)
			}
		}
	}
	i.mu.Unlock()
	return w, func() {
		i.mu.Lock()
		delete(i.watches, w)
		i.mu.Unlock()
	}
}

// signalLocked hands rule r's action to watch w if r matches and draws.
func (i *Injector) signalLocked(r *Rule, w *Watch) {
	// Only the injector sends, under its lock, so a pending action
	// stays pending: the watch ends with it anyway.
	if r.expired(time.Now()) || !r.Match.matches(&w.req) || len(w.c) > 0 || !i.drawLocked(r) {
		return
	}
	w.c <- r.Watch
	i.logInjected(r, &w.req)
}

// SignalWatches hands action to every open watch, outside any rule and
// uncounted: the server's own doing (a reset), not an injected fault.
func (i *Injector) SignalWatches(action WatchAction) {
	i.mu.Lock()
	defer i.mu.Unlock()
	for w := range i.watches {
		if len(w.c) == 0 {
			w.c <- action
		}
	}
}

type watchKey struct{}

// WatchFrom returns the watch registered for ctx's request, or nil.
func WatchFrom(ctx context.Context) *Watch {
	w, _ := ctx.Value(watchKey{}).(*Watch)
	return w
}
