package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
)

// secTokenLine is the token file line of docs/security.md.
const secTokenLine = `8d2f6e0c9b1a4f3e,alice,1001,"dev,qa"`

// TestSecurityExamples checks what docs/security.md shows against the
// built binary: anonymous requests read the health paths and nothing
// else, with the message the page shows; the token file's line
// authenticates alice in her groups; a RoleBinding to view lets her read;
// a service account token from TokenRequest authenticates its account;
// and a token miniapi does not know is 401, not anonymous.
func TestSecurityExamples(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	doc := readDoc(t, "docs/security.md")
	if !strings.Contains(doc, "```csv\n  "+secTokenLine+"\n  ```") {
		t.Fatalf("docs/security.md does not show the token file line the test uses:\n%s", secTokenLine)
	}
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(secTokenLine+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	admin := startServer(t, filepath.Join(dir, "data"), "--token-auth-file", tokens)
	// anon and withToken send as curl does with --cacert alone: the
	// server verified, no client certificate.
	anon := admin.withClient(t, caOnlyClient(t, admin))
	withToken := func(token string) []string { return []string{"Authorization", "Bearer " + token} }
	aliceToken, _, _ := strings.Cut(secTokenLine, ",")

	// Anonymous: the health paths, and nothing else.
	if r := anon.do(t, "GET", "/readyz", nil); r.code != 200 || string(r.body) != "ok" {
		t.Errorf("anonymous GET /readyz = %d %q, want 200 ok", r.code, r.body)
	}
	st := wantStatus(t, anon.do(t, "GET", "/api/v1/namespaces", nil), 403, "Forbidden")
	msg, _ := json.Marshal(st["message"])
	if !strings.Contains(doc, `"message": `+string(msg)+",") {
		t.Errorf("docs/security.md does not show the anonymous answer's message %s", msg)
	}
	wantStatus(t, anon.do(t, "GET", "/api", nil), 403, "Forbidden")

	// A token the server does not know is refused, not anonymous.
	wantStatus(t, anon.do(t, "GET", "/readyz", nil, withToken("not-a-token")...), 401, "Unauthorized")

	// alice, from the token file, in her groups.
	review := anon.must(t, 201, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
		`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`, withToken(aliceToken)...)
	if u := str(review, "status.userInfo.username"); u != "alice" {
		t.Errorf("alice's token authenticates %q", u)
	}
	if g := get(review, "status.userInfo.groups"); !reflect.DeepEqual(g, []any{"dev", "qa", "system:authenticated"}) {
		t.Errorf("alice's groups = %v, want dev, qa, system:authenticated", g)
	}

	// alice may read nothing until the page's RoleBinding; then she may
	// read configmaps in demo.
	admin.must(t, 201, "POST", "/api/v1/namespaces", namespace("demo"))
	st = wantStatus(t, anon.do(t, "GET", "/api/v1/namespaces/demo/configmaps", nil, withToken(aliceToken)...), 403, "Forbidden")
	if m, _ := st["message"].(string); !strings.Contains(doc, m) {
		t.Errorf("docs/security.md does not show alice's refusal %q", m)
	}
	admin.must(t, 201, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/demo/rolebindings", map[string]any{
		"metadata": map[string]any{"name": "alice-view"},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
		"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}},
	})
	if !strings.Contains(doc, "kubectl create rolebinding alice-view --clusterrole=view --user=alice -n demo") {
		t.Error("docs/security.md does not show the RoleBinding the test makes")
	}
	// The authorizer learns of the binding from its informer: bounded wait.
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return anon.do(t, "GET", "/api/v1/namespaces/demo/configmaps", nil, withToken(aliceToken)...).code == 200, nil
	})
	if err != nil {
		t.Fatalf("alice cannot read configmaps in demo after the RoleBinding: %v", err)
	}

	// A service account token from TokenRequest is its account.
	admin.must(t, 201, "POST", "/api/v1/namespaces/demo/serviceaccounts", map[string]any{"metadata": map[string]any{"name": "ci"}})
	tr := admin.must(t, 201, "POST", "/api/v1/namespaces/demo/serviceaccounts/ci/token",
		map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": map[string]any{}})
	saToken := str(tr, "status.token")
	if saToken == "" {
		t.Fatalf("TokenRequest gave no token: %v", tr)
	}
	review = anon.must(t, 201, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
		`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`, withToken(saToken)...)
	if u, want := str(review, "status.userInfo.username"), serviceaccount.MakeUsername("demo", "ci"); u != want {
		t.Errorf("the service account token authenticates %q, want %q", u, want)
	}
}

// caOnlyClient is an HTTP client that verifies srv with the CA miniapi
// made and presents no certificate.
func caOnlyClient(t *testing.T, srv *serverProc) *http.Client {
	t.Helper()
	caPEM, err := os.ReadFile(filepath.Join(srv.DataDir, "pki", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		t.Fatal("ca.crt holds no certificate")
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, ForceAttemptHTTP2: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Timeout: requestTimeout, Transport: tr}
}

// withClient returns a view of p that sends its requests (do, must)
// with c instead of p's client; stopping stays with p.
func (p *serverProc) withClient(t *testing.T, c *http.Client) *serverProc {
	t.Helper()
	return &serverProc{URL: p.URL, DataDir: p.DataDir, client: c, stderr: p.stderr}
}
