package e2e

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
)

// TestKubectlAuth drives authentication and authorization of the built
// binary with kubectl, as a user of its default (HTTPS, RBAC) would:
// whoami, can-i, a service account's token from `create token` used by a
// client of its own, a view binding that lets it read and refuses its
// writes with kube-apiserver's 403, and impersonation with --as.
func TestKubectlAuth(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	srv := kubectlServer(t)

	if out := kubectl(t, srv, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username} {.status.userInfo.groups}"); out != `miniapi-admin ["system:masters","system:authenticated"]` {
		t.Errorf("auth whoami = %q", out)
	}
	if out := kubectl(t, srv, "auth", "can-i", "delete", "nodes"); out != "yes\n" {
		t.Errorf("admin can-i delete nodes = %q, want yes", out)
	}

	kubectl(t, srv, "create", "serviceaccount", "reader")
	token := strings.TrimSpace(kubectl(t, srv, "create", "token", "reader", "--duration", "15m"))
	if strings.Count(token, ".") != 2 {
		t.Fatalf("create token printed %q, not a JWT", token)
	}
	// A kubeconfig with the token and nothing else of the admin's.
	reader := tokenKubeconfig(t, srv, token)
	asReader := []string{"KUBECONFIG=" + reader}

	r := runKubectl(t, srv, "", asReader, "get", "pods")
	if want := `Error from server (Forbidden): pods is forbidden: User "system:serviceaccount:default:reader" cannot list resource "pods" in API group "" in the namespace "default"`; r.err == nil || strings.TrimSpace(r.stderr) != want {
		t.Errorf("reader lists pods before any binding: %v %q, want %q", r.err, r.stderr, want)
	}
	// can-i exits 1 for no.
	if r := runKubectl(t, srv, "", nil, "auth", "can-i", "list", "pods", "--as", "system:serviceaccount:default:reader"); r.err == nil || r.stdout != "no\n" {
		t.Errorf("can-i list pods as reader = %v %q, want no", r.err, r.stdout)
	}

	kubectl(t, srv, "create", "rolebinding", "reader-view", "--clusterrole", "view", "--serviceaccount", "default:reader")
	waitUntil(t, "the binding to take effect", func() bool {
		return runKubectl(t, srv, "", asReader, "get", "pods").err == nil
	})
	r = runKubectl(t, srv, "", asReader, "create", "configmap", "x")
	if want := `error: failed to create configmap: configmaps is forbidden: User "system:serviceaccount:default:reader" cannot create resource "configmaps" in API group "" in the namespace "default"`; r.err == nil || strings.TrimSpace(r.stderr) != want {
		t.Errorf("reader creates a configmap: %v %q, want %q", r.err, r.stderr, want)
	}
	if out := runKubectl(t, srv, "", asReader, "auth", "can-i", "--list", "-n", "default"); !strings.Contains(out.stdout, "configmaps") || !strings.Contains(out.stdout, "[get list watch]") {
		t.Errorf("reader's can-i --list:\n%s%s", out.stdout, out.stderr)
	}
	// The reader may not impersonate (kube 1.37's constrained
	// impersonation words it; kubectl itself only prints "unknown", its
	// discovery being refused too, as against kube-apiserver); the admin
	// may.
	readerCfg, err := clientcmd.BuildConfigFromFlags("", reader)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", srv.URL+"/api/v1/namespaces/default/secrets", nil)
	req.Header.Set("Impersonate-User", "miniapi-admin")
	resp, err := srv.httpClient(t, readerCfg).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	st := wantStatus(t, response{code: resp.StatusCode, header: resp.Header, body: body}, 403, "Forbidden")
	if want := `secrets is forbidden: User "system:serviceaccount:default:reader" cannot impersonate-on:user-info:list resource "secrets" in API group "" in the namespace "default"`; st["message"] != want {
		t.Errorf("reader impersonates the admin: %v, want %s", st["message"], want)
	}
	r = runKubectl(t, srv, "", nil, "get", "secrets", "--as", "system:serviceaccount:default:reader")
	if r.err == nil || !strings.Contains(r.stderr, `User "system:serviceaccount:default:reader" cannot list resource "secrets"`) {
		t.Errorf("admin as reader lists secrets: %v %q, want the reader's Forbidden", r.err, r.stderr)
	}
}

// tokenKubeconfig writes a kubeconfig for srv that authenticates with
// token alone (the server's CA kept), and returns its path.
func tokenKubeconfig(t *testing.T, srv *serverProc, token string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(srv.kubeconfigPath(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range cfg.AuthInfos {
		u.ClientCertificateData, u.ClientKeyData, u.Token = nil, nil, token
	}
	path := filepath.Join(t.TempDir(), "token.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// waitUntil polls cond every 50 ms until it holds, failing the test after
// clientTimeout.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(clientTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
