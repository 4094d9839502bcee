// Package handlers translates HTTP requests for resources into registry
// Store calls and their results (or errors) into Kubernetes responses: one
// file per verb, content negotiation (JSON and YAML in and out), the
// server-side conversions clients ask for in Accept (Table in table.go,
// PartialObjectMetadata in metadata.go), request body limits, query
// options, Status errors, and the WatchServer that streams watch events.
//
// The router in package endpoints parses a path into a RequestInfo and
// calls Handler.ServeResource:
//
//	h := handlers.New(handlers.Config{Registry: reg, Logger: log})
//	h.ServeResource(w, r, handlers.RequestInfo{Version: "v1", Resource: "configmaps", Namespace: "default"})
//
// Handlers hold no storage logic; every rule about objects lives in the
// registry.
package handlers
