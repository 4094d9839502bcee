package handlers

import (
	"net/http"
	"slices"
	"strings"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The media types kube-apiserver's routes for built-in kinds declare they
// produce: every route the first three; lists and watches the streams
// too; pods/log plain text first.
var (
	routeMedia     = []string{mediaJSON, mediaYAML, mediaProtobuf}
	routeListMedia = append(routeMedia[:len(routeMedia):len(routeMedia)], mediaJSON+";stream=watch", mediaProtobuf+";stream=watch")
	routeLogMedia  = append([]string{"text/plain"}, routeMedia...)
)

// RouteNotAcceptable answers as kube-apiserver's router (go-restful)
// does before any handler runs, for the paths it routes (built-in kinds,
// their discovery documents, /version): nil if the Accept header names
// "*/*" or, parameters aside, exactly one of the types the route
// produces; else its 406, whose message lists them. Nothing else is
// matched: not "application/*", nor a type the handler could produce but
// the route does not declare.
func RouteNotAcceptable(r *http.Request, produces []string) error {
	accept := r.Header.Get("Accept")
	if accept == "" {
		return nil
	}
	for clause := range strings.SplitSeq(accept, ",") {
		mt, _, _ := strings.Cut(clause, ";")
		mt = strings.Trim(mt, " ")
		if mt == "*/*" || slices.Contains(produces, mt) {
			return nil
		}
	}
	return api.FromKubeError(apierrors.NewGenericServerResponse(http.StatusNotAcceptable, "", schema.GroupResource{}, "",
		"406: Not Acceptable\n\nAvailable representations: "+strings.Join(produces, ", "), 0, false))
}

// Discovery and /version routes' media types, for RouteNotAcceptable.
var (
	// DiscoveryRouteMedia are what the routes of /api, /api/v1 and a
	// built-in group version produce.
	DiscoveryRouteMedia = routeMedia
	// VersionRouteMedia are what /version's route produces.
	VersionRouteMedia = []string{mediaJSON}
)

// routeMediaFor is what kube's route for this request to a built-in kind
// produces, or nil where it produces anything (connect subresources) or
// no go-restful route serves it (custom resources).
func (q *request) routeMediaFor(watch bool) []string {
	if !servesProtobuf(q.t) {
		return nil
	}
	if q.info.Subresource != "" {
		sr, ok := registry.FindSubresource(q.t, q.info.Subresource)
		switch {
		case !ok || sr.Serve == registry.ServeNotYet:
			return nil // no route: 404
		case sr.Name == "log":
			return routeLogMedia
		case sr.Serve == registry.ServeConnect:
			return nil
		}
		return routeMedia
	}
	switch {
	case watch || (q.info.Name == "" && q.r.Method == http.MethodGet):
		return routeListMedia
	}
	return routeMedia
}
