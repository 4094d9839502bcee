// Command miniapi serves the Kubernetes API for its registered resource
// types over etcd: embedded by default, or an external cluster.
//
//	miniapi                          # embedded etcd in ./miniapi-data, https://127.0.0.1:6443, kubeconfig in ./miniapi-data
//	miniapi --listen 127.0.0.1:0     # any free port; the URL is printed
//	miniapi --etcd-servers https://etcd-1:2379,https://etcd-2:2379 --etcd-cafile ca.pem
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/miniapi/miniapi/admission"
	"github.com/miniapi/miniapi/auth"
	"github.com/miniapi/miniapi/controllers"
	"github.com/miniapi/miniapi/faults"
	"github.com/miniapi/miniapi/journal"
	"github.com/miniapi/miniapi/server"
	_ "github.com/miniapi/miniapi/server/podgc" // kube's pod garbage collector (server.LinkPodGC)
	"github.com/miniapi/miniapi/version"
	"github.com/spf13/cobra"
)

func main() {
	if err := execute(newCommand()); err != nil {
		os.Exit(1)
	}
}

// execute runs the command. A mistake on the command line (an unknown
// flag, a flag without its value, an argument) is printed to stderr
// after the usage, as Kubernetes' commands print a flag error
// (k8s.io/component-base/cli); errors of the run itself are printed by
// RunE.
func execute(cmd *cobra.Command) error {
	err := cmd.Execute()
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprint(cmd.ErrOrStderr(), cmd.UsageString())
		fmt.Fprintln(cmd.ErrOrStderr(), "Error:", err)
	}
	return err
}

// usageError is a mistake on the command line.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// options are the command's flags.
type options struct {
	cfg      server.Config
	logLevel string
	etcdLogs bool
	// kubeconfigOut is where to write the kubeconfig; "" means
	// server.DefaultKubeconfigPath.
	kubeconfigOut string
	// dataDirSet is true when --data-dir was given, not defaulted.
	dataDirSet bool
	// gcFinalizers is --enable-garbage-collector, used only when given.
	gcFinalizers bool
	// anonymousAuth is --anonymous-auth.
	anonymousAuth bool
	// enablePriorityAndFairness is --enable-priority-and-fairness.
	enablePriorityAndFairness bool
}

func newCommand() *cobra.Command {
	var o options
	cmd := &cobra.Command{
		Use:   "miniapi",
		Short: "A Kubernetes API server for development and tests, over etcd",
		Long: `miniapi serves the Kubernetes API (CRUD, list, watch, server-side apply) for
kube-apiserver 1.37's built-in resources (docs/resource-types.md lists them),
for CustomResourceDefinitions and for types declared in a resources file,
storing objects in etcd: an embedded member in --data-dir by default, or an
external cluster with --etcd-servers. docs/options.md describes the flags.`,
		// kube-apiserver's words for an argument it does not take.
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError{fmt.Errorf("%q does not take any arguments, got %q", cmd.CommandPath(), args)}
			}
			return nil
		},
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version.Miniapi,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.dataDirSet = cmd.Flags().Changed("data-dir")
			if cmd.Flags().Changed("enable-garbage-collector") {
				o.cfg.GarbageCollectionFinalizers = &o.gcFinalizers
			}
			err := run(cmd.Context(), o)
			if err != nil {
				fmt.Fprintln(cmd.ErrOrStderr(), "miniapi:", err)
			}
			return err
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	f := cmd.Flags()
	f.StringVar(&o.cfg.Listen, "listen", server.DefaultListen, "address to serve HTTPS on (host:port; port 0 picks a free one)")
	f.BoolVar(&o.cfg.UnsafePlainHTTP, "unsafe-plain-http", false, "UNSAFE: serve plain HTTP with no authentication or authorization, so any local process (or web page, through the browser) can read and write everything; only on a loopback --listen")
	f.StringVar(&o.cfg.CertDir, "cert-dir", "", "directory of the CA, serving and admin certificates and the service account key miniapi makes on first start (default: pki in --data-dir)")
	f.StringVar(&o.cfg.TLSCertFile, "tls-cert-file", "", "serve this certificate instead of the one miniapi makes; needs --tls-private-key-file")
	f.StringVar(&o.cfg.TLSKeyFile, "tls-private-key-file", "", "private key for --tls-cert-file")
	f.StringVar(&o.cfg.ClientCAFile, "client-ca-file", "", "PEM bundle of more CAs whose client certificates authenticate (user: common name; groups: organizations); miniapi's own CA always does")
	f.StringVar(&o.cfg.TokenAuthFile, "token-auth-file", "", "static bearer tokens, as kube-apiserver's flag: CSV lines of token,user,uid[,\"group1,group2\"]")
	f.StringSliceVar(&o.cfg.ServiceAccountIssuers, "service-account-issuer", []string{auth.DefaultServiceAccountIssuer}, "issuer of service account tokens; repeat to accept older issuers too (the first issues)")
	f.StringSliceVar(&o.cfg.ServiceAccountKeyFiles, "service-account-key-file", nil, "more PEM public keys that verify service account tokens (miniapi's own signing key always does)")
	f.StringVar(&o.cfg.ServiceAccountJWKSURI, "service-account-jwks-uri", "", "jwks_uri of the service account issuer's discovery document, as kube-apiserver's flag (default: this server's /openid/v1/jwks)")
	f.StringSliceVar(&o.cfg.APIAudiences, "api-audiences", nil, "audiences tokens must name (default: the first --service-account-issuer)")
	f.BoolVar(&o.anonymousAuth, "anonymous-auth", true, "let requests without credentials through as system:anonymous, for authorization to decide (RBAC lets them read /healthz, /livez, /readyz and /version only)")
	f.StringSliceVar(&o.cfg.AuthorizationModes, "authorization-mode", []string{auth.ModeRBAC}, "authorization modes in order, as kube-apiserver's flag: "+strings.Join(auth.Modes(), ", "))
	f.StringVar(&o.cfg.DataDir, "data-dir", "miniapi-data", "directory of the embedded etcd member's data (ignored with --etcd-servers)")
	f.BoolVar(&o.gcFinalizers, "enable-garbage-collector", false, "add the garbage collector's orphan and foregroundDeletion finalizers on delete, as kube-apiserver's flag; unset: only when garbage-collector-controller runs; true without it keeps such objects until something removes the finalizers, as an envtest kube-apiserver (no controller-manager) does")
	f.BoolVar(&o.cfg.UnsafeNoFsync, "unsafe-no-fsync", false, "skip fsync in the embedded etcd: faster, but a machine crash can lose recent writes")
	f.StringSliceVar(&o.cfg.EnableAdmissionPlugins, "enable-admission-plugins", nil, "admission plugins to enable besides the default ones ("+strings.Join(admission.DefaultPlugins(), ", ")+"); known: "+strings.Join(admission.PluginNames(), ", ")+". They run in kube-apiserver's order, whatever the order here")
	f.StringSliceVar(&o.cfg.DisableAdmissionPlugins, "disable-admission-plugins", nil, "admission plugins to disable, even if on by default")
	f.StringVar(&o.cfg.AdmissionControlConfigFile, "admission-control-config-file", "", "AdmissionConfiguration file with the configuration of admission plugins, as kube-apiserver's flag")
	f.StringSliceVar(&o.cfg.EtcdServers, "etcd-servers", nil, "comma-separated client URLs of an external etcd cluster; no embedded member is started")
	f.StringVar(&o.cfg.EtcdCertFile, "etcd-certfile", "", "client certificate for TLS to --etcd-servers")
	f.StringVar(&o.cfg.EtcdKeyFile, "etcd-keyfile", "", "client key for TLS to --etcd-servers")
	f.StringVar(&o.cfg.EtcdCAFile, "etcd-cafile", "", "CA bundle that verifies --etcd-servers' certificates")
	f.StringVar(&o.cfg.EtcdPrefix, "etcd-prefix", "/registry", "prefix of every key miniapi writes in etcd")
	f.StringVar(&o.cfg.ServiceClusterIPRange, "service-cluster-ip-range", server.DefaultServiceClusterIPRange, "CIDR Services' ClusterIPs are allocated from (the default ServiceCIDR), as kube-apiserver's flag")
	f.StringVar(&o.cfg.ServiceNodePortRange, "service-node-port-range", server.DefaultServiceNodePortRange, "port range Services' NodePorts are allocated from, as kube-apiserver's flag")
	f.StringVar(&o.cfg.ResourcesFile, "resources", "", "YAML file or directory of them declaring extra types: CustomResourceDefinitions (installed at start, re-applied when the files change) or the resources-file format (see docs/resource-types.md)")
	f.DurationVar(&o.cfg.CompactionInterval, "etcd-compaction-interval", server.DefaultCompactionInterval, "how often to compact etcd's history, keeping one interval of it (0 or less: never)")
	f.Uint64Var(&o.cfg.FaultSeed, "fault-seed", 0, "seed of the fault injector's random draws (rules are added at "+faults.Path+"; see docs/testing.md)")
	f.IntVar(&o.cfg.JournalSize, "journal-size", 0, "entries of the request journal to keep (requests and watch events, served at "+journal.Path+"; 0: none)")
	f.IntVar(&o.cfg.WatchCacheSize, "watch-cache-size", 0, "events of history each type's watch cache keeps for watches from a resourceVersion (0: sized to cover at least 75 seconds)")
	f.StringSliceVar(&o.cfg.Controllers, "controllers", []string{"*"}, "built-in controllers to run, as kube-controller-manager's flag: '*' for all (each is on by default), 'name' to turn one on, '-name' to turn one off; known (or kube-controller-manager's aliases of them): "+strings.Join(controllers.Names(), ", "))
	f.IntVar(&o.cfg.Nodes, "nodes", 1, "simulated nodes to register (node-0, node-1, ...); 0 for none (docs/cluster.md)")
	f.BoolVar(&o.cfg.Scheduler, "scheduler", true, "run miniapi's scheduler, which binds pending pods to nodes")
	f.BoolVar(&o.cfg.Kubelet, "kubelet", true, "run the simulated kubelet: pods bound to simulated nodes become Running and Ready, Jobs' pods complete, deleted pods go after their grace period")
	f.DurationVar(&o.cfg.PodCompleteAfter, "pod-complete-after", 0, "how long a Job's pod runs on a simulated node before it succeeds")
	f.DurationVar(&o.cfg.RequestTimeout, "request-timeout", server.DefaultRequestTimeout, "how long a request that is not long-running (a watch, exec, attach, log, portforward or proxy) may take, its body included, before it is answered 504 Timeout, as kube-apiserver's flag; a shorter ?timeout= bounds a request more")
	f.IntVar(&o.cfg.MaxRequestsInFlight, "max-requests-inflight", server.DefaultMaxRequestsInFlight, "this and --max-mutating-requests-inflight are summed to determine the server's total concurrency limit (which must be positive) if --enable-priority-and-fairness is true; otherwise this limits the non-mutating requests in flight, or 0 disables the limit, as kube-apiserver's flag")
	f.IntVar(&o.cfg.MaxMutatingRequestsInFlight, "max-mutating-requests-inflight", server.DefaultMaxMutatingRequestsInFlight, "this and --max-requests-inflight are summed to determine the server's total concurrency limit (which must be positive) if --enable-priority-and-fairness is true; otherwise this limits the mutating requests in flight, or 0 disables the limit, as kube-apiserver's flag")
	f.BoolVar(&o.enablePriorityAndFairness, "enable-priority-and-fairness", true, "queue and dispatch requests with kube's API priority and fairness (FlowSchemas and PriorityLevelConfigurations) instead of the plain max-in-flight limit, as kube-apiserver's flag")
	f.StringVar(&o.cfg.Audit.PolicyFile, "audit-policy-file", "", "path to kube's audit policy file (audit.k8s.io Policy); nothing is audited without one")
	f.StringVar(&o.cfg.Audit.LogPath, "audit-log-path", "", "write audit events to this file, one JSON line each, as kube-apiserver's log backend; '-' means standard out")
	f.IntVar(&o.cfg.Audit.MaxAge, "audit-log-maxage", 366, "days to keep rotated audit log files (0: no limit by age)")
	f.IntVar(&o.cfg.Audit.MaxBackups, "audit-log-maxbackup", 100, "rotated audit log files to keep (0: no limit by number)")
	f.IntVar(&o.cfg.Audit.MaxSize, "audit-log-maxsize", 100, "megabytes the audit log file reaches before it is rotated (0: never rotate)")
	f.BoolVar(&o.cfg.Audit.Compress, "audit-log-compress", false, "gzip rotated audit log files")
	f.StringVar(&o.kubeconfigOut, "kubeconfig-out", "", "write a kubeconfig for this server to this file (default: kubeconfig in --data-dir; with --etcd-servers and no --data-dir, miniapi-<port>.kubeconfig in the working directory)")
	f.StringVar(&o.logLevel, "log-level", "info", "log level: debug (one line per request), info, warn or error")
	f.BoolVar(&o.etcdLogs, "etcd-logs", false, "show the embedded etcd's own logs")
	return cmd
}

func run(ctx context.Context, o options) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(strings.ToUpper(o.logLevel))); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	if o.cfg.RequestTimeout < 0 {
		return errors.New("--request-timeout can not be negative value")
	}
	// kube-apiserver's words for negative limits.
	if o.cfg.MaxRequestsInFlight < 0 {
		return errors.New("--max-requests-inflight can not be negative value")
	}
	if o.cfg.MaxMutatingRequestsInFlight < 0 {
		return errors.New("--max-mutating-requests-inflight can not be negative value")
	}
	// The flags' 0 is kube's: no limit of that kind (server.Config's 0
	// means the default).
	for _, v := range []*int{&o.cfg.MaxRequestsInFlight, &o.cfg.MaxMutatingRequestsInFlight} {
		if *v == 0 {
			*v = -1
		}
	}
	o.cfg.DisablePriorityAndFairness = !o.enablePriorityAndFairness
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	o.cfg.Logger = log
	o.cfg.NoAnonymousAuth = !o.anonymousAuth
	if o.cfg.CompactionInterval == 0 {
		o.cfg.CompactionInterval = -1 // the flag's 0 means never
	}
	if o.etcdLogs {
		o.cfg.EtcdLogger = log
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	srv, err := server.Start(ctx, o.cfg)
	if err != nil {
		return err
	}
	// Announce the server once /readyz would say it is ready.
	if err := srv.WaitReady(ctx); err != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return errors.Join(err, srv.Shutdown(sctx))
	}
	// The kubeconfig exists before the first line announces the server,
	// so whoever reads that line can use it at once.
	kubeconfig, err := writeKubeconfig(srv, o)
	if err != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return errors.Join(err, srv.Shutdown(sctx))
	}
	fmt.Printf("miniapi %s serving on %s\n", version.Miniapi, srv.URL())
	fmt.Printf("kubeconfig written to %s\n", kubeconfig)
	// Start-up leaves garbage behind (kube's schemes and API
	// definitions are built from large temporary structures); give it
	// back now rather than hold it while idle.
	debug.FreeOSMemory()
	<-ctx.Done()
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	log.Info("stopped")
	return nil
}

// writeKubeconfig writes the server's kubeconfig where --kubeconfig-out
// says, or to the default place, and returns its absolute path.
func writeKubeconfig(srv *server.Server, o options) (string, error) {
	path := o.kubeconfigOut
	if path == "" {
		dataDir := o.cfg.DataDir
		if len(o.cfg.EtcdServers) > 0 && !o.dataDirSet {
			dataDir = "" // the default data directory is not used: no embedded etcd
		}
		path = server.DefaultKubeconfigPath(dataDir, srv.URL())
	}
	return srv.WriteKubeconfig(path)
}
