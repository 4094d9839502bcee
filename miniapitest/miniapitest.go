package miniapitest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/controllers"
	"github.com/miniapi/miniapi/faults"
	"github.com/miniapi/miniapi/journal"
	"github.com/miniapi/miniapi/registry"
	"github.com/miniapi/miniapi/server"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Bounds on the waits Start and Stop do.
const (
	// startTimeout bounds starting the server and installing what the
	// options ask for.
	startTimeout = 30 * time.Second
	// stopTimeout bounds Shutdown: in-flight requests get this long.
	stopTimeout = 30 * time.Second
)

// Env is a private miniapi running inside the test process.
type Env struct {
	// Config is a client-go configuration for the server: HTTPS on
	// loopback with the server's CA and the admin's client certificate
	// (system:masters, allowed everything), as envtest hands out, QPS and
	// Burst high enough that client-side rate limiting never slows a test.
	Config *rest.Config
	// KubeconfigPath is a kubeconfig file for the server (one cluster,
	// user and context, all named "miniapi"), for kubectl and for code
	// that loads a kubeconfig.
	KubeconfigPath string
	// URL is the server's base URL, e.g. https://127.0.0.1:41234.
	URL string
	// Server is the running server, for tests that need its registry.
	Server *server.Server
	// WebhookInstallOptions are the options WithWebhooks installed the
	// webhooks with, filled in by controller-runtime's Install: the
	// host, port and certificate directory the test's webhook server
	// serves on. Nil without WithWebhooks.
	WebhookInstallOptions *envtest.WebhookInstallOptions
	// Faults injects faults into this server's requests, watches and
	// etcd calls: add a rule, run the code under test, read the counts.
	// See package faults.
	Faults *faults.Injector
	// Journal records this server's requests and the watch events it
	// sends (the last DefaultJournalSize; see WithJournalSize). When the
	// test fails, its last entries are logged as a timeline. See package
	// journal.
	Journal *journal.Journal

	t        testing.TB
	stopOnce sync.Once
	// release ends the environment's use of the process's shared etcd.
	release func()
}

// Option configures Start.
type Option func(*options)

// options collects what the Options ask for.
type options struct {
	crdPaths      []string
	crdObjects    []any
	namespaces    []string
	resourcesFile string
	logger        *slog.Logger
	controllers   []string
	webhooks      *envtest.WebhookInstallOptions
	// enable and disable change the admission plugins from
	// DefaultDisabledAdmissionPlugins.
	enable, disable []string
	admissionSet    bool
	// The simulated cluster: see WithNodes, WithScheduler, WithKubelet.
	nodes              int
	scheduler, kubelet bool
	podCompleteAfter   time.Duration
	faultSeed          uint64
	journalSize        *int
	seed               *server.Snapshot
	ownEtcd            bool
}

// DefaultJournalSize is how many entries an environment's journal keeps
// unless WithJournalSize says otherwise.
const DefaultJournalSize = 10000

// journalOnFailure is how many of the journal's last entries a failed
// test logs.
const journalOnFailure = 100

// DefaultControllers are the controllers an environment runs unless
// WithControllers says otherwise: namespace lifecycle and garbage
// collection, as a cluster has them and envtest's tests expect. Tests
// that write workload status by hand keep working.
var DefaultControllers = []string{controllers.NamespaceControllerName, controllers.GarbageCollectorName}

// DefaultDisabledAdmissionPlugins are the admission plugins of the
// server's default chain an environment turns off unless
// WithAdmissionPlugins says otherwise: ServiceAccount, as envtest turns
// it off, since no controller makes the ServiceAccount it would give
// every pod.
var DefaultDisabledAdmissionPlugins = []string{"ServiceAccount"}

// WithOwnEtcd gives the environment an etcd member of its own, in
// t.TempDir(), instead of a logical cluster on the member the test
// process shares. Isolation is the same either way; a member of its own
// costs tens of milliseconds more to start and stop, and its Compact
// compacts etcd itself rather than the cluster's own view of it.
func WithOwnEtcd() Option {
	return func(o *options) { o.ownEtcd = true }
}

// WithJournalSize keeps the last n entries in the environment's journal;
// 0 or less keeps none (and Env.Journal is nil).
func WithJournalSize(n int) Option {
	return func(o *options) { o.journalSize = &n }
}

// WithFaultSeed seeds the random draws of the environment's fault rules
// that have a Probability (the default seed is 0): a test that meets a
// fault it cannot explain runs again with the same seed.
func WithFaultSeed(seed uint64) Option {
	return func(o *options) { o.faultSeed = seed }
}

// WithControllers runs the controllers list names, in
// kube-controller-manager's --controllers syntax ("*" for all, "-name"
// to turn one off; see controllers.Names), instead of
// DefaultControllers.
func WithControllers(list ...string) Option {
	return func(o *options) { o.controllers = append([]string{}, list...) }
}

// WithNodes registers n simulated nodes, kept Ready with their Leases
// renewed as kubelets keep them (see package cluster); Start returns
// once they are complete. An environment has no nodes unless asked.
func WithNodes(n int) Option {
	return func(o *options) { o.nodes = n }
}

// WithScheduler runs miniapi's scheduler: pending pods are bound to
// nodes that can take them.
func WithScheduler() Option {
	return func(o *options) { o.scheduler = true }
}

// WithKubelet runs the simulated kubelet: pods bound to simulated nodes
// become Running and Ready, Jobs' pods complete after d (0: at once),
// and deleted pods go after their grace period.
func WithKubelet(d time.Duration) Option {
	return func(o *options) { o.kubelet, o.podCompleteAfter = true, d }
}

// WithCluster is WithNodes(n), WithScheduler and WithKubelet(0): pods
// run as on a cluster of n nodes.
func WithCluster(n int) Option {
	return func(o *options) {
		o.nodes, o.scheduler, o.kubelet = n, true, true
	}
}

// WithAdmissionPlugins enables and disables admission plugins, as
// kube-apiserver's --enable-admission-plugins and
// --disable-admission-plugins, from the server's default chain, instead
// of turning off DefaultDisabledAdmissionPlugins.
func WithAdmissionPlugins(enable, disable []string) Option {
	return func(o *options) {
		o.enable, o.disable, o.admissionSet = enable, disable, true
	}
}

// WithCRDs installs the CustomResourceDefinitions in the YAML or JSON
// files at paths before Start returns. Paths are read as envtest reads
// CRDInstallOptions.Paths: a directory contributes its .yaml, .yml and
// .json files (not subdirectories); multi-document YAML is fine; documents
// that are not CRDs, such as a kustomization.yaml or a Namespace, are
// skipped; of several CRDs with one name the last wins. Unlike envtest's
// default, a missing path is an error.
func WithCRDs(paths ...string) Option {
	return func(o *options) { o.crdPaths = append(o.crdPaths, paths...) }
}

// WithCRDObjects installs CustomResourceDefinitions given as values before
// Start returns. Each value is YAML or JSON text (string or []byte, which
// may hold several "---"-separated documents), or anything that encodes
// to a CRD with encoding/json: a map, an
// *apiextensionsv1.CustomResourceDefinition, an *unstructured.Unstructured.
func WithCRDObjects(objs ...any) Option {
	return func(o *options) { o.crdObjects = append(o.crdObjects, objs...) }
}

// WithNamespaces creates these namespaces (in addition to default,
// kube-system, kube-public and kube-node-lease, which always exist).
func WithNamespaces(names ...string) Option {
	return func(o *options) { o.namespaces = append(o.namespaces, names...) }
}

// WithResourcesFile starts the server with --resources path: a file or
// directory of CRDs or resources-file documents (see server.ReadResources).
func WithResourcesFile(path string) Option {
	return func(o *options) { o.resourcesFile = path }
}

// WithLogger sends the server's logs to l; by default they are discarded.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.logger = l }
}

// Start starts a private miniapi for t: a logical cluster on the etcd
// member the test process shares (started by the first Start that finds
// none, stopped with the last environment; see server.SharedEtcd), or on
// a member of its own in t.TempDir() with WithOwnEtcd, without fsync,
// serving on a free loopback port, with the CRDs installed
// and Established and the namespaces created. It fails t if any of that
// fails. A cleanup registered on t stops the server and waits until its
// goroutines have exited and its port is closed; Stop does the same
// earlier. Start is safe to call from parallel tests.
func Start(t testing.TB, opts ...Option) *Env {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	// Parse everything before starting anything, so a bad file fails fast.
	crds, err := o.crds()
	if err != nil {
		t.Fatalf("miniapitest: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()

	dir := t.TempDir()
	cfg := server.Config{
		Listen:        "127.0.0.1:0",
		ResourcesFile: o.resourcesFile,
		Logger:        o.logger,

		Controllers:             o.controllerList(),
		EnableAdmissionPlugins:  o.enable,
		DisableAdmissionPlugins: o.disablePlugins(),

		Nodes:            o.nodes,
		Scheduler:        o.scheduler,
		Kubelet:          o.kubelet,
		PodCompleteAfter: o.podCompleteAfter,
		FaultSeed:        o.faultSeed,
		JournalSize:      o.journal(),
		Seed:             o.seed,
	}
	release := func() {}
	if o.ownEtcd {
		cfg.DataDir, cfg.UnsafeNoFsync = filepath.Join(dir, "etcd"), true
	} else {
		cfg.CertDir = filepath.Join(dir, "pki")
		cfg.Etcd, release, err = acquireEtcd(ctx)
		if err != nil {
			t.Fatalf("miniapitest: start etcd: %v", err)
		}
	}
	srv, err := server.Start(ctx, cfg)
	if err != nil {
		release()
		t.Fatalf("miniapitest: start miniapi: %v", err)
	}
	e := &Env{Server: srv, URL: srv.URL(), Faults: srv.Faults(), Journal: srv.Journal(), t: t, release: release}
	t.Cleanup(e.Stop)
	t.Cleanup(e.logJournalOnFailure)

	if e.KubeconfigPath, err = srv.WriteKubeconfig(filepath.Join(dir, "kubeconfig")); err != nil {
		t.Fatalf("miniapitest: %v", err)
	}
	e.Config = srv.AdminConfig()
	e.Config.QPS, e.Config.Burst = 1000, 2000
	// Nodes are complete (Ready, untainted, with a podCIDR) before the
	// test's first pod, so that it is scheduled at once.
	if c := srv.Cluster(); c != nil && c.Nodes() != nil && o.nodes > 0 {
		if err := c.Nodes().WaitIdle(ctx); err != nil {
			t.Fatalf("miniapitest: nodes: %v", err)
		}
	}
	if err := e.createNamespaces(ctx, o.namespaces); err != nil {
		t.Fatalf("miniapitest: %v", err)
	}
	if err := srv.ApplyCRDs(ctx, crds); err != nil {
		t.Fatalf("miniapitest: install CRDs: %v", err)
	}
	if o.webhooks != nil {
		if err := e.installWebhooks(o.webhooks); err != nil {
			t.Fatalf("miniapitest: %v", err)
		}
	}
	return e
}

// Stop shuts the server down, waiting for its goroutines, its port and
// its etcd to close. It is idempotent; the cleanup Start registers calls
// it too. A failed shutdown fails the test.
func (e *Env) Stop() {
	e.stopOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		if err := e.Server.Shutdown(ctx); err != nil {
			e.t.Errorf("miniapitest: stop miniapi: %v", err)
		}
		e.release()
	})
}

// WaitForControllers waits until the controllers have caught up with
// the server: every write answered so far has reached them and none has
// work ready to do (kube-controller-manager's controllers WithControllers
// turns on, and the namespace and garbage-collector controllers).
// Work delayed on purpose (a retry's back-off, a resync, a CronJob's
// next time) is not waited for, nor are the simulated kubelet and
// scheduler (WaitForKubelet, WaitForScheduler). Only this environment's
// own work queues count: a busy environment in another test of the
// process does not make it wait. It fails the test if ctx ends first.
func (e *Env) WaitForControllers(ctx context.Context) {
	e.t.Helper()
	if err := e.Server.WaitForControllers(ctx); err != nil {
		e.t.Fatalf("miniapitest: WaitForControllers: %v", err)
	}
}

// Settle waits until everything the server has answered has gone where
// it goes: every open watch has been sent every event up to the last
// write (written to the connection, for watches over HTTP), and the
// controllers have caught up as WaitForControllers tells. What a
// client does with what it was sent (an informer's handlers still
// running) the server cannot know. It fails the test if ctx ends first.
func (e *Env) Settle(ctx context.Context) {
	e.t.Helper()
	if err := e.Server.Settle(ctx); err != nil {
		e.t.Fatalf("miniapitest: Settle: %v", err)
	}
}

// WaitFor waits until every open watch has been sent every event up to
// resourceVersion rv that it asked for; rv is a resourceVersion this
// server answered (a write's). It does not wait for the controllers. It
// fails the test if rv is not a resourceVersion or ctx ends first.
func (e *Env) WaitFor(ctx context.Context, rv string) {
	e.t.Helper()
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		e.t.Fatalf("miniapitest: WaitFor: resourceVersion %q: %v", rv, err)
	}
	if err := e.Server.WaitFor(ctx, n); err != nil {
		e.t.Fatalf("miniapitest: WaitFor: %v", err)
	}
}

// WaitForNodes waits until the simulated nodes have caught up with the
// server: the nodes WithNodes asks for exist, and every simulated node
// is Ready with its Lease. It fails the test if they are not running or
// ctx ends first.
func (e *Env) WaitForNodes(ctx context.Context) {
	e.t.Helper()
	c := e.Server.Cluster()
	if c == nil || c.Nodes() == nil {
		e.t.Fatal("miniapitest: WaitForNodes: no simulated nodes (WithNodes, WithCluster)")
	}
	if err := c.Nodes().WaitIdle(ctx); err != nil {
		e.t.Fatalf("miniapitest: WaitForNodes: %v", err)
	}
}

// WaitForScheduler waits until the scheduler has caught up with the
// server: every pod that can be bound now is, and every other pending
// pod says why not in its PodScheduled condition. It fails the test if
// the scheduler does not run or ctx ends first.
func (e *Env) WaitForScheduler(ctx context.Context) {
	e.t.Helper()
	c := e.Server.Cluster()
	if c == nil || c.Scheduler() == nil {
		e.t.Fatal("miniapitest: WaitForScheduler: no scheduler (WithScheduler, WithCluster)")
	}
	if err := c.Scheduler().WaitIdle(ctx); err != nil {
		e.t.Fatalf("miniapitest: WaitForScheduler: %v", err)
	}
}

// WaitForKubelet waits until the simulated kubelet has caught up with
// the server: every pod on a simulated node is in the state it can
// reach now (Running, Ready, ended, deleted). Stages that wait on
// purpose (a readiness delay, a grace period, a Job's run time) are not
// waited for. It fails the test if the kubelet does not run or ctx ends
// first.
func (e *Env) WaitForKubelet(ctx context.Context) {
	e.t.Helper()
	c := e.Server.Cluster()
	if c == nil || c.Kubelet() == nil {
		e.t.Fatal("miniapitest: WaitForKubelet: no kubelet (WithKubelet, WithCluster)")
	}
	if err := c.Kubelet().WaitIdle(ctx); err != nil {
		e.t.Fatalf("miniapitest: WaitForKubelet: %v", err)
	}
}

// createNamespaces creates the namespaces that do not exist yet.
func (e *Env) createNamespaces(ctx context.Context, names []string) error {
	if len(names) == 0 {
		return nil
	}
	res, ok := e.Server.Registry().Snapshot().Lookup("", "v1", "namespaces")
	if !ok {
		return fmt.Errorf("the server has no namespaces")
	}
	for _, name := range names {
		ns := &api.Object{APIVersion: "v1", Kind: "Namespace", Metadata: api.ObjectMeta{Name: name}}
		_, err := res.Store.CreateObject(ctx, "", ns, registry.CreateOptions{})
		if err != nil && api.ReasonForError(err) != api.ReasonAlreadyExists {
			return fmt.Errorf("create namespace %s: %w", name, err)
		}
	}
	return nil
}

// controllerList is the --controllers list the environment runs.
func (o *options) journal() int {
	if o.journalSize == nil {
		return DefaultJournalSize
	}
	return max(*o.journalSize, 0)
}

// logJournalOnFailure logs the journal's last entries if the test failed,
// so its log shows what the server was asked and what it sent.
func (e *Env) logJournalOnFailure() {
	if !e.t.Failed() || e.Journal == nil {
		return
	}
	entries := e.Journal.Entries()
	if len(entries) > journalOnFailure {
		entries = entries[len(entries)-journalOnFailure:]
	}
	e.t.Logf("miniapitest: the server's last %d requests and watch events:\n%s", len(entries), journal.Timeline(entries))
}

func (o *options) controllerList() []string {
	if o.controllers != nil {
		return o.controllers
	}
	return DefaultControllers
}

// disablePlugins is the --disable-admission-plugins list.
func (o *options) disablePlugins() []string {
	if o.admissionSet {
		return o.disable
	}
	return DefaultDisabledAdmissionPlugins
}

// crds reads and decodes every CRD the options name, paths first.
func (o *options) crds() ([]*api.Object, error) {
	out, err := readCRDPaths(o.crdPaths)
	if err != nil {
		return nil, err
	}
	for i, v := range o.crdObjects {
		var data []byte
		switch v := v.(type) {
		case string:
			data = []byte(v)
		case []byte:
			data = v
		default:
			j, err := typedCRDJSON(v)
			if err != nil {
				return nil, fmt.Errorf("CRD object %d: %w", i, err)
			}
			data = j
		}
		r, err := server.ParseResources(data)
		if err != nil {
			return nil, fmt.Errorf("CRD object %d: %w", i, err)
		}
		if len(r.Types) > 0 {
			return nil, fmt.Errorf("CRD object %d: resources-file documents are not CRDs; use WithResourcesFile", i)
		}
		out = append(out, r.CRDs...)
	}
	return out, nil
}

// typedCRDJSON encodes a CRD value as JSON. Go values built from typed
// structs often leave TypeMeta empty; it is filled in, since a value
// passed to WithCRDObjects can only be a CRD.
func typedCRDJSON(v any) ([]byte, error) {
	j, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(j, &m); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if m["apiVersion"] == nil && m["kind"] == nil {
		m["apiVersion"] = "apiextensions.k8s.io/v1"
		m["kind"] = "CustomResourceDefinition"
		return json.Marshal(m)
	}
	return j, nil
}
