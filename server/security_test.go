package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miniapi/miniapi/auth"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac/bootstrappolicy"
)

// startSecure runs a server with the defaults a user gets: HTTPS,
// authentication, RBAC.
func startSecure(t *testing.T, dir string) *Server {
	t.Helper()
	return startConfig(t, Config{DataDir: dir})
}

// clientsetFor is a protobuf clientset (client-go's default) for cfg.
func clientsetFor(t *testing.T, cfg *rest.Config) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// asToken is the server's address and CA with a bearer token and no
// certificate.
func asToken(admin *rest.Config, token string) *rest.Config {
	cfg := rest.CopyConfig(admin)
	cfg.CertData, cfg.KeyData, cfg.BearerToken = nil, nil, token
	return cfg
}

// anonymousGet sends a GET with no credentials (the server's CA trusted).
func anonymousGet(t *testing.T, srv *Server, path string, header ...string) (int, string) {
	t.Helper()
	tlsCfg, err := rest.TLSConfigFor(asToken(srv.AdminConfig(), ""))
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsCfg}}
	defer c.CloseIdleConnections()
	req, _ := http.NewRequest(http.MethodGet, srv.URL()+path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestSecureByDefault(t *testing.T) {
	dir := t.TempDir()
	srv := startSecure(t, dir)
	if !strings.HasPrefix(srv.URL(), "https://") {
		t.Fatalf("URL %s is not https", srv.URL())
	}
	for _, f := range []string{auth.CAFile, auth.CAKeyFile, auth.ServingKeyFile, auth.AdminKeyFile, auth.ServiceAccountKey} {
		fi, err := os.Stat(filepath.Join(srv.CertDir(), f))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", f, fi.Mode().Perm())
		}
	}

	// The embedded etcd has no port anyone could read Secrets from.
	if ep := srv.embedded.Endpoint(); ep != "" {
		t.Errorf("the embedded etcd listens on %s", ep)
	}

	// No credentials: the health and version paths only, as kube's
	// bootstrap policy allows system:unauthenticated. /healthz answers
	// 200 once the post-start hooks are done, a moment after Start.
	var code int
	var body string
	waitFor(t, "the post-start hooks", func() bool {
		code, body = anonymousGet(t, srv, "/healthz")
		return code != http.StatusInternalServerError || !strings.Contains(body, "poststarthook/")
	})
	if code != 200 || body != "ok" {
		t.Errorf("anonymous /healthz = %d %q, want 200 ok", code, body)
	}
	if code, _ := anonymousGet(t, srv, "/version"); code != 200 {
		t.Errorf("anonymous /version = %d, want 200", code)
	}
	code, body = anonymousGet(t, srv, "/api/v1/secrets")
	if want := `secrets is forbidden: User \"system:anonymous\" cannot list resource \"secrets\" in API group \"\" at the cluster scope`; code != 403 || !strings.Contains(body, want) {
		t.Errorf("anonymous list of secrets = %d %s, want 403 with %s", code, body, want)
	}
	if code, body := anonymousGet(t, srv, "/api/v1/namespaces", "Authorization", "Bearer bogus"); code != 401 || !strings.Contains(body, `"reason":"Unauthorized"`) {
		t.Errorf("bogus token = %d %s, want 401 Unauthorized", code, body)
	}
	// Plain HTTP to the HTTPS port gets nothing.
	if resp, err := http.Get("http://" + strings.TrimPrefix(srv.URL(), "https://") + "/api/v1/secrets"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Error("plain HTTP answered 200")
		}
	}

	ctx := context.Background()
	admin := clientsetFor(t, srv.AdminConfig())
	who, err := admin.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if u := who.Status.UserInfo; u.Username != auth.AdminUser || !slices.Contains(u.Groups, auth.AdminGroup) {
		t.Errorf("admin is %+v, want %s in %s", u, auth.AdminUser, auth.AdminGroup)
	}

	// kube's bootstrap roles exist, aggregated.
	roles, err := admin.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range roles.Items {
		got = append(got, r.Name)
	}
	for _, r := range append(bootstrappolicy.ClusterRoles(), bootstrappolicy.ControllerRoles()...) {
		if !slices.Contains(got, r.Name) {
			t.Errorf("bootstrap cluster role %s is missing", r.Name)
		}
	}
	waitFor(t, "the view role to be aggregated", func() bool {
		view, err := admin.RbacV1().ClusterRoles().Get(ctx, "view", metav1.GetOptions{})
		return err == nil && len(view.Rules) > 0
	})

	// A service account's token from the TokenRequest API authenticates
	// as the service account, which RBAC lets do nothing until bound.
	if _, err := admin.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "bob"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hour := int64(3600)
	tr, err := admin.CoreV1().ServiceAccounts("default").CreateToken(ctx, "bob", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &hour}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Status.Token == "" || time.Until(tr.Status.ExpirationTimestamp.Time) < 50*time.Minute {
		t.Fatalf("token request answered %+v", tr.Status)
	}
	bob := clientsetFor(t, asToken(srv.AdminConfig(), tr.Status.Token))
	_, err = bob.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	if want := `pods is forbidden: User "system:serviceaccount:default:bob" cannot list resource "pods" in API group "" in the namespace "default"`; !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("bob lists pods: %v, want Forbidden: %s", err, want)
	}
	review, err := admin.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: tr.Status.Token}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !review.Status.Authenticated || review.Status.User.Username != "system:serviceaccount:default:bob" {
		t.Errorf("token review = %+v", review.Status)
	}
	// A token request body of another kind or namespace is refused
	// before anything is signed, in kube-apiserver's words.
	for body, want := range map[string]string{
		`{"apiVersion":"v1","kind":"Pod","spec":{}}`:                         `Pod in version "v1" cannot be handled as a TokenRequest: converting (v1.Pod) to (authentication.TokenRequest): unknown conversion`,
		`{"kind":"TokenRequest","metadata":{"namespace":"other"},"spec":{}}`: "the namespace of the provided object does not match the namespace sent on the request",
	} {
		err := admin.CoreV1().RESTClient().Post().AbsPath("/api/v1/namespaces/default/serviceaccounts/bob/token").
			SetHeader("Content-Type", "application/json").Body([]byte(body)).Do(ctx).Error()
		if !apierrors.IsBadRequest(err) || err.Error() != want {
			t.Errorf("token request %s: %v, want 400 %s", body, err, want)
		}
	}
	// As kube-apiserver's create handler, the creator is recorded in
	// what the request sent, and the answers that return it carry it.
	for _, c := range []struct {
		what, subresource, field string
		managed                  []metav1.ManagedFieldsEntry
	}{
		{"token request", "token", `"f:expirationSeconds":{}`, tr.ManagedFields},
		{"token review", "", `"f:token":{}`, review.ManagedFields},
	} {
		if len(c.managed) != 1 || c.managed[0].Operation != metav1.ManagedFieldsOperationUpdate || c.managed[0].Manager != "server.test" ||
			c.managed[0].Subresource != c.subresource || !strings.Contains(c.managed[0].FieldsV1.GetRawString(), c.field) {
			t.Errorf("%s's managedFields = %+v", c.what, c.managed)
		}
	}

	// Bound to view: bob reads, and is refused writes with kube's words.
	if _, err := admin.RbacV1().RoleBindings("default").Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "bob-view"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "bob", Namespace: "default"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "bob to read pods", func() bool {
		_, err := bob.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		return err == nil
	})
	_, err = bob.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
	if want := `configmaps is forbidden: User "system:serviceaccount:default:bob" cannot create resource "configmaps" in API group "" in the namespace "default"`; !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("bob creates a configmap: %v, want Forbidden: %s", err, want)
	}
	// A PUT that would create a Lease needs create as well as update,
	// as kube-apiserver checks it.
	if _, err := admin.RbacV1().Roles("default").Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "lease-updater"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "update"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().RoleBindings("default").Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "bob-lease-updater"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "lease-updater"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "bob", Namespace: "default"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "bobs"}}
	want := `leases.coordination.k8s.io "bobs" is forbidden: User "system:serviceaccount:default:bob" cannot create resource "leases" in API group "coordination.k8s.io" in the namespace "default"`
	waitFor(t, "bob's update of a missing lease to be judged as a create", func() bool {
		_, err := bob.CoordinationV1().Leases("default").Update(ctx, lease, metav1.UpdateOptions{})
		return apierrors.IsForbidden(err) && err.Error() == want
	})
	if _, err := admin.CoordinationV1().Leases("default").Get(ctx, "bobs", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the lease bob may not create: %v, want NotFound", err)
	}
	if _, err := admin.CoordinationV1().Leases("default").Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
		t.Errorf("admin's update of a missing lease: %v, want it created", err)
	}
	ssar, err := bob.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "default", Verb: "get", Resource: "configmaps"},
	}}, metav1.CreateOptions{})
	if err != nil || !ssar.Status.Allowed {
		t.Errorf("bob may get configmaps: %+v, %v", ssar, err)
	}
	sar, err := admin.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: "system:serviceaccount:default:bob", Groups: []string{"system:serviceaccounts"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "default", Verb: "delete", Resource: "pods"},
	}}, metav1.CreateOptions{})
	if err != nil || sar.Status.Allowed {
		t.Errorf("bob may delete pods: %+v, %v", sar, err)
	}

	// RBAC's escalation checks: bob may write roles and bindings, but
	// grant only what he holds.
	if _, err := admin.RbacV1().Roles("default").Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "rbac-writer"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"roles", "rolebindings"}, Verbs: []string{"create"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().RoleBindings("default").Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "bob-rbac-writer"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "rbac-writer"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "bob", Namespace: "default"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	readConfigMaps := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}}
	waitFor(t, "bob to write a role with rules he holds", func() bool {
		_, err := bob.RbacV1().Roles("default").Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "held"}, Rules: readConfigMaps}, metav1.CreateOptions{})
		return err == nil
	})
	_, err = bob.RbacV1().Roles("default").Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "escalate"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}}}}, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `roles.rbac.authorization.k8s.io "escalate" is forbidden: user "system:serviceaccount:default:bob"`) ||
		!strings.Contains(err.Error(), "is attempting to grant RBAC permissions not currently held") {
		t.Errorf("bob grants secrets: %v, want kube's escalation Forbidden", err)
	}
	_, err = bob.RbacV1().RoleBindings("default").Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "bob-admin"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "bob", Namespace: "default"}},
	}, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "is attempting to grant RBAC permissions not currently held") {
		t.Errorf("bob binds himself to cluster-admin: %v, want kube's escalation Forbidden", err)
	}

	// Impersonation: the admin may act as bob; bob may not act as anyone.
	as := srv.AdminConfig()
	as.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:default:bob"}
	_, err = clientsetFor(t, as).CoreV1().Secrets("default").List(ctx, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `User "system:serviceaccount:default:bob" cannot list resource "secrets"`) {
		t.Errorf("admin as bob lists secrets: %v, want bob's Forbidden", err)
	}
	bobAs := asToken(srv.AdminConfig(), tr.Status.Token)
	bobAs.Impersonate = rest.ImpersonationConfig{UserName: auth.AdminUser}
	_, err = clientsetFor(t, bobAs).CoreV1().Secrets("default").List(ctx, metav1.ListOptions{})
	if want := `secrets is forbidden: User "system:serviceaccount:default:bob" cannot impersonate-on:user-info:list resource "secrets" in API group "" in the namespace "default"`; !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("bob impersonates the admin: %v, want %s", err, want)
	}

	// Service account issuer discovery, readable by service accounts.
	data, err := bob.CoreV1().RESTClient().Get().AbsPath("/.well-known/openid-configuration").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var oidc struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	if err := json.Unmarshal(data, &oidc); err != nil || oidc.Issuer != auth.DefaultServiceAccountIssuer || oidc.JWKSURI != srv.URL()+"/openid/v1/jwks" {
		t.Errorf("discovery document %s (%v)", data, err)
	}
}

// TestCredentialsSurviveRestart: a restart keeps the CA, the admin
// certificate and the signing key, so kubeconfigs and tokens stay valid.
func TestCredentialsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	srv, err := Start(context.Background(), Config{Listen: "127.0.0.1:0", DataDir: dir, UnsafeNoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	admin := clientsetFor(t, srv.AdminConfig())
	tr, err := admin.CoreV1().ServiceAccounts("default").CreateToken(ctx, "default", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if apierrors.IsNotFound(err) {
		// No controller makes the default service account yet.
		// Or the ServiceAccount controller makes it meanwhile.
		if _, err := admin.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		tr, err = admin.CoreV1().ServiceAccounts("default").CreateToken(ctx, "default", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
	before := srv.AdminConfig()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	srv = startSecure(t, dir)
	after := srv.AdminConfig()
	if !bytes.Equal(before.CAData, after.CAData) || !bytes.Equal(before.CertData, after.CertData) {
		t.Error("the CA or the admin certificate changed across a restart")
	}
	// The old admin credentials and the old token still authenticate.
	before.Host = after.Host
	if _, err := clientsetFor(t, before).CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Errorf("the admin of the first run: %v", err)
	}
	review, err := clientsetFor(t, after).AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: tr.Status.Token}}, metav1.CreateOptions{})
	if err != nil || !review.Status.Authenticated {
		t.Errorf("a token of the first run: %+v, %v", review, err)
	}
}

// TestPlainHTTPOnlyOnLoopback: the unsafe mode is refused where others
// could reach it.
func TestPlainHTTPOnlyOnLoopback(t *testing.T) {
	_, err := Start(context.Background(), Config{Listen: "0.0.0.0:0", DataDir: t.TempDir(), UnsafeNoFsync: true, UnsafePlainHTTP: true})
	if err == nil || !strings.Contains(err.Error(), "only allowed on a loopback address") {
		t.Fatalf("plain HTTP on 0.0.0.0: %v, want refused", err)
	}
}

// TestServedCertificateNamesTheHost: clients verify the served
// certificate against the kubeconfig's CA, with no skipping.
func TestServedCertificateNamesTheHost(t *testing.T) {
	srv := startSecure(t, t.TempDir())
	cfg := srv.AdminConfig()
	tlsCfg, err := rest.TLSConfigFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tlsCfg.NextProtos = []string{"h2", "http/1.1"}
	conn, err := tls.Dial("tcp", strings.TrimPrefix(srv.URL(), "https://"), tlsCfg)
	if err != nil {
		t.Fatalf("verified TLS to %s: %v", srv.URL(), err)
	}
	defer conn.Close()
	if p := conn.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Errorf("ALPN negotiated %q, want h2", p)
	}
}
