package endpoints

import (
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/endpoints/filters"
	genericfilters "k8s.io/apiserver/pkg/server/filters"
)

// DefaultRequestTimeout bounds every request that is not long-running
// unless Config.RequestTimeout says otherwise: kube-apiserver's default
// --request-timeout (k8s.io/apiserver's server Config). A shorter,
// positive ?timeout= bounds a request more.
const DefaultRequestTimeout = time.Minute

// withRequestDeadline bounds each request by its ?timeout=, at most
// limit, through kube-apiserver's own filters, before routing, as kube
// does: an invalid value is kube's 400 on every path (/version,
// discovery, health and paths that do not exist included), and the
// long-running requests (watches, proxies, exec, attach, log,
// portforward), as kube's RequestInfo and long-running check tell them,
// are not bounded at all. errors writes the 400 in the encoding the
// client negotiates.
func withRequestDeadline(errors runtime.NegotiatedSerializer, limit time.Duration) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		h := filters.WithRequestDeadline(next, nil, nil, LongRunning, errors, limit)
		return filters.WithRequestInfo(h, requestInfos)
	}
}

// LongRunning tells kube-apiserver's long-running requests: its
// long-running verbs and subresources
// (k8s.io/kubernetes/pkg/controlplane/apiserver BuildGenericConfig). The
// filters in front of the handler (flow control, audit) take it too.
var LongRunning = genericfilters.BasicLongRunningRequestCheck(
	sets.NewString("watch", "proxy"),
	sets.NewString("attach", "exec", "proxy", "log", "portforward"),
)
