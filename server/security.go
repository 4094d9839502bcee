package server

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/emicklei/go-restful/v3"
	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/auth"
	"github.com/miniapi/miniapi/builtin"
	"github.com/miniapi/miniapi/internal/workqueues"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	rbacinformers "k8s.io/client-go/informers/rbac/v1"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/keyutil"
	"k8s.io/kubernetes/pkg/routes"
	"k8s.io/kubernetes/pkg/serviceaccount"
)

// security is the server's TLS, authentication and authorization, and the
// loopback client its own components use.
type security struct {
	pki  *auth.PKI
	auth *auth.Auth
	tls  *tls.Config
	// servingCA verifies the served certificate, for the kubeconfig.
	servingCA []byte
	// loopback is a privileged client configuration for the server's
	// own components (RBAC informers, the bootstrap policy, the Service
	// controllers), served in process.
	loopback *rest.Config
	client   *loopbackClient
	// rbac feed the RBAC authorizer; nil with plain HTTP.
	rbac *rbacInformers
	// issuer signs service account tokens; nil without a certificate
	// directory for its key. issuerURL is the issuer it names.
	issuer    serviceaccount.TokenGenerator
	issuerURL string
}

// newSecurity builds TLS and kube's authentication and authorization for
// a server listening on ln. Nothing runs yet; see startSecurity. With
// UnsafePlainHTTP there is no TLS and everything is allowed, but the
// review resources and service account tokens still work (with a
// certificate directory for the signing key).
func (s *Server) newSecurity(cfg Config, ln net.Listener) (*security, error) {
	plain := cfg.UnsafePlainHTTP
	dir := cfg.CertDir
	if dir == "" && cfg.DataDir != "" {
		dir = filepath.Join(cfg.DataDir, "pki")
	}
	if dir == "" && !plain {
		return nil, errors.New("server: a certificate directory (--cert-dir) or a data directory is required")
	}
	sec := &security{}
	var saKeys []any
	if dir != "" {
		host, _, _ := net.SplitHostPort(ln.Addr().String())
		hosts := []string{host}
		if name, err := os.Hostname(); err == nil && net.ParseIP(host).IsUnspecified() {
			hosts = append(hosts, name)
		}
		pki, err := auth.EnsurePKI(dir, hosts)
		if err != nil {
			return nil, err
		}
		sec.pki, saKeys = pki, []any{pki.ServiceAccountKey.Public()}
	}
	var clientCA []byte
	if !plain {
		if err := sec.serveTLS(cfg); err != nil {
			return nil, err
		}
		clientCA = sec.pki.CACert
		if cfg.ClientCAFile != "" {
			extra, err := os.ReadFile(cfg.ClientCAFile)
			if err != nil {
				return nil, fmt.Errorf("server: --client-ca-file: %w", err)
			}
			clientCA = append(append(append([]byte{}, clientCA...), '\n'), extra...)
		}
	}
	for _, f := range cfg.ServiceAccountKeyFiles {
		keys, err := keyutil.PublicKeysFromFile(f)
		if err != nil {
			return nil, fmt.Errorf("server: --service-account-key-file: %w", err)
		}
		saKeys = append(saKeys, keys...)
	}
	issuers := cfg.ServiceAccountIssuers
	if len(issuers) == 0 {
		issuers = []string{auth.DefaultServiceAccountIssuer}
	}
	sec.issuerURL = issuers[0]

	token := auth.NewLoopbackToken()
	sec.loopback = s.loopbackConfig(token)
	client, err := newLoopbackClient(sec.loopback, s.inProcess.waitStarted(), s.reg.Snapshot)
	if err != nil {
		return nil, err
	}
	sec.client = client
	modes := cfg.AuthorizationModes
	var listers auth.RBACListers
	if plain {
		modes = []string{auth.ModeAlwaysAllow}
	} else {
		sec.rbac = newRBACInformers(client)
		listers = sec.rbac.listers()
	}
	sec.auth, err = auth.New(auth.Config{
		ClientCA:              clientCA,
		TokenAuthFile:         cfg.TokenAuthFile,
		ServiceAccountKeys:    saKeys,
		ServiceAccountIssuers: issuers,
		APIAudiences:          cfg.APIAudiences,
		Tokens:                registryTokens{s},
		SecretsWriter:         client.CoreV1(),
		Anonymous:             !cfg.NoAnonymousAuth,
		LoopbackToken:         token,
		AuthorizationModes:    modes,
		RBAC:                  listers,
	})
	if err != nil {
		return nil, err
	}
	if sec.pki != nil {
		if sec.issuer, err = serviceaccount.JWTTokenGenerator(issuers[0], sec.pki.ServiceAccountKey); err != nil {
			return nil, fmt.Errorf("server: service account token issuer: %w", err)
		}
	}
	return sec, nil
}

// serveTLS sets the TLS configuration: miniapi's serving certificate, or
// the one given.
func (sec *security) serveTLS(cfg Config) error {
	sec.servingCA = sec.pki.CACert
	cert, err := tls.X509KeyPair(sec.pki.ServingCert, sec.pki.ServingKey)
	if err != nil {
		return fmt.Errorf("server: serving certificate: %w", err)
	}
	if cfg.TLSCertFile != "" || cfg.TLSKeyFile != "" {
		if cfg.TLSCertFile == "" || cfg.TLSKeyFile == "" {
			return errors.New("server: TLS needs both a certificate and a key file")
		}
		if cert, err = tls.LoadX509KeyPair(cfg.TLSCertFile, cfg.TLSKeyFile); err != nil {
			return fmt.Errorf("server: load TLS key pair: %w", err)
		}
		if sec.servingCA, err = os.ReadFile(cfg.TLSCertFile); err != nil {
			return fmt.Errorf("server: read the certificate: %w", err)
		}
	}
	sec.tls = &tls.Config{
		Certificates: []tls.Certificate{cert},
		MinVersion:   tls.VersionTLS12,
		// Certificates are asked for, not required: the x509
		// authenticator verifies them, and requests without one are
		// authenticated otherwise (tokens) or anonymous.
		ClientAuth: tls.RequestClientCert,
	}
	return nil
}

// builtinAuth is what the review resources and serviceaccounts/token act
// with.
func (sec *security) builtinAuth() *builtin.Auth {
	return &builtin.Auth{
		Authenticator: sec.auth.Authenticator,
		APIAudiences:  sec.auth.APIAudiences,
		Authorizer:    sec.auth.Authorizer,
		RuleResolver:  sec.auth.RuleResolver,
		Issuer:        sec.issuer,

		RuleResolverRBAC: sec.auth.RBACRules,
	}
}

// startSecurity fills the RBAC informers, creates or reconciles kube's
// bootstrap roles and bindings, and runs the controller that aggregates
// cluster roles, until bg ends.
func (s *Server) startSecurity(ctx, bg context.Context, sec *security) error {
	if sec.rbac == nil {
		return nil // plain HTTP: everything is allowed
	}
	owned := workqueues.Own(&s.queues)
	aggregation := auth.NewClusterRoleAggregation(sec.rbac.clusterRoles, sec.client.RbacV1())
	owned()
	for _, inf := range sec.rbac.all() {
		s.background.Go(func() { inf.RunWithContext(bg) })
	}
	s.background.Go(func() { aggregation.Run(bg, 1) })
	// A logical cluster started from a template holds the policy its
	// first cluster's bootstrap wrote, and nothing has written since:
	// reconciling 150 objects would find each in place (40 ms).
	if !s.fromTemplate {
		bctx, cancel := context.WithTimeout(ctx, bootstrapTimeout)
		defer cancel()
		if err := auth.EnsureBootstrapPolicy(bctx, s.policyClients(bctx)); err != nil {
			return err
		}
	}
	// cache.WaitFor, not WaitForCacheSync: that polls every 100 ms, a
	// third of a start.
	var synced []cache.DoneChecker
	for _, inf := range sec.rbac.all() {
		synced = append(synced, inf.HasSyncedChecker())
	}
	if !cache.WaitFor(ctx, "", synced...) {
		return fmt.Errorf("server: the RBAC informers did not fill: %w", ctx.Err())
	}
	s.hooks.bootstrapRoles.finish()
	return nil
}

// rbacInformers feed the RBAC authorizer and the aggregation controller.
type rbacInformers struct {
	roles, roleBindings, clusterRoleBindings cache.SharedIndexInformer
	clusterRoles                             clusterRoleInformer
}

func newRBACInformers(c *loopbackClient) *rbacInformers {
	byNamespace := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	return &rbacInformers{
		roles:               rbacinformers.NewRoleInformer(c, metav1.NamespaceAll, 0, byNamespace),
		roleBindings:        rbacinformers.NewRoleBindingInformer(c, metav1.NamespaceAll, 0, byNamespace),
		clusterRoles:        clusterRoleInformer{rbacinformers.NewClusterRoleInformer(c, 0, cache.Indexers{})},
		clusterRoleBindings: rbacinformers.NewClusterRoleBindingInformer(c, 0, cache.Indexers{}),
	}
}

func (r *rbacInformers) all() []cache.SharedIndexInformer {
	return []cache.SharedIndexInformer{r.roles, r.roleBindings, r.clusterRoles.inf, r.clusterRoleBindings}
}

func (r *rbacInformers) listers() auth.RBACListers {
	return auth.RBACListers{
		Roles:               rbaclisters.NewRoleLister(r.roles.GetIndexer()),
		RoleBindings:        rbaclisters.NewRoleBindingLister(r.roleBindings.GetIndexer()),
		ClusterRoles:        r.clusterRoles.Lister(),
		ClusterRoleBindings: rbaclisters.NewClusterRoleBindingLister(r.clusterRoleBindings.GetIndexer()),
	}
}

// clusterRoleInformer is the informer kube's aggregation controller takes.
type clusterRoleInformer struct{ inf cache.SharedIndexInformer }

func (i clusterRoleInformer) Informer() cache.SharedIndexInformer { return i.inf }
func (i clusterRoleInformer) Lister() rbaclisters.ClusterRoleLister {
	return rbaclisters.NewClusterRoleLister(i.inf.GetIndexer())
}

// registryTokens looks up what service account tokens are bound to, in
// the registry's caches: kube's token validators ask on every request
// that carries one.
type registryTokens struct{ s *Server }

func (r registryTokens) get(ctx context.Context, group, version, resource, ns, name string, out any) error {
	res, ok := r.s.reg.Snapshot().Lookup(group, version, resource)
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Group: group, Resource: resource}, name)
	}
	obj, err := res.Store.Get(ctx, ns, name, "")
	if err != nil {
		if api.IsNotFound(err) {
			return apierrors.NewNotFound(schema.GroupResource{Group: group, Resource: resource}, name)
		}
		return err
	}
	return json.Unmarshal(obj.Data, out)
}

func (r registryTokens) GetServiceAccount(ctx context.Context, ns, name string) (*corev1.ServiceAccount, error) {
	out := &corev1.ServiceAccount{}
	return out, r.get(ctx, "", "v1", "serviceaccounts", ns, name, out)
}

func (r registryTokens) GetPod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	out := &corev1.Pod{}
	return out, r.get(ctx, "", "v1", "pods", ns, name, out)
}

func (r registryTokens) GetSecret(ctx context.Context, ns, name string) (*corev1.Secret, error) {
	out := &corev1.Secret{}
	return out, r.get(ctx, "", "v1", "secrets", ns, name, out)
}

func (r registryTokens) GetNode(ctx context.Context, name string) (*corev1.Node, error) {
	out := &corev1.Node{}
	return out, r.get(ctx, "", "v1", "nodes", "", name, out)
}

func (r registryTokens) GetValidatingWebhookConfiguration(ctx context.Context, name string) (*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	out := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	return out, r.get(ctx, "admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations", "", name, out)
}

func (r registryTokens) GetMutatingWebhookConfiguration(ctx context.Context, name string) (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	out := &admissionregistrationv1.MutatingWebhookConfiguration{}
	return out, r.get(ctx, "admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations", "", name, out)
}

// bootstrapTimeout bounds creating the bootstrap policy at start.
const bootstrapTimeout = 30 * time.Second

// loopbackConfig is the client configuration of the server's own
// components: served in process (see inProcess), authenticated by token
// when the server authenticates.
func (s *Server) loopbackConfig(token string) *rest.Config {
	return &rest.Config{
		Host:        s.url,
		BearerToken: token,
		Transport:   s.inProcess,
		ContentConfig: rest.ContentConfig{
			ContentType:        "application/vnd.kubernetes.protobuf",
			AcceptContentTypes: "application/vnd.kubernetes.protobuf,application/json",
		},
		QPS:       -1,
		UserAgent: "kube-apiserver",
	}
}

// ownConfig is the client configuration of the server's own components.
func (s *Server) ownConfig() *rest.Config {
	return rest.CopyConfig(s.sec.loopback)
}

// issuerDiscovery returns what serves the service account issuer's
// discovery documents (/.well-known/openid-configuration,
// /openid/v1/jwks) with kube's own handlers, in front of a handler and
// behind authorization, as kube-apiserver does (RBAC's
// system:service-account-issuer-discovery role reads them). Without an
// issuer, or with one kube refuses for discovery (not https), they are
// not served, as in kube: it returns nil.
func (s *Server) issuerDiscovery(cfg Config) func(h http.Handler) http.Handler {
	if s.sec.pki == nil {
		return nil
	}
	keys := []any{s.sec.pki.ServiceAccountKey.Public()}
	getter, err := serviceaccount.StaticPublicKeysGetter(keys)
	if err != nil {
		s.log.Warn("server: service account issuer discovery is not served", "err", err)
		return nil
	}
	provider, err := serviceaccount.NewOpenIDMetadataProvider(s.sec.issuerURL, cfg.ServiceAccountJWKSURI, s.listener.Addr().String(), getter)
	if err != nil {
		s.log.Warn("server: service account issuer discovery is not served", "err", err)
		return nil
	}
	c := restful.NewContainer()
	routes.NewOpenIDMetadataServer(provider).Install(c)
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case serviceaccount.OpenIDConfigPath, serviceaccount.JWKSPath:
				c.ServeHTTP(w, r)
			default:
				h.ServeHTTP(w, r)
			}
		})
	}
}
