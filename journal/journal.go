// Package journal keeps a bounded record of what a server did: every API
// request (who, what, the answer, how long, the resourceVersions a write
// went from and to) and every watch event sent to a client, for tests to
// question ("how many times did my controller update this object?",
// "was anything written after my last action?") and to print when they
// fail.
package journal

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apiserver/pkg/endpoints/request"
)

// Kind tells a request from a watch event.
type Kind string

const (
	// Request is an API request, recorded when its answer is complete
	// (a watch: when it ends).
	Request Kind = "request"
	// Event is a watch event written to a client.
	Event Kind = "event"
)

// Entry is one record. Seq orders entries; the other fields describe the
// request, or for an Event the watch that sent it.
type Entry struct {
	Seq  uint64    `json:"seq"`
	Kind Kind      `json:"kind"`
	Time time.Time `json:"time"`

	User      string `json:"user,omitempty"`
	UserAgent string `json:"userAgent,omitempty"`
	// Verb is kube's request verb (get, list, watch, create, update,
	// patch, delete, deletecollection).
	Verb        string `json:"verb,omitempty"`
	Group       string `json:"group,omitempty"`
	Resource    string `json:"resource,omitempty"`
	Subresource string `json:"subresource,omitempty"`
	Namespace   string `json:"namespace,omitempty"`
	Name        string `json:"name,omitempty"`
	// FieldManager is the request's fieldManager parameter, or kube's
	// default for a write without one (the user agent up to its first
	// "/").
	FieldManager string `json:"fieldManager,omitempty"`

	// Code is the HTTP status of the answer; Latency how long the
	// request took.
	Code    int           `json:"code,omitempty"`
	Latency time.Duration `json:"latency,omitempty"`
	// Before and After are the object's resourceVersions around a write
	// that stored something: Before is "" for a create, After the
	// deletion's for a delete.
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`

	// EventType (ADDED, MODIFIED, DELETED, ERROR) and Watch (the
	// watch's number, shared by its events) are set on events; Name,
	// Namespace and After are then the object's.
	EventType string `json:"eventType,omitempty"`
	Watch     uint64 `json:"watch,omitempty"`
}

// IsWrite reports whether the entry is a request that asked to change
// something (create, update, patch, delete, deletecollection).
func (e *Entry) IsWrite() bool {
	if e.Kind != Request {
		return false
	}
	switch e.Verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// Journal is a ring of the last entries. Its methods are safe for
// concurrent use; a nil Journal records nothing.
type Journal struct {
	mu sync.Mutex
	// ring grows as entries come, up to size, so that an idle server's
	// journal costs nothing (a test process may run hundreds).
	ring    []Entry
	size    int
	next    uint64 // Seq of the next entry
	watches atomic.Uint64
}

// New returns a journal keeping the last size entries.
func New(size int) *Journal {
	return &Journal{size: max(size, 0)}
}

// add stores e, dropping the oldest entry when full.
func (j *Journal) add(e Entry) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.next++
	e.Seq = j.next
	if len(j.ring) < j.size {
		j.ring = append(j.ring, e)
		return
	}
	if j.size > 0 {
		j.ring[(e.Seq-1)%uint64(j.size)] = e
	}
}

// Mark is the Seq of the last entry so far: Entries(Since(mark)) are
// what happened after it.
func (j *Journal) Mark() uint64 {
	if j == nil {
		return 0
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.next
}

// Dropped is how many entries the ring has forgotten.
func (j *Journal) Dropped() uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.next - uint64(len(j.ring))
}

// Filter selects entries; every set field must match.
type Filter func(*Entry) bool

// Entries returns the entries kept that every filter accepts, oldest
// first.
func (j *Journal) Entries(filters ...Filter) []Entry {
	if j == nil {
		return nil
	}
	j.mu.Lock()
	all := make([]Entry, 0, len(j.ring))
	start := uint64(0)
	if n := uint64(len(j.ring)); j.next > n {
		start = j.next % n // the oldest slot
	}
	for i := range uint64(len(j.ring)) {
		all = append(all, j.ring[(start+i)%uint64(len(j.ring))])
	}
	j.mu.Unlock()
	out := all[:0]
next:
	for i := range all {
		for _, f := range filters {
			if !f(&all[i]) {
				continue next
			}
		}
		out = append(out, all[i])
	}
	return out
}

// Since selects the entries after mark (see Mark).
func Since(mark uint64) Filter { return func(e *Entry) bool { return e.Seq > mark } }

// Writes selects the requests that asked to change something.
func Writes() Filter { return (*Entry).IsWrite }

// Requests selects requests, Events watch events.
func Requests() Filter { return func(e *Entry) bool { return e.Kind == Request } }

// Events selects watch events.
func Events() Filter { return func(e *Entry) bool { return e.Kind == Event } }

// Object selects what concerns one object: resource ("pods",
// "deployments.apps"), namespace ("" for cluster-scoped) and name.
// Subresource requests (status, scale) of the object are included.
func Object(resource, namespace, name string) Filter {
	res, group, _ := strings.Cut(resource, ".")
	return func(e *Entry) bool {
		return e.Resource == res && e.Group == group && e.Namespace == namespace && e.Name == name
	}
}

// UserAgent selects the entries of clients whose user agent starts with
// prefix (controller-runtime's is its binary's name).
func UserAgent(prefix string) Filter {
	return func(e *Entry) bool { return strings.HasPrefix(e.UserAgent, prefix) }
}

// Stored selects writes that stored something (a 2xx answer with a new
// resourceVersion).
func Stored() Filter { return func(e *Entry) bool { return e.IsWrite() && e.After != "" } }

// Timeline renders entries one per line, for a person reading a failed
// test's log.
func Timeline(entries []Entry) string {
	var b strings.Builder
	for _, e := range entries {
		res := e.Resource
		if e.Group != "" {
			res += "." + e.Group
		}
		if e.Subresource != "" {
			res += "/" + e.Subresource
		}
		obj := e.Name
		if e.Namespace != "" {
			obj = e.Namespace + "/" + e.Name
		}
		fmt.Fprintf(&b, "%6d %s ", e.Seq, e.Time.Format("15:04:05.000"))
		switch e.Kind {
		case Event:
			fmt.Fprintf(&b, "  watch#%d %-8s %s %s rv=%s → %s\n", e.Watch, e.EventType, res, obj, e.After, agentName(e.UserAgent))
		default:
			fmt.Fprintf(&b, "%-7s %s %s %d %v", e.Verb, res, obj, e.Code, e.Latency.Round(time.Microsecond))
			if e.Before != "" || e.After != "" {
				fmt.Fprintf(&b, " rv %s→%s", e.Before, e.After)
			}
			if e.FieldManager != "" {
				fmt.Fprintf(&b, " manager=%s", e.FieldManager)
			}
			fmt.Fprintf(&b, " by %s (%s)\n", e.User, agentName(e.UserAgent))
		}
	}
	return b.String()
}

// agentName is a user agent up to its first space.
func agentName(ua string) string {
	name, _, _ := strings.Cut(ua, " ")
	return name
}

// pending is a request's entry while it is served; the store fills in
// the resourceVersions, possibly from another goroutine than the one
// that records the entry (a request's deadline answers early).
type pending struct {
	mu     sync.Mutex
	name   string
	before int64
	after  int64
	wrote  bool
}

type pendingKey struct{}

// Wrote records, for the request of ctx, that a write took the object
// named name from resourceVersion before (0: it did not exist) to
// after. The store calls it once per write it makes; the last call
// wins.
func Wrote(ctx context.Context, name string, before, after int64) {
	p, _ := ctx.Value(pendingKey{}).(*pending)
	if p == nil {
		return
	}
	p.mu.Lock()
	p.name, p.before, p.after, p.wrote = name, before, after, true
	p.mu.Unlock()
}

// Watch is an open watch as the journal records it.
type Watch struct {
	j          *Journal
	id         uint64
	base       Entry
	namespaced atomic.Bool
}

// SetNamespaced says whether the watched resource is namespaced, for
// Sent to read a key. Nil-safe.
func (w *Watch) SetNamespaced(namespaced bool) {
	if w != nil {
		w.namespaced.Store(namespaced)
	}
}

type watchKey struct{}

// WatchFrom returns the journal's record of the watch request of ctx,
// or nil.
func WatchFrom(ctx context.Context) *Watch {
	w, _ := ctx.Value(watchKey{}).(*Watch)
	return w
}

// Sent records that the watch wrote an event of type typ about the
// object at key (the storage key; its last two segments are namespace
// and name, or the name alone) at revision rev. Nil-safe.
func (w *Watch) Sent(typ, key string, rev int64) {
	if w == nil {
		return
	}
	e := w.base
	e.Kind, e.Time, e.EventType, e.Watch, e.Verb = Event, time.Now(), typ, w.id, ""
	e.Namespace, e.Name = splitKey(key, w.namespaced.Load())
	if rev > 0 {
		e.After = strconv.FormatInt(rev, 10)
	}
	w.j.add(e)
}

// splitKey takes the namespace (of a namespaced resource) and the name
// from a storage key: its last two segments, or the last one.
func splitKey(key string, namespaced bool) (string, string) {
	rest, name := key, key
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		rest, name = key[:i], key[i+1:]
	}
	if !namespaced {
		return "", name
	}
	return rest[strings.LastIndexByte(rest, '/')+1:], name
}

// Filter records the requests that pass through it, and hands the
// store and the watch handlers what they record into. It must sit
// behind authentication and kube's request-info filter.
func (j *Journal) Filter(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, ok := request.RequestInfoFrom(r.Context())
		if !ok || !info.IsResourceRequest {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		e := Entry{
			Kind: Request, Verb: info.Verb, Group: info.APIGroup, Resource: info.Resource, Subresource: info.Subresource,
			Namespace: info.Namespace, Name: info.Name, UserAgent: r.UserAgent(),
		}
		if u, ok := request.UserFrom(r.Context()); ok {
			e.User = u.GetName()
		}
		switch e.Verb {
		case "create", "update", "patch":
			e.FieldManager = fieldManager(r)
		}
		p := &pending{}
		ctx := context.WithValue(r.Context(), pendingKey{}, p)
		if info.Verb == "watch" {
			ctx = context.WithValue(ctx, watchKey{}, &Watch{j: j, id: j.watches.Add(1), base: e})
		}
		rec := &recorder{ResponseWriter: w}
		defer func() {
			e.Time, e.Latency, e.Code = start, time.Since(start), rec.code
			if e.Code == 0 {
				e.Code = http.StatusOK
			}
			p.mu.Lock()
			if p.wrote {
				if e.Name == "" {
					e.Name = p.name // a create names its object in the body
				}
				if p.before > 0 {
					e.Before = strconv.FormatInt(p.before, 10)
				}
				e.After = strconv.FormatInt(p.after, 10)
			}
			p.mu.Unlock()
			j.add(e)
		}()
		next.ServeHTTP(rec, r.WithContext(ctx))
	})
}

// fieldManager is the manager kube records a write under: the
// fieldManager parameter, or the user agent up to its first "/".
func fieldManager(r *http.Request) string {
	if m := r.URL.Query().Get("fieldManager"); m != "" {
		return m
	}
	name, _, _ := strings.Cut(r.UserAgent(), "/")
	return name
}

// recorder notes the status code written.
type recorder struct {
	http.ResponseWriter
	code int
}

func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Hijack hands the connection over (WebSocket watches, exec and
// port-forward upgrades): their libraries type-assert http.Hijacker.
func (r *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if r.code == 0 {
		r.code = http.StatusSwitchingProtocols
	}
	return http.NewResponseController(r.ResponseWriter).Hijack()
}

// Flush sends buffered data, for code that type-asserts http.Flusher.
func (r *recorder) Flush() { http.NewResponseController(r.ResponseWriter).Flush() }

// Unwrap lets http.ResponseController reach the connection (flushes,
// deadlines).
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
