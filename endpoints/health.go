package endpoints

import (
	"net/http"
	"slices"

	"github.com/go-chi/chi/v5"
	"k8s.io/apiserver/pkg/server/healthz"
)

// HealthChecks are the checks of the server's own start-up and
// shutdown, named as kube-apiserver names its.
type HealthChecks struct {
	// PostStart fail until the work they name has been done.
	PostStart []healthz.HealthChecker
	// ReadyFirst and ReadyLast are /readyz's only, before and after
	// PostStart.
	ReadyFirst, ReadyLast []healthz.HealthChecker
}

// installHealth serves /healthz, /livez and /readyz through kube's own
// healthz handlers: "ok", or with ?verbose each check on its own line
// ("[+]ping ok" ... "healthz check passed"), each check alone at
// /<path>/<name>, ?exclude=<name> to skip one, and a 500 listing the
// failed checks without their reasons. The checks are the ones real for
// miniapi, named as kube-apiserver names the same: ping (the process
// serves HTTP) and etcd (storage answers) everywhere, and
// etcd-readiness for readiness, as kube's /readyz lists both, then
// s.checks. Kube's log check is left out: it watches klog's flush
// daemon, which miniapi's logging does not depend on.
func (s *server) installHealth(r chi.Router) {
	checks := []healthz.HealthChecker{healthz.PingHealthz}
	var ready []healthz.HealthChecker
	if s.readyFn != nil {
		etcd := func(r *http.Request) error { return s.readyFn(r.Context()) }
		checks = append(checks, healthz.NamedCheck("etcd", etcd))
		ready = append(ready, healthz.NamedCheck("etcd-readiness", etcd))
	}
	ready = append(slices.Clip(checks), ready...)
	ready = append(ready, s.checks.ReadyFirst...)
	ready = append(ready, s.checks.PostStart...)
	ready = append(ready, s.checks.ReadyLast...)
	checks = append(checks, s.checks.PostStart...)
	healthz.InstallHandler(r, checks...)
	healthz.InstallLivezHandler(r, checks...)
	healthz.InstallReadyzHandler(r, ready...)
}
