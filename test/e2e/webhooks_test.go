package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// TestEnvtestExistingClusterWebhooks runs an envtest suite's set-up as
// kubebuilder scaffolds it, with USE_EXISTING_CLUSTER=true and
// KUBECONFIG naming the built binary's kubeconfig: envtest installs the
// config/webhook manifests on miniapi, the suite serves them with
// controller-runtime's webhook server, and miniapi calls it.
func TestEnvtestExistingClusterWebhooks(t *testing.T) {
	skipIfShort(t)
	srv := startServer(t, t.TempDir())
	testEnv := &envtest.Environment{
		WebhookInstallOptions: envtest.WebhookInstallOptions{Paths: []string{"testdata/webhook"}},
	}
	cfg := startEnvtestOn(t, srv, testEnv)

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	o := testEnv.WebhookInstallOptions
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer:          webhook.NewServer(webhook.Options{Host: o.LocalServingHost, Port: o.LocalServingPort, CertDir: o.LocalServingCertDir}),
	})
	if err != nil {
		t.Fatal(err)
	}
	hooks := mgr.GetWebhookServer()
	hooks.Register("/mutate--v1-configmap", &webhook.Admission{Handler: admission.HandlerFunc(
		func(_ context.Context, req admission.Request) admission.Response {
			var cm corev1.ConfigMap
			if err := json.Unmarshal(req.Object.Raw, &cm); err != nil {
				return admission.Errored(http.StatusBadRequest, err)
			}
			cm.Data["mutated"] = "yes"
			out, err := json.Marshal(&cm)
			if err != nil {
				return admission.Errored(http.StatusInternalServerError, err)
			}
			return admission.PatchResponseFromRaw(req.Object.Raw, out)
		})})
	hooks.Register("/validate--v1-configmap", &webhook.Admission{Handler: admission.HandlerFunc(
		func(_ context.Context, req admission.Request) admission.Response {
			if req.Name == "refused" {
				return admission.Denied("not this one")
			}
			return admission.Allowed("")
		})})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	waitTLS(t, net.JoinHostPort(o.LocalServingHost, strconv.Itoa(o.LocalServingPort)), o.LocalServingCAData)

	cs := kubernetes.NewForConfigOrDie(cfg)
	cm := func(name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"e2e-webhook": "true"}},
			Data:       map[string]string{"a": "b"},
		}
	}
	rctx, rcancel := context.WithTimeout(t.Context(), clientTimeout)
	defer rcancel()
	got, err := cs.CoreV1().ConfigMaps("default").Create(rctx, cm("accepted"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Data["mutated"] != "yes" {
		t.Errorf("data %v: the mutating webhook's patch is missing", got.Data)
	}
	_, err = cs.CoreV1().ConfigMaps("default").Create(rctx, cm("refused"), metav1.CreateOptions{})
	want := `admission webhook "vconfigmap-v1.kb.io" denied the request: not this one`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("create refused: %v, want %q", err, want)
	}
}

// waitTLS waits until a TLS server with a certificate of ca answers at
// addr, as kubebuilder's scaffolded suites wait for the webhook server.
func waitTLS(t *testing.T, addr string, ca []byte) {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		t.Fatal("webhook CA is not PEM")
	}
	deadline := time.Now().Add(startTimeout)
	for {
		conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})
		if err == nil {
			conn.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(errors.Join(errors.New("webhook server did not answer"), err))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
