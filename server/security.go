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

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/auth"
	"github.com/miniapi/miniapi/builtin"
	"github.com/miniapi/miniapi/registry"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/filters"
	"k8s.io/apiserver/pkg/endpoints/request"
	rbacinformers "k8s.io/client-go/informers/rbac/v1"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/keyutil"
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
	rbac     *rbacInformers
}

// newSecurity builds TLS and kube's authentication and authorization for
// a server listening on ln. Nothing runs yet; see startSecurity.
func (s *Server) newSecurity(cfg Config, ln net.Listener) (*security, error) {
	dir := cfg.CertDir
	if dir == "" {
		if cfg.DataDir == "" {
			return nil, errors.New("server: a certificate directory (--cert-dir) or a data directory is required")
		}
		dir = filepath.Join(cfg.DataDir, "pki")
	}
	host, _, _ := net.SplitHostPort(ln.Addr().String())
	hosts := []string{host}
	if name, err := os.Hostname(); err == nil && net.ParseIP(host).IsUnspecified() {
		hosts = append(hosts, name)
	}
	pki, err := auth.EnsurePKI(dir, hosts)
	if err != nil {
		return nil, err
	}
	sec := &security{pki: pki, servingCA: pki.CACert}

	own, err := tls.X509KeyPair(pki.ServingCert, pki.ServingKey)
	if err != nil {
		return nil, fmt.Errorf("server: serving certificate: %w", err)
	}
	if cfg.TLSCertFile != "" || cfg.TLSKeyFile != "" {
		if cfg.TLSCertFile == "" || cfg.TLSKeyFile == "" {
			return nil, errors.New("server: TLS needs both a certificate and a key file")
		}
		if own, err = tls.LoadX509KeyPair(cfg.TLSCertFile, cfg.TLSKeyFile); err != nil {
			return nil, fmt.Errorf("server: load TLS key pair: %w", err)
		}
		if sec.servingCA, err = os.ReadFile(cfg.TLSCertFile); err != nil {
			return nil, fmt.Errorf("server: read the certificate: %w", err)
		}
	}
	sec.tls = &tls.Config{
		Certificates: []tls.Certificate{own},
		MinVersion:   tls.VersionTLS12,
		// Certificates are asked for, not required: the x509
		// authenticator verifies them, and requests without one are
		// authenticated otherwise (tokens) or anonymous.
		ClientAuth: tls.RequestClientCert,
	}

	clientCA := pki.CACert
	if cfg.ClientCAFile != "" {
		extra, err := os.ReadFile(cfg.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("server: --client-ca-file: %w", err)
		}
		clientCA = append(append(append([]byte{}, clientCA...), '\n'), extra...)
	}
	saKeys := []any{pki.ServiceAccountKey.Public()}
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

	token := auth.NewLoopbackToken()
	sec.loopback = s.loopbackConfig(token)
	client, err := newLoopbackClient(sec.loopback)
	if err != nil {
		return nil, err
	}
	sec.client = client
	sec.rbac = newRBACInformers(client)
	sec.auth, err = auth.New(auth.Config{
		ClientCA:              clientCA,
		TokenAuthFile:         cfg.TokenAuthFile,
		ServiceAccountKeys:    saKeys,
		ServiceAccountIssuers: issuers,
		APIAudiences:          cfg.APIAudiences,
		Tokens:                registryTokens{s.reg},
		SecretsWriter:         client.CoreV1(),
		Anonymous:             !cfg.NoAnonymousAuth,
		LoopbackToken:         token,
		AuthorizationModes:    cfg.AuthorizationModes,
		RBAC:                  sec.rbac.listers(),
		Codecs:                builtin.Codecs(),
	})
	if err != nil {
		return nil, err
	}
	return sec, nil
}

// startSecurity fills the RBAC informers, creates or reconciles kube's
// bootstrap roles and bindings, and runs the controller that aggregates
// cluster roles, until bg ends.
func (s *Server) startSecurity(ctx, bg context.Context, sec *security) error {
	aggregation := auth.NewClusterRoleAggregation(sec.rbac.clusterRoles, sec.client.RbacV1())
	for _, inf := range sec.rbac.all() {
		s.background.Go(func() { inf.RunWithContext(bg) })
	}
	s.background.Go(func() { aggregation.Run(bg, 1) })
	bctx, cancel := context.WithTimeout(ctx, bootstrapTimeout)
	defer cancel()
	if err := auth.EnsureBootstrapPolicy(bctx, sec.client.RbacV1(), sec.client.CoreV1()); err != nil {
		return err
	}
	for _, inf := range sec.rbac.all() {
		if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			return fmt.Errorf("server: the RBAC informers did not fill: %w", ctx.Err())
		}
	}
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

// withUnsecuredUser serves plain HTTP as kube-apiserver's old insecure
// port did: every request is system:unsecured, in system:masters, with
// no authentication or authorization.
func withUnsecuredUser(h http.Handler) http.Handler {
	unsecured := &user.DefaultInfo{Name: "system:unsecured", Groups: []string{user.SystemPrivilegedGroup, user.AllAuthenticated}}
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(request.WithUser(r.Context(), unsecured)))
	})
	return filters.WithRequestInfo(inner, auth.NewRequestInfoResolver())
}

// registryTokens looks up what service account tokens are bound to, in
// the registry's caches: kube's token validators ask on every request
// that carries one.
type registryTokens struct{ reg *registry.Registry }

func (r registryTokens) get(ctx context.Context, group, version, resource, ns, name string, out any) error {
	res, ok := r.reg.Snapshot().Lookup(group, version, resource)
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
	if s.sec != nil {
		return rest.CopyConfig(s.sec.loopback)
	}
	return s.loopbackConfig("")
}
