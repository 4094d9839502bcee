package admission_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miniapi/miniapi/miniapitest"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/cert"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// testTimeout bounds every wait of a test.
const testTimeout = 15 * time.Second

// hookServer is a real webhook server (controller-runtime's) with a
// certificate of its own, serving handlers by path and recording the
// reviews each path gets.
type hookServer struct {
	// host is the server's host:port, ca its CA (a caBundle).
	host string
	ca   []byte

	mu      sync.Mutex
	reviews map[string][]admission.Request
}

// hookServices are the Services tests reach a hookServer by; kube's
// webhook client expects its certificate to name <name>.<namespace>.svc.
var hookServices = []string{"hooks.by-service.svc", "webhook-service.system.svc"}

// startHookServer serves handlers until the test ends.
func startHookServer(t *testing.T, handlers map[string]admission.HandlerFunc) *hookServer {
	t.Helper()
	crt, key, err := cert.GenerateSelfSignedCertKey("127.0.0.1", nil, hookServices)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), crt, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	h := &hookServer{host: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), ca: crt, reviews: map[string][]admission.Request{}}
	srv := webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: port, CertDir: dir})
	for path, f := range handlers {
		srv.Register(path, &webhook.Admission{Handler: admission.HandlerFunc(func(ctx context.Context, req admission.Request) admission.Response {
			h.mu.Lock()
			h.reviews[path] = append(h.reviews[path], req)
			h.mu.Unlock()
			return f(ctx, req)
		})})
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("webhook server: %v", err)
		}
	})
	return h
}

// freePort returns a loopback port nothing listens on.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// url is the URL of the server's path.
func (h *hookServer) url(path string) *string {
	u := "https://" + h.host + path
	return &u
}

// port is the server's port.
func (h *hookServer) port() int32 {
	_, p, _ := net.SplitHostPort(h.host)
	n, _ := strconv.Atoi(p)
	return int32(n)
}

// reviewsOf returns the reviews path got so far.
func (h *hookServer) reviewsOf(path string) []admission.Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]admission.Request(nil), h.reviews[path]...)
}

// inNamespace selects the namespace name only, so each subtest's
// webhooks leave the others' writes alone.
func inNamespace(name string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": name}}
}

// configMapRule matches ConfigMap creates and updates.
var configMapRule = []admissionregistrationv1.RuleWithOperations{{
	Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
	Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
}}

var (
	sideEffectsNone = ptr.To(admissionregistrationv1.SideEffectClassNone)
	fail            = ptr.To(admissionregistrationv1.Fail)
	ignore          = ptr.To(admissionregistrationv1.Ignore)
)

// validating is a validating webhook on ConfigMaps in namespace ns.
func validating(name, ns string, cc admissionregistrationv1.WebhookClientConfig) admissionregistrationv1.ValidatingWebhook {
	return admissionregistrationv1.ValidatingWebhook{
		Name: name, ClientConfig: cc, Rules: configMapRule, NamespaceSelector: inNamespace(ns),
		SideEffects: sideEffectsNone, AdmissionReviewVersions: []string{"v1"}, FailurePolicy: fail,
	}
}

// mutating is a mutating webhook on ConfigMaps in namespace ns.
func mutating(name, ns string, cc admissionregistrationv1.WebhookClientConfig) admissionregistrationv1.MutatingWebhook {
	return admissionregistrationv1.MutatingWebhook{
		Name: name, ClientConfig: cc, Rules: configMapRule, NamespaceSelector: inNamespace(ns),
		SideEffects: sideEffectsNone, AdmissionReviewVersions: []string{"v1"}, FailurePolicy: fail,
	}
}

// env is a server and a client for it.
type env struct {
	cs  kubernetes.Interface
	cfg *rest.Config
}

// startEnv starts a miniapi with the namespaces.
func startEnv(t *testing.T, namespaces ...string) env {
	t.Helper()
	e := miniapitest.Start(t, miniapitest.WithNamespaces(namespaces...))
	return env{cs: kubernetes.NewForConfigOrDie(e.Config), cfg: e.Config}
}

// configName is a configuration name made of the test's.
func configName(t *testing.T) string {
	return strings.NewReplacer("/", "-", "_", "-").Replace(strings.ToLower(t.Name()))
}

// addValidating writes a ValidatingWebhookConfiguration of hooks.
func (e env) addValidating(t *testing.T, ctx context.Context, hooks ...admissionregistrationv1.ValidatingWebhook) {
	t.Helper()
	name := configName(t)
	_ = e.cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, name, metav1.DeleteOptions{})
	c := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}, Webhooks: hooks}
	if _, err := e.cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, c, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// addMutating writes a MutatingWebhookConfiguration of hooks.
func (e env) addMutating(t *testing.T, ctx context.Context, hooks ...admissionregistrationv1.MutatingWebhook) {
	t.Helper()
	name := configName(t)
	_ = e.cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, name, metav1.DeleteOptions{})
	c := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}, Webhooks: hooks}
	if _, err := e.cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, c, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// createUntil creates ConfigMaps named name-0, name-1, ... in ns until
// check accepts the result: a webhook configuration takes effect once
// the admission plugin's informer has it, as on kube-apiserver.
func (e env) createUntil(t *testing.T, ctx context.Context, ns, name string, labels map[string]string, check func(*corev1.ConfigMap, error) error) *corev1.ConfigMap {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, testTimeout)
	defer cancel()
	var last error
	for i := 0; ; i++ {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", name, i), Labels: labels}}
		got, err := e.cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
		if last = check(got, err); last == nil {
			return got
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %v", name, last)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// refusedWith accepts exactly the error want.
func refusedWith(want string) func(*corev1.ConfigMap, error) error {
	return func(_ *corev1.ConfigMap, err error) error {
		if err == nil || err.Error() != want {
			return fmt.Errorf("got %v, want %q", err, want)
		}
		return nil
	}
}

// deny refuses every request with msg.
func deny(msg string) admission.HandlerFunc {
	return func(context.Context, admission.Request) admission.Response { return admission.Denied(msg) }
}

// allow admits every request.
func allow(context.Context, admission.Request) admission.Response { return admission.Allowed("") }

// TestWebhookFirstWriteAfterConfig: a cluster builds kube's webhook
// plugins only once it holds a configuration for them (lazyWebhook);
// the first write after the configuration's is judged by it, with no
// retry, for both plugins.
func TestWebhookFirstWriteAfterConfig(t *testing.T) {
	t.Parallel()
	hooks := startHookServer(t, map[string]admission.HandlerFunc{"/deny": deny("first")})
	e := startEnv(t, "validating", "mutating")
	ctx := t.Context()
	cc := admissionregistrationv1.WebhookClientConfig{URL: hooks.url("/deny"), CABundle: hooks.ca}
	want := `admission webhook "%s" denied the request: first`
	for _, ns := range []string{"validating", "mutating"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before"}}
		if _, err := e.cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatalf("%s, before any webhook: %v", ns, err)
		}
		name := ns + ".example.com"
		if ns == "validating" {
			e.addValidating(t, ctx, validating(name, ns, cc))
		} else {
			e.addMutating(t, ctx, mutating(name, ns, cc))
		}
		start := time.Now()
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after"}}
		_, err := e.cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
		if err := refusedWith(fmt.Sprintf(want, name))(nil, err); err != nil {
			t.Fatalf("%s, the first write after the configuration: %v", ns, err)
		}
		t.Logf("%s: first write refused in %v", ns, time.Since(start))
	}
}

// TestWebhookFirstWriteAfterUpdate: once kube's plugin is built, a
// change to its configuration reaches it through its informer handler,
// a step after the informer's indexer; the first write after each
// update, and after a delete, is still judged by the configuration as
// written. Each round sends the webhook to the other of two paths.
func TestWebhookFirstWriteAfterUpdate(t *testing.T) {
	t.Parallel()
	hooks := startHookServer(t, map[string]admission.HandlerFunc{"/a": deny("a"), "/b": deny("b")})
	e := startEnv(t, "updated")
	ctx := t.Context()
	configs := e.cs.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	hook := validating("updated.example.com", "updated", admissionregistrationv1.WebhookClientConfig{URL: hooks.url("/a"), CABundle: hooks.ca})
	e.addValidating(t, ctx, hook)
	name := configName(t)
	create := func(i int) error {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}}
		_, err := e.cs.CoreV1().ConfigMaps("updated").Create(ctx, cm, metav1.CreateOptions{})
		return err
	}
	const rounds = 40
	for i := range rounds {
		path := []string{"/a", "/b"}[i%2]
		if i > 0 {
			c, err := configs.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			c.Webhooks[0].ClientConfig.URL = hooks.url(path)
			if _, err := configs.Update(ctx, c, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		want := `admission webhook "updated.example.com" denied the request: ` + path[1:]
		if err := refusedWith(want)(nil, create(i)); err != nil {
			t.Fatalf("round %d, the first write after the update: %v", i, err)
		}
	}
	if err := configs.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := create(rounds); err != nil {
		t.Fatalf("the first write after the delete: %v", err)
	}
}
