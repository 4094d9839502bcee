package handlers

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	"github.com/miniapi/miniapi/storage"
)

// DefaultMaxBodyBytes is kube-apiserver's limit on request bodies (3 MiB).
const DefaultMaxBodyBytes = 3 << 20

// Config configures a Handler.
type Config struct {
	// Registry resolves resources on every request; required.
	Registry *registry.Registry
	// Logger receives request errors; nil means slog.Default().
	Logger *slog.Logger
	// MaxBodyBytes caps request bodies; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// ShutdownWatches, when closed, ends every open watch so a graceful
	// shutdown does not wait for them.
	ShutdownWatches <-chan struct{}
	// MinWatchTimeout is the shortest lifetime given to a watch without
	// timeoutSeconds; each gets a random one between it and twice it.
	// 0 means 30 minutes, as kube-apiserver.
	MinWatchTimeout time.Duration
	// Authorizer is asked, as kube-apiserver's delete handler asks it,
	// whether a user may delete with
	// ignoreStoreReadErrorWithClusterBreakingPotential (verb
	// unsafe-delete-ignore-read-errors); nil allows it, for a server that
	// authorizes nothing.
	Authorizer authorizer.Authorizer
}

// Handler serves resource requests.
type Handler struct {
	reg             *registry.Registry
	log             *slog.Logger
	maxBody         int64
	shutdownWatches <-chan struct{}
	minWatchTimeout time.Duration
	authz           authorizer.Authorizer
}

// New returns a Handler.
func New(cfg Config) *Handler {
	h := &Handler{
		reg:             cfg.Registry,
		log:             cfg.Logger,
		maxBody:         cfg.MaxBodyBytes,
		shutdownWatches: cfg.ShutdownWatches,
		minWatchTimeout: cfg.MinWatchTimeout,
		authz:           cfg.Authorizer,
	}
	if h.log == nil {
		h.log = slog.Default()
	}
	if h.maxBody == 0 {
		h.maxBody = DefaultMaxBodyBytes
	}
	if h.minWatchTimeout == 0 {
		h.minWatchTimeout = 30 * time.Minute
	}
	return h
}

// RequestInfo is what a resource URL addresses.
type RequestInfo struct {
	Group, Version, Resource string
	// Namespace is set when the URL has namespaces/<ns>/.
	Namespace string
	// NamespacedPath is true when the URL has namespaces/<ns>/ before the
	// resource.
	NamespacedPath bool
	Name           string
	Subresource    string
	// SubPath is the path after a proxy subresource.
	SubPath string
	// Watch is true for the legacy /watch/ URL prefix.
	Watch bool
}

// ServeResource dispatches a request for a resource to its verb.
func (h *Handler) ServeResource(w http.ResponseWriter, r *http.Request, info RequestInfo) {
	res, ok := h.reg.Snapshot().Lookup(info.Group, info.Version, info.Resource)
	if !ok {
		writeError(w, r, h.log, api.NewGenericNotFound())
		return
	}
	t := &res.Type
	if !ScopeMatches(t, info) {
		writeError(w, r, h.log, api.NewGenericNotFound())
		return
	}
	w, r = withWarnings(w, r)
	if t.DeprecationWarning != "" {
		api.AddWarning(r.Context(), t.DeprecationWarning)
	}
	// Watches end by timeoutSeconds; ?timeout= bounds the other requests
	// before they get here (the request's context deadline).
	watch := info.Watch || (info.Name == "" && r.Method == http.MethodGet && isWatch(r))
	req := &request{h: h, w: w, r: r, info: info, store: res.Store, t: t}
	if produces := req.routeMediaFor(watch); produces != nil {
		if err := RouteNotAcceptable(r, produces); err != nil {
			req.fail(err)
			return
		}
	}
	switch {
	case registry.IsVirtual(t):
		req.virtual(watch)
	case watch:
		req.watch()
	case info.Subresource != "":
		req.subresource()
	case info.Name == "":
		req.collection()
	default:
		req.object()
	}
}

// ScopeMatches reports whether info's path reaches type t: a namespaced
// type is reached by name only under namespaces/<ns>/, a cluster-scoped
// type never under it; a namespaced collection without a namespace is
// the all-namespaces list.
func ScopeMatches(t *registry.Type, info RequestInfo) bool {
	return !(info.NamespacedPath && !t.Namespaced) && !(!info.NamespacedPath && t.Namespaced && info.Name != "")
}

// request carries one resource request through its verb handler.
type request struct {
	h     *Handler
	w     http.ResponseWriter
	r     *http.Request
	info  RequestInfo
	store resourceStore
	t     *registry.Type
}

// resourceStore is what the handlers ask of a resource's store: each
// verb, given the request's options, answering stored objects. The
// registry's Store is one; the handlers depend on nothing else of it.
type resourceStore interface {
	Get(ctx context.Context, ns, name, resourceVersion string) (*storage.Object, error)
	List(ctx context.Context, ns string, opts registry.ListOptions) (*storage.List, error)
	Watch(ctx context.Context, ns string, opts registry.WatchOptions) (storage.Watcher, error)
	Create(ctx context.Context, ns string, body []byte, opts registry.CreateOptions) (*storage.Object, error)
	Put(ctx context.Context, ns, name string, body []byte, opts registry.UpdateOptions, mayCreate func(context.Context) error) (*storage.Object, bool, error)
	Patch(ctx context.Context, ns, name, patchType string, patch []byte, opts registry.UpdateOptions) (*storage.Object, error)
	Apply(ctx context.Context, ns, name string, patch []byte, opts registry.ApplyOptions) (*storage.Object, bool, error)
	Delete(ctx context.Context, ns, name string, opts registry.DeleteOptions) (*storage.Object, bool, error)
	DeleteCollection(ctx context.Context, ns string, list registry.ListOptions, opts registry.DeleteOptions) (*storage.List, error)
	CheckScaleBody(body []byte) error
	GetScale(ctx context.Context, ns, name, resourceVersion string) (*registry.Scale, error)
	UpdateScale(ctx context.Context, ns, name string, sc *registry.Scale, opts registry.UpdateOptions) (*registry.Scale, error)
	PatchScale(ctx context.Context, ns, name, patchType string, patch []byte, opts registry.UpdateOptions) (*registry.Scale, error)
	ApplyScale(ctx context.Context, ns, name string, patch []byte, opts registry.ApplyOptions) (*registry.Scale, error)
	CreateSubresource(ctx context.Context, subresource, ns, name string, body []byte, opts registry.CreateOptions) ([]byte, error)
	Connect(ctx context.Context, req registry.ConnectRequest) (http.Handler, error)
}

var _ resourceStore = (*registry.Store)(nil)

func (q *request) fail(err error) {
	writeError(q.w, q.r, q.h.log, err)
}

// notAllowed answers a method the path does not serve as kube-apiserver's
// router does: the generic 405, without an Allow header.
func (q *request) notAllowed() {
	q.fail(api.NewMethodNotAllowed())
}

func (q *request) collection() {
	switch q.r.Method {
	case http.MethodGet:
		q.list()
	case http.MethodPost, http.MethodDelete:
		// The all-namespaces path of a namespaced type serves only list
		// and watch, as in kube-apiserver.
		if !q.info.NamespacedPath && q.t.Namespaced {
			q.notAllowed()
			return
		}
		switch {
		case q.r.Method == http.MethodPost:
			q.create()
		case registry.SupportsDeleteCollection(q.t):
			q.deleteCollection()
		default:
			q.notAllowed()
		}
	default:
		q.notAllowed()
	}
}

func (q *request) object() {
	if q.r.Method == http.MethodDelete {
		q.delete()
		return
	}
	q.byMethod(q.r.Method)
}

func (q *request) subresource() {
	sr, ok := registry.FindSubresource(q.t, q.info.Subresource)
	if !ok || sr.Serve == registry.ServeNotYet {
		q.fail(api.NewGenericNotFound())
		return
	}
	switch {
	case sr.Name == registry.SubresourceScale:
		q.scale()
	case sr.Serve == registry.ServeCreate:
		if q.r.Method != http.MethodPost {
			q.notAllowed()
			return
		}
		q.createSubresource()
	case sr.Serve == registry.ServeConnect:
		q.connect(sr)
	case !slices.Contains(sr.Verbs, verbOf(q.r.Method)):
		// An update-only subresource (a namespace's finalize) serves
		// nothing else.
		q.notAllowed()
	default:
		q.byMethod(q.r.Method)
	}
}

// verbOf names the API verb of an HTTP method on an object.
func verbOf(method string) string {
	switch method {
	case http.MethodGet:
		return "get"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodPost:
		return "create"
	case http.MethodDelete:
		return "delete"
	}
	return ""
}

// byMethod serves the verbs an object and its /status share.
func (q *request) byMethod(method string) {
	switch method {
	case http.MethodGet:
		q.get()
	case http.MethodPut:
		q.update()
	case http.MethodPatch:
		q.patch()
	default:
		q.notAllowed()
	}
}

// isWatch reports whether a list request asks for a watch: ?watch=, by
// kube's rule for its options' booleans (as its request info reads it).
func isWatch(r *http.Request) bool {
	b, _ := boolParam(r.URL.Query(), "watch")
	return b
}
