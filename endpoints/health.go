package endpoints

import (
	"net/http"
	"runtime"
	"slices"

	"github.com/go-chi/chi/v5"
	"k8s.io/apiserver/pkg/server/healthz"
)

// Version is miniapi's own version, reported by /version.
var Version = "0.1.0"

// KubernetesVersion is the Kubernetes API version miniapi serves, the one
// kubectl compares itself with.
const KubernetesVersion = "v1.37.0"

// versionInfo is /version's document, Kubernetes' version.Info plus
// miniapi's own version.
type versionInfo struct {
	Major          string `json:"major"`
	Minor          string `json:"minor"`
	GitVersion     string `json:"gitVersion"`
	GitCommit      string `json:"gitCommit"`
	GitTreeState   string `json:"gitTreeState"`
	BuildDate      string `json:"buildDate"`
	GoVersion      string `json:"goVersion"`
	Compiler       string `json:"compiler"`
	Platform       string `json:"platform"`
	MiniapiVersion string `json:"miniapiVersion"`
}

func (s *server) version(w http.ResponseWriter, r *http.Request) {
	writeDiscovery(w, versionInfo{
		Major: "1", Minor: "37",
		GitVersion:     KubernetesVersion + "+miniapi-" + Version,
		GitTreeState:   "clean",
		BuildDate:      "1970-01-01T00:00:00Z",
		GoVersion:      runtime.Version(),
		Compiler:       runtime.Compiler,
		Platform:       runtime.GOOS + "/" + runtime.GOARCH,
		MiniapiVersion: Version,
	})
}

// installHealth serves /healthz, /livez and /readyz through kube's own
// healthz handlers: "ok", or with ?verbose each check on its own line
// ("[+]ping ok" ... "healthz check passed"), each check alone at
// /<path>/<name>, ?exclude=<name> to skip one, and a 500 listing the
// failed checks without their reasons. The checks are the ones real for
// miniapi, named as kube-apiserver names the same: ping (the process
// serves HTTP) and etcd (storage answers) everywhere, and
// etcd-readiness for readiness, as kube's /readyz lists both. Kube's
// log check is left out: it watches klog's flush daemon, which miniapi's
// logging does not depend on.
func (s *server) installHealth(r chi.Router) {
	checks := []healthz.HealthChecker{healthz.PingHealthz}
	var ready []healthz.HealthChecker
	if s.readyFn != nil {
		etcd := func(r *http.Request) error { return s.readyFn(r.Context()) }
		checks = append(checks, healthz.NamedCheck("etcd", etcd))
		ready = append(ready, healthz.NamedCheck("etcd-readiness", etcd))
	}
	healthz.InstallHandler(r, checks...)
	healthz.InstallLivezHandler(r, checks...)
	healthz.InstallReadyzHandler(r, append(slices.Clip(checks), ready...)...)
}
