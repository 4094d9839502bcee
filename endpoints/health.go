package endpoints

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"time"
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

// healthy answers a liveness check: the process serves HTTP.
func (s *server) healthy(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprint(w, "ok")
}

// ready answers ok only while etcd answers.
func (s *server) ready(w http.ResponseWriter, r *http.Request) {
	if s.readyFn != nil {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := s.readyFn(ctx); err != nil {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "[-]etcd failed: %v\nreadyz check failed\n", err)
			return
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprint(w, "ok")
}
