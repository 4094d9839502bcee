package endpoints

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/builtin"
	"github.com/miniapi/miniapi/endpoints/handlers"
	"github.com/miniapi/miniapi/registry"
)

// Config configures the HTTP handler.
type Config struct {
	// Registry is the live set of served types; required.
	Registry *registry.Registry
	// Logger receives request logs (debug) and errors; nil means
	// slog.Default().
	Logger *slog.Logger
	// Ready reports whether storage answers: the etcd checks of
	// /healthz, /livez and /readyz fail while it errs. Nil leaves them
	// out.
	Ready func(ctx context.Context) error
	// Checks are more health checks, after the etcd ones: PostStart in
	// /healthz, /livez and /readyz (kube-apiserver's post-start hooks,
	// which its --livez-grace-period of 0 puts in all three), ReadyOnly
	// in /readyz only, first (informer-sync) and last (shutdown).
	Checks HealthChecks
	// Handlers configures the resource handlers; its Registry and Logger
	// are filled from this Config.
	Handlers handlers.Config
	// OpenAPI supplies Kubernetes' OpenAPI definitions for the
	// documents (builtin.OpenAPI); required to serve /openapi.
	OpenAPI Definitions
	// IssuerDiscovery says the server in front serves the ServiceAccount
	// token issuer's /.well-known/openid-configuration and
	// /openid/v1/jwks, so the OpenAPI documents list them.
	IssuerDiscovery bool
	// BearerTokens says the server in front authenticates bearer tokens,
	// which the OpenAPI documents say as kube-apiserver's do (a
	// BearerToken security scheme).
	BearerTokens bool
	// RequestTimeout bounds every request that is not long-running (all
	// but watches, proxies, exec, attach, log and portforward), as
	// kube-apiserver's --request-timeout: one still running then is
	// answered 504, and a body still arriving is cut. 0 or less means
	// DefaultRequestTimeout.
	RequestTimeout time.Duration
	// InflightCounted says a filter in front of the handler (kube's
	// priority and fairness, or its max-in-flight limit) keeps
	// apiserver_current_inflight_requests, so the handler does not.
	InflightCounted bool
}

type server struct {
	reg      *registry.Registry
	log      *slog.Logger
	readyFn  func(ctx context.Context) error
	checks   HealthChecks
	handlers *handlers.Handler
	// discovery and openapi hold the documents of the latest registry
	// snapshot, rebuilt when the registry changes.
	discovery discoveryCache
	openapi   openAPICache
}

// New returns the complete HTTP handler of a miniapi server.
func New(cfg Config) http.Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	hc := cfg.Handlers
	hc.Registry, hc.Logger = cfg.Registry, cfg.Logger
	s := &server{reg: cfg.Registry, log: cfg.Logger, readyFn: cfg.Ready, checks: cfg.Checks, handlers: handlers.New(hc)}
	s.openapi.defs = cfg.OpenAPI
	s.openapi.opts = docOptions{issuer: cfg.IssuerDiscovery, bearer: cfg.BearerTokens}
	if s.openapi.defs == nil {
		s.openapi.defs = noDefinitions{}
	}

	r := chi.NewRouter()
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	r.Use(recoverPanics(cfg.Logger), logRequests(cfg.Logger), withRequestDeadline(builtin.Codecs(), cfg.RequestTimeout))
	if !cfg.InflightCounted {
		r.Use(countInflight)
	}
	r.NotFound(s.notFound)
	r.MethodNotAllowed(s.methodNotAllowed)

	s.installHealth(r)
	installMetrics(r)
	// getBoth serves a discovery document also at its path with a
	// trailing slash, as kube-apiserver does (/apis/, /api/v1/, /version/).
	getBoth := func(pattern string, h http.HandlerFunc) {
		r.Get(pattern, h)
		r.Get(pattern+"/", h)
	}
	getBoth("/version", s.version)

	// anyBoth is getBoth for the paths kube-apiserver serves outside its
	// router (go-restful), whose handlers answer whatever the method:
	// /apis, a group, a custom resource group's version and the OpenAPI
	// documents (a HEAD or a POST gets what a GET gets).
	anyBoth := func(pattern string, h http.HandlerFunc) {
		r.HandleFunc(pattern, h)
		r.HandleFunc(pattern+"/", h)
	}
	r.HandleFunc("/openapi/v2", s.openAPIV2)
	r.HandleFunc("/openapi/v3", s.openAPIV3Index)
	r.HandleFunc("/openapi/v3/*", func(w http.ResponseWriter, r *http.Request) {
		s.openAPIV3Doc(w, r, chi.URLParam(r, "*"))
	})

	getBoth("/api", s.coreVersions)
	anyBoth("/apis", s.groupList)
	anyBoth("/apis/{group}", func(w http.ResponseWriter, r *http.Request) {
		s.group(w, r, chi.URLParam(r, "group"))
	})
	getBoth("/api/{version}", func(w http.ResponseWriter, r *http.Request) {
		s.resources(w, r, "", chi.URLParam(r, "version"))
	})
	anyBoth("/apis/{group}/{version}", func(w http.ResponseWriter, r *http.Request) {
		s.resources(w, r, chi.URLParam(r, "group"), chi.URLParam(r, "version"))
	})
	r.HandleFunc("/api/{version}/*", func(w http.ResponseWriter, r *http.Request) {
		s.resource(w, r, "", chi.URLParam(r, "version"), chi.URLParam(r, "*"))
	})
	r.HandleFunc("/apis/{group}/{version}/*", func(w http.ResponseWriter, r *http.Request) {
		s.resource(w, r, chi.URLParam(r, "group"), chi.URLParam(r, "version"), chi.URLParam(r, "*"))
	})
	return r
}

// resource resolves a resource path and hands it to the handlers.
func (s *server) resource(w http.ResponseWriter, r *http.Request, group, version, rest string) {
	info, ok := handlers.ParseResourcePath(group, version, rest)
	if !ok {
		s.notFound(w, r)
		return
	}
	t, ok := s.servedType(info)
	if !ok {
		// The handlers answer 404; kube records no metrics for it.
		s.handlers.ServeResource(w, r, info)
		return
	}
	monitor(w, r, t, func(w http.ResponseWriter, r *http.Request) {
		s.handlers.ServeResource(w, r, info)
	})
}

func (s *server) notFound(w http.ResponseWriter, r *http.Request) {
	writeStatus(w, api.NewGenericNotFound())
}

func (s *server) methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	writeStatus(w, api.NewMethodNotAllowed())
}

// writeStatus writes a StatusError as JSON, for responses outside the
// resource handlers.
func writeStatus(w http.ResponseWriter, e *api.StatusError) {
	st := e.Status()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(st.Code))
	b, _ := jsonMarshal(st)
	w.Write(b)
}
