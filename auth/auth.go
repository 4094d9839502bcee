package auth

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authentication/group"
	"k8s.io/apiserver/pkg/authentication/request/anonymous"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	"k8s.io/apiserver/pkg/authentication/request/union"
	"k8s.io/apiserver/pkg/authentication/request/websocket"
	"k8s.io/apiserver/pkg/authentication/request/x509"
	"k8s.io/apiserver/pkg/authentication/token/tokenfile"
	tokenunion "k8s.io/apiserver/pkg/authentication/token/union"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	authzunion "k8s.io/apiserver/pkg/authorization/union"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	typedv1core "k8s.io/client-go/kubernetes/typed/core/v1"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	rbacregistryvalidation "k8s.io/kubernetes/pkg/registry/rbac/validation"
	"k8s.io/kubernetes/pkg/serviceaccount"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac"
)

// Authorization modes, as kube-apiserver's --authorization-mode names
// them.
const (
	ModeRBAC        = "RBAC"
	ModeAlwaysAllow = "AlwaysAllow"
)

// Modes lists the authorization modes miniapi has.
func Modes() []string { return []string{ModeRBAC, ModeAlwaysAllow} }

// DefaultServiceAccountIssuer is the issuer of service account tokens
// unless told otherwise: the one kind and most clusters use.
const DefaultServiceAccountIssuer = "https://kubernetes.default.svc.cluster.local"

// Config is what authentication and authorization are built from.
type Config struct {
	// ClientCA is a PEM bundle: client certificates it verifies
	// authenticate as their common name, in their organizations' groups.
	ClientCA []byte
	// TokenAuthFile is kube-apiserver's --token-auth-file: a CSV of
	// token,user,uid,"group1,group2".
	TokenAuthFile string
	// ServiceAccountKeys verify service account tokens (public keys, or
	// private keys whose public half is used).
	ServiceAccountKeys []any
	// ServiceAccountIssuers are the issuers accepted in service account
	// tokens; the first is the one tokens are issued with.
	ServiceAccountIssuers []string
	// APIAudiences are the audiences tokens must be for; empty means the
	// first issuer, as kube-apiserver defaults --api-audiences.
	APIAudiences []string
	// Tokens looks up what service account tokens are bound to.
	Tokens serviceaccount.ServiceAccountTokenGetter
	// SecretsWriter records when a legacy token Secret was last used,
	// as kube-apiserver does.
	SecretsWriter typedv1core.SecretsGetter
	// Anonymous lets requests with no credentials through as
	// system:anonymous, for RBAC to decide (kube's --anonymous-auth,
	// on by default: the bootstrap policy lets them read /healthz,
	// /livez, /readyz and /version and nothing else).
	Anonymous bool
	// LoopbackToken authenticates the server's own clients as
	// system:apiserver in system:masters.
	LoopbackToken string
	// AuthorizationModes are kube's --authorization-mode values, in
	// order; empty means RBAC.
	AuthorizationModes []string
	// RBAC supplies the RBAC objects to the RBAC authorizer, from
	// informers the caller runs.
	RBAC RBACListers
}

// RBACListers list the objects the RBAC authorizer reads.
type RBACListers struct {
	Roles               rbaclisters.RoleLister
	RoleBindings        rbaclisters.RoleBindingLister
	ClusterRoles        rbaclisters.ClusterRoleLister
	ClusterRoleBindings rbaclisters.ClusterRoleBindingLister
}

// Auth is kube-apiserver's authentication and authorization, assembled
// from kube's own authenticators and authorizers.
type Auth struct {
	// Authenticator authenticates a request, as kube-apiserver's chain.
	Authenticator authenticator.Request
	// Authorizer decides what a user may do.
	Authorizer authorizer.Authorizer
	// RuleResolver lists what a user may do (SelfSubjectRulesReview).
	RuleResolver authorizer.RuleResolver
	// APIAudiences are the audiences tokens are checked against.
	APIAudiences authenticator.Audiences
	// RBACRules resolves the RBAC rules a user holds, for kube's
	// escalation checks on writes of roles and bindings (which apply
	// whatever the authorization mode); nil without RBAC listers.
	RBACRules rbacregistryvalidation.AuthorizationRuleResolver
}

// New builds authentication and authorization as kube-apiserver's
// pkg/kubeapiserver/authenticator and authorizer do, from the same
// pieces, for the mechanisms miniapi serves: client certificates, a
// token file, service account tokens (bound and legacy), the loopback
// token and anonymous requests; the privileged group, RBAC and
// AlwaysAllow.
func New(cfg Config) (*Auth, error) {
	a := &Auth{}
	a.APIAudiences = cfg.APIAudiences
	if len(a.APIAudiences) == 0 && len(cfg.ServiceAccountIssuers) > 0 {
		a.APIAudiences = authenticator.Audiences{cfg.ServiceAccountIssuers[0]}
	}
	authn, err := a.authenticator(cfg)
	if err != nil {
		return nil, err
	}
	a.Authenticator = authn
	if err := a.authorizer(cfg); err != nil {
		return nil, err
	}
	if l := cfg.RBAC; l.Roles != nil && l.RoleBindings != nil && l.ClusterRoles != nil && l.ClusterRoleBindings != nil {
		a.RBACRules = rbacregistryvalidation.NewDefaultRuleResolver(
			&rbac.RoleGetter{Lister: l.Roles}, &rbac.RoleBindingLister{Lister: l.RoleBindings},
			&rbac.ClusterRoleGetter{Lister: l.ClusterRoles}, &rbac.ClusterRoleBindingLister{Lister: l.ClusterRoleBindings})
	}
	return a, nil
}

// authenticator assembles the request authenticator in kube-apiserver's
// order: x509, then bearer tokens (file, legacy then bound service
// account tokens), the authenticated group added, anonymous last and
// only when nothing else failed; the loopback token before all.
func (a *Auth) authenticator(cfg Config) (authenticator.Request, error) {
	var reqs []authenticator.Request
	var tokens []authenticator.Token
	if len(cfg.ClientCA) > 0 {
		ca, err := dynamiccertificates.NewStaticCAContent("client-ca", cfg.ClientCA)
		if err != nil {
			return nil, fmt.Errorf("auth: client CA: %w", err)
		}
		reqs = append(reqs, x509.NewDynamic(ca.VerifyOptions, x509.CommonNameUserConversion))
	}
	if cfg.TokenAuthFile != "" {
		t, err := tokenfile.NewCSV(cfg.TokenAuthFile)
		if err != nil {
			return nil, fmt.Errorf("auth: --token-auth-file: %w", err)
		}
		tokens = append(tokens, authenticator.WrapAudienceAgnosticToken(a.APIAudiences, t))
	}
	if len(cfg.ServiceAccountKeys) > 0 {
		keys, err := serviceaccount.StaticPublicKeysGetter(cfg.ServiceAccountKeys)
		if err != nil {
			return nil, fmt.Errorf("auth: service account keys: %w", err)
		}
		// Legacy tokens (from kubernetes.io/service-account-token
		// Secrets) are looked up, as kube's --service-account-lookup
		// defaults.
		legacy, err := serviceaccount.NewLegacyValidator(true, cfg.Tokens, cfg.SecretsWriter)
		if err != nil {
			return nil, fmt.Errorf("auth: %w", err)
		}
		tokens = append(tokens, serviceaccount.JWTTokenAuthenticator([]string{serviceaccount.LegacyIssuer}, keys, a.APIAudiences, legacy))
		if len(cfg.ServiceAccountIssuers) > 0 {
			tokens = append(tokens, serviceaccount.JWTTokenAuthenticator(cfg.ServiceAccountIssuers, keys, a.APIAudiences, serviceaccount.NewValidator(cfg.Tokens)))
		}
	}
	if len(tokens) > 0 {
		t := tokenunion.New(tokens...)
		reqs = append(reqs, bearertoken.New(t), websocket.NewProtocolAuthenticator(t))
	}
	var authn authenticator.Request
	if len(reqs) > 0 {
		authn = group.NewAuthenticatedGroupAdder(union.New(reqs...))
		if cfg.Anonymous {
			authn = union.NewFailOnError(authn, anonymous.NewAuthenticator(nil))
		}
	} else if cfg.Anonymous {
		authn = anonymous.NewAuthenticator(nil)
	}
	if cfg.LoopbackToken != "" {
		loopback := authenticatorfactory.NewFromTokens(map[string]*user.DefaultInfo{
			cfg.LoopbackToken: {Name: user.APIServerUser, UID: randomToken(), Groups: []string{user.AllAuthenticated, user.SystemPrivilegedGroup}},
		}, a.APIAudiences)
		if authn == nil {
			authn = loopback
		} else {
			authn = union.New(loopback, authn)
		}
	}
	if authn == nil {
		return nil, errors.New("auth: no authentication mechanism is configured")
	}
	return authn, nil
}

// authorizer assembles the authorizer as kube-apiserver's reloadable
// authorizer does: system:masters first, then each mode in order.
func (a *Auth) authorizer(cfg Config) error {
	modes := cfg.AuthorizationModes
	if len(modes) == 0 {
		modes = []string{ModeRBAC}
	}
	authorizers := []authzunion.NamedAuthorizer{{
		AuthorizerName: "kubernetes.io/system-privileged-group",
		Authorizer:     authorizerfactory.NewPrivilegedGroups(user.SystemPrivilegedGroup),
	}}
	var resolvers []authorizer.RuleResolver
	seen := sets.New[string]()
	for _, m := range modes {
		if seen.Has(m) {
			return fmt.Errorf("auth: authorization mode %q is given twice", m)
		}
		seen.Insert(m)
		switch m {
		case ModeRBAC:
			l := cfg.RBAC
			if l.Roles == nil || l.RoleBindings == nil || l.ClusterRoles == nil || l.ClusterRoleBindings == nil {
				return errors.New("auth: RBAC needs listers of roles and bindings")
			}
			r := rbac.New(
				&rbac.RoleGetter{Lister: l.Roles},
				&rbac.RoleBindingLister{Lister: l.RoleBindings},
				&rbac.ClusterRoleGetter{Lister: l.ClusterRoles},
				&rbac.ClusterRoleBindingLister{Lister: l.ClusterRoleBindings},
			)
			authorizers = append(authorizers, authzunion.NamedAuthorizer{AuthorizerName: "rbac", Authorizer: r})
			resolvers = append(resolvers, r)
		case ModeAlwaysAllow:
			allow := authorizerfactory.NewAlwaysAllowAuthorizer()
			authorizers = append(authorizers, authzunion.NamedAuthorizer{AuthorizerName: "always-allow", Authorizer: allow})
			resolvers = append(resolvers, allow)
		default:
			return fmt.Errorf("auth: unknown authorization mode %q (known: %s)", m, strings.Join(Modes(), ", "))
		}
	}
	authz, err := authzunion.New(authorizers...)
	if err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	a.Authorizer, a.RuleResolver = authz, authzunion.NewRuleResolvers(resolvers...)
	return nil
}

// UsesRBAC reports whether modes (empty meaning the default) include RBAC.
func UsesRBAC(modes []string) bool { return len(modes) == 0 || slices.Contains(modes, ModeRBAC) }

// NewRequestInfoResolver resolves requests as kube-apiserver does
// (k8s.io/apiserver's RequestInfoFactory with its API prefixes).
func NewRequestInfoResolver() request.RequestInfoResolver {
	return &request.RequestInfoFactory{
		APIPrefixes:          sets.NewString("api", "apis"),
		GrouplessAPIPrefixes: sets.NewString("api"),
	}
}

// NewLoopbackToken returns a random token for the server's own clients.
func NewLoopbackToken() string { return randomToken() }

func randomToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail
	}
	return base64.RawURLEncoding.EncodeToString(b)
}
