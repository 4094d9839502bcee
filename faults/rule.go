package faults

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Rule is one fault: which requests it matches, what it does to them,
// and for how long. It is also the admin endpoint's wire format (JSON).
type Rule struct {
	// Name identifies the rule; Add names it "fault-N" when empty.
	Name string `json:"name,omitempty"`
	// Match selects the requests; empty matches every resource request.
	Match Match `json:"match,omitempty"`

	// Error answers matching requests with this Status instead of
	// serving them. With Latency, the answer comes after the latency.
	Error *Error `json:"error,omitempty"`
	// Latency delays matching requests before they are served (or
	// answered with Error).
	Latency metav1.Duration `json:"latency,omitempty"`
	// Watch ends matching watches: those open when the rule is added and
	// those opened while it lasts. See WatchAction.
	Watch WatchAction `json:"watch,omitempty"`
	// WatchDelay holds back each event of matching watches this long
	// before it is sent.
	WatchDelay metav1.Duration `json:"watchDelay,omitempty"`
	// EtcdUnavailable makes every etcd call of the server fail, as etcd
	// does when it has no leader or cannot keep up ("etcdserver: request
	// timed out"), for as long as the rule lasts. Match is ignored.
	EtcdUnavailable bool `json:"etcdUnavailable,omitempty"`

	// Probability, between 0 and 1, is the chance that a matching
	// request is faulted, drawn from the injector's seeded source; 0
	// means always.
	Probability float64 `json:"probability,omitempty"`
	// Times is how many faults the rule injects before it is spent and
	// removed; 0 means no limit.
	Times int64 `json:"times,omitempty"`
	// For is how long the rule lasts once added; 0 means until removed.
	For metav1.Duration `json:"for,omitempty"`

	// Injected counts the faults this rule has injected (read-only).
	Injected int64 `json:"injected,omitempty"`
	// Expires is when the rule ends, if For is set (read-only).
	Expires *metav1.Time `json:"expires,omitempty"`
}

// Match selects requests. Each non-empty list must contain the
// request's value; empty lists match anything. Only resource requests
// (the API's own paths) are matched, never /healthz, /metrics and the
// like.
type Match struct {
	// Verbs are kube's request verbs: get, list, watch, create, update,
	// patch, delete, deletecollection.
	Verbs []string `json:"verbs,omitempty"`
	// Resources name resources as "pods", "pods/status",
	// "deployments.apps" or "deployments.apps/scale"; a name without a
	// subresource matches the resource's own requests only.
	Resources []string `json:"resources,omitempty"`
	// Namespaces and Names match the request's namespace and object
	// name.
	Namespaces []string `json:"namespaces,omitempty"`
	Names      []string `json:"names,omitempty"`
	// UserAgents match the start of the request's User-Agent
	// (controller-runtime's is the binary's name).
	UserAgents []string `json:"userAgents,omitempty"`
	// Users match the authenticated user's name.
	Users []string `json:"users,omitempty"`
	// FieldManagers match the request's fieldManager parameter.
	FieldManagers []string `json:"fieldManagers,omitempty"`
}

// Error is the Status a rule answers with. A code alone gives kube's own
// answer for it: 409 the optimistic-concurrency conflict of the
// requested object, 429 "Too many requests" with Retry-After, 500 an
// internal error, 503 service unavailable, 504 a request timeout.
// Reason and Message, when set, replace kube's.
type Error struct {
	Code    int32               `json:"code"`
	Reason  metav1.StatusReason `json:"reason,omitempty"`
	Message string              `json:"message,omitempty"`
	// RetryAfterSeconds is sent as Retry-After (and in the Status's
	// details); 429 and 503 default to 1.
	RetryAfterSeconds int32 `json:"retryAfterSeconds,omitempty"`
}

// WatchAction is what a rule does to a matching watch.
type WatchAction string

const (
	// WatchEnd ends the watch cleanly: the response ends, as when a
	// watch times out, and the client watches again.
	WatchEnd WatchAction = "end"
	// WatchReset drops the connection mid-stream (HTTP/2: the stream is
	// reset; HTTP/1.1: the connection closes without ending the
	// response; WebSocket: the socket closes).
	WatchReset WatchAction = "reset"
	// WatchExpire sends an ERROR event with kube's 410 Expired Status,
	// as after the watched resourceVersion was compacted; the client
	// must list again.
	WatchExpire WatchAction = "expire"
)

// Conflict is 409 Conflict: kube's optimistic-concurrency failure of the
// requested object.
func Conflict() *Error { return &Error{Code: 409} }

// TooManyRequests is 429 with Retry-After, as kube's priority and
// fairness answers.
func TooManyRequests(retryAfterSeconds int32) *Error {
	return &Error{Code: 429, RetryAfterSeconds: retryAfterSeconds}
}

// InternalError is 500, as kube answers when etcd or a handler fails.
func InternalError() *Error { return &Error{Code: 500} }

// Timeout is 504, kube's answer to a request that ran out of time.
func Timeout() *Error { return &Error{Code: 504} }

var knownVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}

// validate says what is wrong with r, if anything.
func (r *Rule) validate() error {
	actions := 0
	for _, set := range []bool{r.Error != nil || r.Latency.Duration > 0, r.Watch != "", r.WatchDelay.Duration > 0, r.EtcdUnavailable} {
		if set {
			actions++
		}
	}
	if actions != 1 {
		return errors.New("a fault rule needs exactly one of: error and/or latency, watch, watchDelay, etcdUnavailable")
	}
	if r.Latency.Duration < 0 || r.WatchDelay.Duration < 0 || r.For.Duration < 0 {
		return errors.New("durations must not be negative")
	}
	if r.Probability < 0 || r.Probability > 1 {
		return fmt.Errorf("probability %v is not between 0 and 1", r.Probability)
	}
	if r.Times < 0 {
		return fmt.Errorf("times %d is negative", r.Times)
	}
	if e := r.Error; e != nil && (e.Code < 400 || e.Code > 599) {
		return fmt.Errorf("error code %d is not an HTTP error code (400-599)", e.Code)
	}
	switch r.Watch {
	case "", WatchEnd, WatchReset, WatchExpire:
	default:
		return fmt.Errorf("watch action %q is none of end, reset, expire", r.Watch)
	}
	for _, v := range r.Match.Verbs {
		if !slices.Contains(knownVerbs, v) {
			return fmt.Errorf("verb %q is none of %s", v, strings.Join(knownVerbs, ", "))
		}
	}
	if r.Watch != "" || r.WatchDelay.Duration > 0 {
		for _, v := range r.Match.Verbs {
			if v != "watch" {
				return fmt.Errorf("a watch fault matches only watches, not %q", v)
			}
		}
	}
	return nil
}

// expired reports whether the rule's time is up at now.
func (r *Rule) expired(now time.Time) bool {
	return r.Expires != nil && !now.Before(r.Expires.Time)
}
