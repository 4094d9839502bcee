package endpoints

import (
	"net/http"

	"github.com/miniapi/miniapi/version"
)

// version answers /version: the Kubernetes version served, with
// miniapi's own.
func (s *server) version(w http.ResponseWriter, r *http.Request) {
	writeDiscovery(w, version.Get())
}
