package server

import (
	"net/http"
	"time"

	"github.com/miniapi/miniapi/auth"
	"github.com/miniapi/miniapi/builtin"
	"github.com/miniapi/miniapi/endpoints"
	"github.com/miniapi/miniapi/faults"
	"github.com/miniapi/miniapi/journal"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/filters"
	"k8s.io/apiserver/pkg/endpoints/filters/impersonation"
	"k8s.io/apiserver/pkg/endpoints/request"
	genericfilters "k8s.io/apiserver/pkg/server/filters"
)

// chain is what the filters in front of the API handler are built from.
type chain struct {
	// auth authenticates and authorizes; nil serves every request as
	// system:unsecured (plain HTTP).
	auth *auth.Auth
	// flowControl is API priority and fairness; nil means kube's
	// max-in-flight limit, with maxReadOnly and maxMutating (0: none).
	flowControl              *flowControl
	maxReadOnly, maxMutating int
	// requestWaitLimit bounds how long a request with no deadline
	// waits in a priority level's queue (kube: --request-timeout/4).
	requestWaitLimit time.Duration
	// audit is nil when nothing is audited.
	audit *auditing
	// faults, when set, injects faults into the requests that reach the
	// API, once authorized.
	faults *faults.Injector
	// journal, when set, records the requests that pass
	// authentication, with their answers.
	journal *journal.Journal
}

// build puts api behind the fault injector and kube-apiserver's filters,
// in the order of its DefaultBuildHandlerChain, innermost first:
// authorization, priority and fairness (or the max-in-flight limit), the
// journal (which so sees the answers of both), impersonation, audit,
// authentication (whose failures are audited too), Cache-Control,
// request info, the received timestamp, and the audit ID outermost. The
// filters are kube's own; the request deadline, panic recovery and
// request logging run inside api (endpoints.New).
func (c chain) build(api http.Handler) http.Handler {
	codecs := builtin.Codecs()
	h := api
	if c.faults != nil {
		h = c.faults.Filter(h, codecs)
	}
	if c.auth != nil {
		h = filters.WithAuthorization(h, c.auth.Authorizer, codecs)
	}
	if c.flowControl != nil {
		h = genericfilters.WithPriorityAndFairness(h, endpoints.LongRunning, c.flowControl.ctl, c.flowControl.estimator, c.requestWaitLimit)
	} else {
		h = genericfilters.WithMaxInFlightLimit(h, c.maxReadOnly, c.maxMutating, endpoints.LongRunning)
	}
	if c.journal != nil {
		h = c.journal.Filter(h)
	}
	if c.auth != nil {
		h = impersonation.WithConstrainedImpersonation(h, c.auth.Authorizer, codecs)
	}
	h = filters.WithAudit(h, c.audit.sink(), c.audit.evaluator(), endpoints.LongRunning)
	if c.auth != nil {
		failed := filters.WithFailedAuthenticationAudit(filters.Unauthorized(codecs), c.audit.sink(), c.audit.evaluator())
		h = filters.WithAuthentication(h, c.auth.Authenticator, failed, c.auth.APIAudiences, nil)
	} else {
		h = withUnsecuredUser(h)
	}
	// Every answer not cacheable by a shared cache unless its handler
	// says otherwise, refusals of authentication included.
	h = filters.WithCacheControl(h)
	h = filters.WithRequestInfo(h, auth.NewRequestInfoResolver())
	h = filters.WithRequestReceivedTimestamp(h)
	return filters.WithAuditInit(h)
}

// withUnsecuredUser serves plain HTTP as kube-apiserver's old insecure
// port did: every request is system:unsecured, in system:masters, with
// no authentication or authorization (and so exempt from flow control).
func withUnsecuredUser(h http.Handler) http.Handler {
	unsecured := &user.DefaultInfo{Name: "system:unsecured", Groups: []string{user.SystemPrivilegedGroup, user.AllAuthenticated}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(request.WithUser(r.Context(), unsecured)))
	})
}
