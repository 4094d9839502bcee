package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/apiextensions"
	"github.com/miniapi/miniapi/auth"
	"github.com/miniapi/miniapi/builtin"
	"github.com/miniapi/miniapi/cluster"
	"github.com/miniapi/miniapi/controllers"
	"github.com/miniapi/miniapi/endpoints"
	"github.com/miniapi/miniapi/endpoints/handlers"
	"github.com/miniapi/miniapi/faults"
	"github.com/miniapi/miniapi/internal/workqueues"
	"github.com/miniapi/miniapi/journal"
	"github.com/miniapi/miniapi/registry"
	"github.com/miniapi/miniapi/storage"
	"github.com/miniapi/miniapi/storage/cacher"
	"github.com/miniapi/miniapi/storage/etcd3"
	"github.com/miniapi/miniapi/storage/versioned"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericfilters "k8s.io/apiserver/pkg/server/filters"
)

// Config is everything a miniapi server needs; the miniapi command fills
// it from flags.
type Config struct {
	// Listen is the address to serve HTTP on; "127.0.0.1:0" picks a free
	// port. Empty means DefaultListen.
	Listen string
	// DataDir holds the embedded etcd member's data. Ignored with
	// EtcdServers.
	DataDir string
	// UnsafeNoFsync skips fsync in the embedded etcd (tests, throwaway
	// servers).
	UnsafeNoFsync bool
	// EtcdServers, when set, are the client URLs of an external etcd
	// cluster to use instead of an embedded member.
	EtcdServers []string
	// Etcd, when set, makes the server a logical cluster on a member
	// the process shares (see SharedEtcd), under a key namespace of its
	// own; DataDir and EtcdServers are ignored, and the server runs no
	// compactor (Compact is its own). Shutdown deletes the cluster's
	// keys and leaves the member running.
	Etcd *SharedEtcd
	// EtcdCertFile, EtcdKeyFile and EtcdCAFile configure client TLS to
	// the external cluster.
	EtcdCertFile, EtcdKeyFile, EtcdCAFile string
	// EtcdPrefix is the key prefix of every object; empty means
	// storage.DefaultRoot.
	EtcdPrefix string
	// ResourcesFile is a YAML file, or a directory of them, declaring
	// extra types to serve: CustomResourceDefinitions, installed at start
	// and again whenever the files change, and types in the older
	// resources-file format (registry.ResourceFile), read at start. See
	// ReadResources and resourceWatcher.
	ResourcesFile string
	// CompactionInterval is how often etcd's history is compacted; 0 means
	// DefaultCompactionInterval, negative disables compaction.
	CompactionInterval time.Duration
	// WatchCacheSize is the number of recent events each type's cache
	// keeps for watches from a resourceVersion; 0 sizes it dynamically to
	// cover at least 75 seconds of events, as kube-apiserver does.
	WatchCacheSize int
	// UnsafePlainHTTP serves plain HTTP (HTTP/1.1, or HTTP/2 with prior
	// knowledge: h2c) with no authentication or authorization: every
	// request acts as system:unsecured in system:masters, as
	// kube-apiserver's old insecure port did. Refused unless Listen is a
	// loopback address. Otherwise the server speaks HTTPS (HTTP/2 by
	// ALPN) and authenticates and authorizes every request.
	UnsafePlainHTTP bool
	// CertDir holds the certificates and keys miniapi makes (see
	// auth.EnsurePKI); empty means "pki" in DataDir.
	CertDir string
	// TLSCertFile and TLSKeyFile, when both set, are the certificate
	// served instead of the one miniapi makes.
	TLSCertFile, TLSKeyFile string
	// ClientCAFile is a PEM bundle of more CAs whose client certificates
	// authenticate (kube's --client-ca-file); miniapi's own CA always
	// does.
	ClientCAFile string
	// TokenAuthFile is kube-apiserver's --token-auth-file.
	TokenAuthFile string
	// ServiceAccountIssuers are the service account token issuers (the
	// first issues); empty means auth.DefaultServiceAccountIssuer.
	ServiceAccountIssuers []string
	// ServiceAccountKeyFiles hold more public keys that verify service
	// account tokens (kube's --service-account-key-file).
	ServiceAccountKeyFiles []string
	// ServiceAccountJWKSURI is the jwks_uri the issuer's discovery
	// document names (kube's --service-account-jwks-uri); empty means
	// this server's /openid/v1/jwks.
	ServiceAccountJWKSURI string
	// APIAudiences are the audiences tokens must name; empty means the
	// first issuer.
	APIAudiences []string
	// NoAnonymousAuth refuses requests without credentials with 401
	// (kube's --anonymous-auth=false); by default they are
	// system:anonymous, for RBAC to decide.
	NoAnonymousAuth bool
	// AuthorizationModes is kube's --authorization-mode: RBAC (the
	// default) and AlwaysAllow, in order.
	AuthorizationModes []string
	// Controllers selects the built-in controllers to run, in
	// kube-controller-manager's --controllers form ("*", "name", "-name";
	// see controllers.Select). Empty runs them all: the pod garbage
	// collector only in a program that links it (LinkPodGC).
	Controllers []string
	// GarbageCollectionFinalizers is kube-apiserver's
	// --enable-garbage-collector: whether deletes add the orphan and
	// foregroundDeletion finalizers a garbage collector removes. nil
	// adds them only when the garbage collector runs; true adds them
	// without it, as an envtest kube-apiserver (no controller-manager)
	// does, so such objects stay until something removes them.
	GarbageCollectionFinalizers *bool
	// Nodes is how many simulated nodes to register (see package
	// cluster); 0 registers none.
	Nodes int
	// Scheduler runs miniapi's scheduler, which binds pending pods to
	// nodes.
	Scheduler bool
	// Kubelet runs the simulated kubelet of the simulated nodes: their
	// pods run, on paper. With Nodes, it also keeps the nodes Ready.
	Kubelet bool
	// PodCompleteAfter is how long a Job's pods run on a simulated node
	// before they succeed; 0 means at once.
	PodCompleteAfter time.Duration
	// ServiceClusterIPRange and ServiceNodePortRange are where Services'
	// ClusterIPs and NodePorts come from, as kube-apiserver's flags of
	// the same names; empty means kube-apiserver's defaults.
	ServiceClusterIPRange, ServiceNodePortRange string
	// RequestTimeout bounds every request but the long-running ones
	// (watches, exec, attach, log, portforward, proxy), as
	// kube-apiserver's --request-timeout; 0 means its default,
	// endpoints.DefaultRequestTimeout (60 s).
	RequestTimeout time.Duration
	// MaxRequestsInFlight and MaxMutatingRequestsInFlight are
	// kube-apiserver's --max-requests-inflight and
	// --max-mutating-requests-inflight: with API priority and fairness
	// their sum is the server's concurrency limit, shared among the
	// priority levels; without it they limit read-only and mutating
	// requests apart. 0 means kube's defaults (DefaultMaxRequestsInFlight,
	// DefaultMaxMutatingRequestsInFlight); negative means kube's 0 (no
	// limit of that kind without priority and fairness).
	MaxRequestsInFlight, MaxMutatingRequestsInFlight int
	// DisablePriorityAndFairness is kube's
	// --enable-priority-and-fairness=false: the plain max-in-flight
	// limit instead. Flow control needs the secure server's identities;
	// with UnsafePlainHTTP every request is system:masters, exempt.
	DisablePriorityAndFairness bool
	// EnableAdmissionPlugins and DisableAdmissionPlugins change the
	// admission plugins that run from kube-apiserver's defaults, as its
	// flags of those names; AdmissionControlConfigFile is its
	// --admission-control-config-file (plugin configuration).
	EnableAdmissionPlugins, DisableAdmissionPlugins []string
	AdmissionControlConfigFile                      string
	// Audit is kube's audit logging; off unless both a policy and a log
	// path are given.
	Audit AuditConfig
	// JournalSize is how many entries the request journal keeps (see
	// package journal); 0 keeps none and costs nothing.
	JournalSize int
	// Seed, when set, is loaded into storage before the server starts
	// serving (see Snapshot): the server starts from that state.
	Seed *Snapshot
	// FaultSeed seeds the fault injector's random draws (see package
	// faults): the same requests in the same order meet the same faults.
	FaultSeed uint64
	// Logger receives all logs; nil discards them.
	Logger *slog.Logger
	// EtcdLogger receives the embedded etcd's own logs; nil discards them.
	EtcdLogger *slog.Logger
}

// DefaultListen is where miniapi serves unless told otherwise: loopback,
// on kube-apiserver's secure port.
const DefaultListen = "127.0.0.1:6443"

// Server is a running miniapi.
type Server struct {
	log      *slog.Logger
	cfg      Config
	embedded *etcd3.Embedded
	client   *clientv3.Client
	ownsConn bool
	// shared and namespace are the member and key namespace of a
	// logical cluster (Config.Etcd); nil and "" otherwise.
	shared    *SharedEtcd
	namespace string
	// fromTemplate says the storage was loaded with the bootstrap state
	// of an earlier logical cluster (SharedEtcd.template).
	fromTemplate bool
	reg          *registry.Registry
	http         *http.Server
	listener     net.Listener
	url          string
	// sec is TLS, authentication and authorization (with
	// UnsafePlainHTTP: no TLS, AlwaysAllow, nothing in front of the
	// handler).
	sec *security
	// inProcess serves the server's own clients (loopbackConfig).
	inProcess *inProcess
	// flowControl is API priority and fairness, nil when disabled.
	flowControl *flowControl
	// objects are the cached types' object counts, for flow control's
	// work estimates.
	objects objectCounts
	// audit is nil when nothing is audited.
	audit *auditing
	// informers are the shared informers of the admission plugins and
	// the webhook resolver, started once the handler is built.
	informers       *informerFactory
	webhookResolver *webhookResolver
	// cluster is the simulated nodes, scheduler and kubelet; nil when
	// none runs.
	cluster *cluster.Cluster
	// kubeControllers are kube-controller-manager's controllers; nil
	// until startControllers.
	kubeControllers *kubeControllers
	// controllers are our own built-in controllers (the garbage
	// collector), for WaitForControllers; they run once the server is
	// ready (startControllers).
	controllers []controllers.Controller
	// queues counts the work queues the server's components create, for
	// WaitForControllers: they are built in workqueues.Own calls.
	queues workqueues.Owner
	// faults injects the faults tests ask for; with no rules it costs
	// one atomic load per request.
	faults *faults.Injector
	// journal records requests and watch events; nil without
	// JournalSize.
	journal *journal.Journal
	// id names this server to admission plugins that record it.
	id string
	// converters convert the objects of CRDs whose conversion strategy
	// is Webhook, in their versions' storage; they find a webhook's
	// Service with conversionServices.
	converters         *apiextensions.Converters
	conversionServices conversionResolver

	// cachers of the types added at start; Start waits for them to fill.
	// Types added later (CRDs) are not recorded: startedTypes is set once
	// Start has waited, before any background goroutine runs.
	cachers      []*cacher.Cacher
	startedTypes bool

	// cancelBackground ends the background goroutines (the compactor, the
	// CRD controller, the built-in controllers, the resources file
	// watcher); background tracks them. See stopBackground.
	cancelBackground context.CancelFunc
	background       sync.WaitGroup

	stopWatches chan struct{}
	// hooks are the post-start hooks /readyz waits for.
	hooks postStartHooks
	// drained closes once no request is in flight, remote or in
	// process: kube's InFlightRequestsDrained, when admission plugins
	// stop their workers (the quota evaluator's; a write still in flight
	// would wait out its 10 s timeout for them).
	drained     chan struct{}
	drainedOnce sync.Once
	serveDone   chan struct{}
	serveErr    error
	shutdown    sync.Once
}

// Start brings up storage, the registry and the HTTP server, and returns
// once the server accepts requests. The caller must call Shutdown.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	routeKlog(log)
	s := &Server{log: log, cfg: cfg, stopWatches: make(chan struct{}), drained: make(chan struct{}), serveDone: make(chan struct{})}
	// The built-in kinds' merge schema, needed by the first write, takes
	// a few milliseconds to decode (~90 ms to build where the stored one
	// does not apply, see builtin). On a new data directory that write
	// comes at once (the system namespaces): load it while etcd starts.
	// On a restart, leave it to the first write rather than slow the
	// cache fill. Start does not return before the load ends.
	warmed := make(chan struct{})
	if freshDataDir(cfg) {
		go func() {
			defer close(warmed)
			builtin.ParseMergeSchema()
		}()
	} else {
		close(warmed)
	}
	defer func() { <-warmed }()
	ok := false
	defer func() {
		if !ok {
			if s.http != nil {
				s.http.Close()
				<-s.serveDone
			} else if s.listener != nil {
				s.listener.Close()
			}
			s.stopBackground()
			if s.inProcess != nil {
				s.inProcess.close()
			}
			s.drain()
			s.closeStorage()
			s.audit.close()
		}
	}()

	sel, err := controllers.Select(cfg.Controllers)
	if err != nil {
		return nil, err
	}
	if err := checkLinked(cfg.Controllers); err != nil {
		return nil, err
	}
	if cfg.Etcd != nil {
		done, err := cfg.Etcd.admitStart(ctx)
		if err != nil {
			return nil, err
		}
		defer done()
	}
	if err := s.startStorage(ctx, cfg); err != nil {
		return nil, err
	}
	s.faults = faults.New(cfg.FaultSeed, log)
	if cfg.JournalSize > 0 {
		s.journal = journal.New(cfg.JournalSize)
	}
	s.client.KV = s.faults.KV(s.client.KV)
	if s.embedded != nil || s.shared != nil {
		// One member, in this process, is the whole cluster.
		s.client.KV = etcd3.SingleMemberReads(s.client.KV)
	}
	seed, template := cfg.Seed, ""
	if cfg.Etcd != nil && seed == nil && cfg.ResourcesFile == "" {
		template = bootstrapKey(cfg)
		seed = cfg.Etcd.template(template)
		s.fromTemplate = seed != nil
	}
	if seed != nil {
		if err := s.load(ctx, seed); err != nil {
			return nil, err
		}
	}
	svcs, err := s.newServices(cfg)
	if err != nil {
		return nil, err
	}
	if s.converters, err = apiextensions.NewConverters(&s.conversionServices); err != nil {
		return nil, err
	}
	s.reg = registry.New(registry.Config{
		Storage: s.storageFactory, KeyRoot: cfg.EtcdPrefix, Logger: log,
		DisableGarbageCollection: !gcFinalizers(cfg.GarbageCollectionFinalizers, sel),
	})
	listen := cfg.Listen
	if listen == "" {
		listen = DefaultListen
	}
	if cfg.UnsafePlainHTTP && !isLoopback(listen) {
		return nil, fmt.Errorf("server: plain HTTP without authentication is refused on %s: it is only allowed on a loopback address", listen)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("server: listen on %s: %w", listen, err)
	}
	s.listener = ln
	scheme := "https"
	if cfg.UnsafePlainHTTP {
		scheme = "http"
	}
	s.url = scheme + "://" + ln.Addr().String()
	s.inProcess = newInProcess()
	if s.sec, err = s.newSecurity(cfg, ln); err != nil {
		return nil, err
	}
	types := builtin.Types(builtin.Config{
		Namespaces: builtin.NamespaceGetter(s.getNamespace),
		EtcdHealth: func(ctx context.Context) error { return etcd3.Ready(ctx, s.client) },
		Services:   svcs,
		Auth:       s.sec.builtinAuth(),

		AdmissionPolicies: s.admissionPolicies(),
	})
	local := localGroupVersions(types)
	resources, err := readResources(cfg.ResourcesFile)
	if err != nil {
		return nil, err
	}
	types = append(types, resources.Types...)
	for _, t := range types {
		if err := s.reg.Add(t); err != nil {
			return nil, err
		}
	}
	if err := s.waitCaches(ctx); err != nil {
		return nil, err
	}
	s.startedTypes = true
	if err := s.ensureSystemNamespaces(ctx); err != nil {
		return nil, err
	}
	if err := s.ensureSystemObjects(ctx); err != nil {
		return nil, err
	}
	// Serve the stored CRDs before the first request: one reconcile pass
	// registers their types and waits for their caches.
	crds := apiextensions.NewController(s.reg, log)
	if _, err := crds.Sync(ctx); err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		log.Warn("server: not every stored CRD could be served yet; retrying in the background", "err", err)
	}
	bg, stop := context.WithCancel(context.Background())
	s.cancelBackground = stop
	s.startCompactor(bg, cfg.CompactionInterval)
	s.background.Go(func() { crds.Run(bg) })
	s.controllers = controllers.New(controllers.Config{Registry: s.reg, Selection: sel, Logger: s.log})
	if err := s.startResources(ctx, bg, cfg.ResourcesFile, resources); err != nil {
		return nil, err
	}

	// Admission comes last: the writes above are the server's own,
	// made before the plugins' informers can run.
	s.id = "apiserver-" + uuid.NewString()
	if err := s.newAdmission(cfg); err != nil {
		return nil, err
	}
	s.conversionServices.set(s.webhookServiceResolver())

	readOnly, mutating := inflightLimits(cfg)
	if !cfg.DisablePriorityAndFairness {
		if readOnly+mutating <= 0 {
			return nil, fmt.Errorf("server: invalid configuration: MaxRequestsInFlight=%d and MaxMutatingRequestsInFlight=%d; they must add up to something positive", readOnly, mutating)
		}
		client, err := s.loopbackClient()
		if err != nil {
			return nil, err
		}
		owned := workqueues.Own(&s.queues)
		s.flowControl = newFlowControl(client, readOnly+mutating, s.objects.stats)
		owned()
	}
	s.newPostStartHooks()
	if s.audit, err = newAuditing(cfg.Audit); err != nil {
		return nil, err
	}
	requestTimeout := cfg.RequestTimeout
	if requestTimeout <= 0 {
		requestTimeout = endpoints.DefaultRequestTimeout
	}
	endpoints.RegisterMetrics() // before the flow control filter
	// Plain HTTP authorizes nothing; TLS authorizes every request, and
	// the handlers ask about unsafe deletes too.
	var authn *auth.Auth
	var authz authorizer.Authorizer
	if s.sec.tls != nil {
		authn, authz = s.sec.auth, s.sec.auth.Authorizer
	}
	issuer := s.issuerDiscovery(cfg)
	api := endpoints.New(endpoints.Config{
		Registry: s.reg,
		Logger:   log,
		Ready:    func(ctx context.Context) error { return etcd3.Ready(ctx, s.client) },
		Checks:   s.healthChecks(),
		Handlers: handlers.Config{ShutdownWatches: s.stopWatches, Authorizer: authz},
		OpenAPI:  s.openAPI(),

		IssuerDiscovery: issuer != nil,
		BearerTokens:    authn != nil,

		RequestTimeout:  requestTimeout,
		InflightCounted: s.flowControl != nil || readOnly+mutating > 0,
	})
	c := chain{auth: authn, faults: s.faults, journal: s.journal, flowControl: s.flowControl, maxReadOnly: readOnly, maxMutating: mutating, requestWaitLimit: requestTimeout / 4, audit: s.audit}
	var served http.Handler = api
	if issuer != nil {
		served = issuer(api)
	}
	handler := c.build(s.withFaultsAdmin(served))
	s.inProcess.serve(handler)
	// The admission plugins' informers list through the in-process
	// client, which serves from here on; the plugins wait for them.
	s.informers.StartWithContext(bg)
	s.http = &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		HTTP2:             http2Config(),
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
		TLSConfig:         s.secTLS(),
	}
	s.http.Protocols = new(http.Protocols)
	s.http.Protocols.SetHTTP1(true)
	s.http.Protocols.SetHTTP2(true)
	s.http.Protocols.SetUnencryptedHTTP2(scheme == "http")
	s.http.RegisterOnShutdown(func() { close(s.stopWatches) })
	go func() {
		defer close(s.serveDone)
		if err := s.serve(ln, scheme == "https"); !errors.Is(err, http.ErrServerClosed) {
			s.serveErr = err
		}
	}()
	// The Service controllers first: they run in the background, and
	// kube's default ServiceCIDR controller, which /readyz waits for,
	// polls its informer every 100 ms.
	if err := s.startServices(bg, svcs, cfg); err != nil {
		return nil, err
	}
	if err := s.startPostStart(ctx, bg); err != nil {
		return nil, err
	}
	if err := s.startAPIServices(bg, local); err != nil {
		return nil, err
	}
	if template != "" && seed == nil && s.awaitBootstrap(ctx) {
		// The bootstrap objects are all written now, and nothing
		// else yet: the next logical cluster like this one starts
		// from them.
		snap, err := s.Snapshot(ctx)
		if err != nil {
			return nil, err
		}
		cfg.Etcd.setTemplate(template, snap)
	}
	if err := s.startCluster(ctx, bg, cfg); err != nil {
		return nil, err
	}
	// The controllers come last, as kube-controller-manager starts
	// after kube-apiserver: the server's own start-up writes (bootstrap
	// policy, the kubernetes Service) are not slowed by their informers'
	// lists and first reconciles.
	s.startControllers(bg, sel)
	ok = true
	if cfg.UnsafePlainHTTP {
		log.Warn("UNSAFE: serving plain HTTP with no authentication or authorization: any local process, and any web page through a browser, can read every Secret and write anything", "url", s.url)
	}
	log.Info("miniapi serving", "url", s.url)
	return s, nil
}

// startPostStart does what kube-apiserver's post-start hooks do once the
// server serves, at once as kube runs them: the RBAC informers and
// bootstrap policy (startSecurity), flow control's informers, bootstrap
// configuration and config controller (startFlowControl), or the
// max-in-flight filter's watermarks without it.
func (s *Server) startPostStart(ctx, bg context.Context) error {
	var secErr, fcErr error
	var wg sync.WaitGroup
	wg.Go(func() { secErr = s.startSecurity(ctx, bg, s.sec) })
	if s.flowControl != nil {
		wg.Go(func() { fcErr = s.startFlowControl(ctx, bg, s.flowControl) })
	} else {
		s.background.Go(func() {
			genericfilters.StartMaxInFlightWatermarkMaintenance(bg.Done())
			<-bg.Done()
		})
	}
	wg.Wait()
	return errors.Join(secErr, fcErr)
}

// serve runs the HTTP server on ln until Shutdown.
func (s *Server) serve(ln net.Listener, useTLS bool) error {
	if useTLS {
		// ServeTLS advertises h2 and http/1.1 by ALPN.
		return s.http.ServeTLS(ln, "", "")
	}
	return s.http.Serve(ln)
}

// startStorage connects to an external cluster or starts the embedded
// member.
func (s *Server) startStorage(ctx context.Context, cfg Config) error {
	if cfg.Etcd != nil {
		s.shared, s.namespace = cfg.Etcd, cfg.Etcd.newNamespace()
		s.client = cfg.Etcd.client(s.namespace)
		s.shared.compactions.add(s)
		return nil
	}
	if len(cfg.EtcdServers) > 0 {
		c, err := etcd3.NewClient(etcd3.ClientConfig{
			Endpoints: cfg.EtcdServers, CertFile: cfg.EtcdCertFile, KeyFile: cfg.EtcdKeyFile, CAFile: cfg.EtcdCAFile,
		})
		if err != nil {
			return err
		}
		s.client, s.ownsConn = c, true
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := etcd3.Ready(rctx, c); err != nil {
			return fmt.Errorf("server: etcd at %v is not answering: %w", cfg.EtcdServers, err)
		}
		return nil
	}
	if cfg.DataDir == "" {
		return errors.New("server: a data directory is required for the embedded etcd")
	}
	// The member opens no port: etcd has no authentication, and would let
	// any local process read every Secret.
	e, err := etcd3.StartEmbedded(ctx, etcd3.EmbeddedConfig{Dir: cfg.DataDir, UnsafeNoFsync: cfg.UnsafeNoFsync, Logger: cfg.EtcdLogger, NoClientListener: true})
	if err != nil {
		return err
	}
	s.embedded, s.client = e, e.Client
	return nil
}

// freshDataDir reports whether the embedded etcd will start on a new data
// directory, one that holds no member yet.
func freshDataDir(cfg Config) bool {
	if cfg.Etcd != nil || len(cfg.EtcdServers) > 0 || cfg.DataDir == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(cfg.DataDir, "member"))
	return errors.Is(err, fs.ErrNotExist)
}

// storageFactory gives each type an etcd3 store over the shared client,
// wrapped in its own cacher so lists and watches are served from memory.
//
// A type whose objects are stored in another version (a CRD's served
// version other than its storage version), or whose schema has defaults,
// or whose CRD converts by webhook, gets a versioned.Store between the
// two: it rewrites apiVersion (or calls the webhook) on the way in and
// out and applies the defaults to what it reads, and sits below the
// cacher, so the cache holds bytes in the served version, defaulted, and
// a watch event is converted once per version whatever the number of
// watchers.
func (s *Server) storageFactory(t *registry.Type, keys storage.ResourceKeys, attrs storage.AttrFunc) (storage.Interface, func() error, error) {
	gr := schema.GroupResource{Group: t.Group, Resource: t.Plural}
	ec := etcd3.Config{Client: s.client, Resource: gr}
	if s.shared != nil {
		// A logical cluster's Stores cut its namespace off watch events
		// themselves: no goroutine per watch to do it.
		ec.Watcher, ec.WatchPrefix = s.shared.embedded.Client.Watcher, s.namespace
	}
	var under storage.Interface = etcd3.New(ec)
	if t.StorageVersion != "" {
		cfg := versioned.Config{Served: t.APIVersion(), Stored: t.StorageAPIVersion(), Default: apiextensions.ReadDefaults(t), Resource: t.GroupResource()}
		if vc, ok := t.Strategy.(registry.VersionConverter); ok {
			cfg.ToStored, cfg.ToServed = vc.ToStorage, vc.FromStorage
		}
		// The storage version's own storage converts too: objects
		// stored under an earlier storage version are converted on read.
		conv, err := s.converters.For(t)
		if err != nil {
			return nil, nil, err
		}
		if conv != nil {
			cfg.ToStored, cfg.ToServed, cfg.ToServedList = conv.ToStored, conv.ToServed, conv.ToServedList
		}
		if cfg.Served != cfg.Stored || cfg.Default != nil || conv != nil {
			under = versioned.New(under, cfg)
		}
	}
	c, err := cacher.New(under, cacher.Config{
		Resource:    gr,
		Prefix:      keys.Prefix(),
		Attrs:       attrs,
		HistorySize: s.cfg.WatchCacheSize,
		Logger:      s.log.With("resource", t.GVR().String()),
	})
	if err != nil {
		return nil, nil, err
	}
	if !s.startedTypes {
		s.cachers = append(s.cachers, c)
	}
	s.objects.add(gr, c)
	return c, func() error {
		s.objects.remove(gr, c)
		return c.Close()
	}, nil
}

// waitCaches waits until every cacher has its first list, so the first
// requests are served from memory.
func (s *Server) waitCaches(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for _, c := range s.cachers {
		if err := c.Ready(ctx); err != nil {
			return fmt.Errorf("server: watch cache did not fill: %w", err)
		}
	}
	return nil
}

// getNamespace reads a namespace for the kinds whose rules look at one.
func (s *Server) getNamespace(ctx context.Context, name string) ([]byte, error) {
	res, ok := s.reg.Snapshot().Lookup("", "v1", "namespaces")
	if !ok {
		return nil, api.NewNotFound(api.GroupResource{Resource: "namespaces"}, name)
	}
	out, err := res.Store.Get(ctx, "", name, "")
	if err != nil {
		return nil, err
	}
	return out.Data, nil
}

// URL is the base URL the server answers on.
func (s *Server) URL() string { return s.url }

// Registry is the server's live registry of types.
func (s *Server) Registry() *registry.Registry { return s.reg }

// Faults is the server's fault injector (see package faults).
func (s *Server) Faults() *faults.Injector { return s.faults }

// Journal is the server's request journal, nil without
// Config.JournalSize.
func (s *Server) Journal() *journal.Journal { return s.journal }

// withFaultsAdmin serves the fault injector's admin endpoint at
// faults.Path, and the journal's at journal.Path, behind the server's
// authentication and authorization.
func (s *Server) withFaultsAdmin(h http.Handler) http.Handler {
	admin := s.faults.Handler()
	var journalAdmin http.Handler
	if s.journal != nil {
		journalAdmin = s.journal.Handler()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == faults.Path || strings.HasPrefix(r.URL.Path, faults.Path+"/"):
			admin.ServeHTTP(w, r)
		case r.URL.Path == journal.Path && journalAdmin != nil:
			journalAdmin.ServeHTTP(w, r)
		default:
			h.ServeHTTP(w, r)
		}
	})
}

// Shutdown stops accepting connections, ends open watches, waits for
// in-flight requests (bounded by ctx), then stops the background
// goroutines and closes the registry and etcd.
func (s *Server) Shutdown(ctx context.Context) error {
	var err error
	s.shutdown.Do(func() {
		err = s.http.Shutdown(ctx)
		<-s.serveDone
		if s.serveErr != nil {
			err = errors.Join(err, s.serveErr)
		}
		s.stopBackground()
		s.inProcess.close()
		s.drain()
		err = errors.Join(err, s.closeStorage(), s.audit.close())
	})
	return err
}

// drain closes drained: call it once no request can be in flight.
func (s *Server) drain() { s.drainedOnce.Do(func() { close(s.drained) }) }

// startCompactor runs the history compactor in the background until
// ctx ends.
func (s *Server) startCompactor(ctx context.Context, interval time.Duration) {
	if s.shared != nil {
		return // the member's compactor tells the server
	}
	if interval == 0 {
		interval = DefaultCompactionInterval
	}
	c := &compactor{client: s.client, interval: interval, compacted: s.compacted, onError: func(err error) {
		s.log.Warn("etcd compaction failed", "err", err)
	}}
	if interval > 0 {
		s.background.Go(func() { c.run(ctx) })
	}
	if s.ownsConn {
		// On an external cluster other replicas compact too, whether or
		// not this one does.
		s.background.Go(func() { c.follow(ctx) })
	}
}

// stopBackground ends the background goroutines and waits for them, so
// that none uses the registry or etcd after closeStorage.
func (s *Server) stopBackground() {
	s.kubeControllers.waitBuilt(controllersBuildWait)
	if s.cancelBackground != nil {
		s.cancelBackground()
	}
	s.background.Wait()
	if s.informers != nil {
		s.informers.Shutdown()
	}
	s.kubeControllers.shutdown()
}

// controllersBuildWait bounds how long stopping waits for kube's
// controllers to be built (milliseconds, usually).
const controllersBuildWait = 10 * time.Second

// closeStorage releases the registry's stores, then etcd. Call
// stopBackground first.
func (s *Server) closeStorage() error {
	var errs []error
	if s.reg != nil {
		errs = append(errs, s.reg.Close())
	}
	if s.shared != nil {
		s.shared.compactions.remove(s)
		ctx, cancel := context.WithTimeout(context.Background(), dropTimeout)
		defer cancel()
		errs = append(errs, s.shared.drop(ctx, s.namespace))
	} else if s.embedded != nil {
		errs = append(errs, s.embedded.Close())
	} else if s.client != nil && s.ownsConn {
		errs = append(errs, s.client.Close())
	}
	return errors.Join(errs...)
}

// openAPI is the builder of the built-in kinds' OpenAPI definitions:
// the shared member's for a logical cluster, which keeps them for the
// next cluster; a lone server's own, which keeps nothing.
func (s *Server) openAPI() *builtin.OpenAPI {
	if s.shared != nil {
		return s.shared.openAPI
	}
	return &builtin.OpenAPI{}
}

// dropTimeout bounds deleting a logical cluster's keys at shutdown.
const dropTimeout = 30 * time.Second

// secTLS is the TLS configuration to serve with, nil for plain HTTP.
func (s *Server) secTLS() *tls.Config { return s.sec.tls }

// isLoopback reports whether a listen address is on loopback only.
func isLoopback(hostPort string) bool {
	host, _, err := net.SplitHostPort(hostPort)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// gcFinalizers reports whether deletes add the garbage collector's
// finalizers: as asked, or when the garbage collector runs.
func gcFinalizers(asked *bool, sel controllers.Selection) bool {
	if asked != nil {
		return *asked
	}
	return sel.Enabled(controllers.GarbageCollectorName)
}
