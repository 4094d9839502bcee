// Package endpoints builds miniapi's HTTP handler: routing of Kubernetes
// resource paths onto endpoints/handlers, API discovery (legacy and
// aggregated v2), OpenAPI v2 and v3 documents built from the registered
// types, health and version endpoints, and the request middleware (panic
// recovery, request logs).
//
// Routes are a fixed set of chi patterns; which resources exist is decided
// per request from the live registry, so types can be added and removed
// while serving, and discovery and OpenAPI change with them.
//
//	h := endpoints.New(endpoints.Config{Registry: reg, Ready: etcdReady})
//	srv := &http.Server{Handler: h}
package endpoints
