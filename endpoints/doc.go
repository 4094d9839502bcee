// Package endpoints builds miniapi's HTTP handler: routing of Kubernetes
// resource paths onto endpoints/handlers, API discovery (legacy and
// aggregated v2), OpenAPI v2 and v3 documents built from the registered
// types, health and version endpoints, /metrics and /debug/pprof, and the
// request middleware (panic recovery, request logs, request deadlines,
// kube-apiserver's request metrics).
//
// Metrics are Kubernetes' own (k8s.io/apiserver's endpoints, storage,
// cacher and etcd3 metrics, in component-base's legacyregistry): this
// package records the request metrics for every request that reaches a
// served resource, labelled from kube's RequestInfo as kube-apiserver
// labels them, and serves the registry at /metrics. They are
// process-global, like kube's; RegisterMetrics registers them once.
//
// Routes are a fixed set of chi patterns; which resources exist is decided
// per request from the live registry, so types can be added and removed
// while serving, and discovery and OpenAPI change with them.
//
//	h := endpoints.New(endpoints.Config{Registry: reg, Ready: etcdReady})
//	srv := &http.Server{Handler: h}
package endpoints
