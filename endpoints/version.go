package endpoints

import (
	"encoding/json"
	"net/http"

	"github.com/miniapi/miniapi/endpoints/handlers"
	"github.com/miniapi/miniapi/version"
)

// version answers /version: the Kubernetes version served, with
// miniapi's own.
func (s *server) version(w http.ResponseWriter, r *http.Request) {
	if err := handlers.RouteNotAcceptable(r, handlers.VersionRouteMedia); err != nil {
		handlers.WriteStatus(w, r, err)
		return
	}
	// Always indented JSON, without a final newline, as kube-apiserver's
	// /version.
	b, err := json.MarshalIndent(version.Get(), "", "  ")
	if err != nil {
		handlers.WriteStatus(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}
