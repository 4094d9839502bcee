package miniapitest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/miniapi/miniapi/miniapitest"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// deploymentHooks is a kubebuilder-style defaulter and validator for
// Deployments: it labels each Deployment and refuses more than five
// replicas, warning about more than three.
type deploymentHooks struct{}

func (deploymentHooks) Default(_ context.Context, d *appsv1.Deployment) error {
	if d.Labels == nil {
		d.Labels = map[string]string{}
	}
	d.Labels["defaulted-by"] = "webhook"
	return nil
}

func (deploymentHooks) check(d *appsv1.Deployment) (admission.Warnings, error) {
	n := int32(1)
	if d.Spec.Replicas != nil {
		n = *d.Spec.Replicas
	}
	if n > 5 {
		return nil, fmt.Errorf("replicas %d exceeds the limit of 5", n)
	}
	if n > 3 {
		return admission.Warnings{fmt.Sprintf("%d replicas is a lot", n)}, nil
	}
	return nil, nil
}

func (h deploymentHooks) ValidateCreate(_ context.Context, d *appsv1.Deployment) (admission.Warnings, error) {
	return h.check(d)
}

func (h deploymentHooks) ValidateUpdate(_ context.Context, _, d *appsv1.Deployment) (admission.Warnings, error) {
	return h.check(d)
}

func (deploymentHooks) ValidateDelete(context.Context, *appsv1.Deployment) (admission.Warnings, error) {
	return nil, nil
}

// configMapCheck refuses a ConfigMap with a key "forbidden".
func configMapCheck(_ context.Context, req admission.Request) admission.Response {
	var cm corev1.ConfigMap
	if err := json.Unmarshal(req.Object.Raw, &cm); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if _, ok := cm.Data["forbidden"]; ok {
		return admission.Denied("key forbidden is not allowed")
	}
	return admission.Allowed("")
}

// widgetDefault sets a Widget's spec.color to red when it has none.
func widgetDefault(_ context.Context, req admission.Request) admission.Response {
	var w unstructured.Unstructured
	if err := w.UnmarshalJSON(req.Object.Raw); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if _, ok, _ := unstructured.NestedString(w.Object, "spec", "color"); !ok {
		if err := unstructured.SetNestedField(w.Object, "red", "spec", "color"); err != nil {
			return admission.Errored(http.StatusInternalServerError, err)
		}
	}
	out, err := w.MarshalJSON()
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, out)
}

// widgetCheck refuses green Widgets, and deleting a Widget named
// "keep".
func widgetCheck(_ context.Context, req admission.Request) admission.Response {
	if req.Operation == "DELETE" {
		if req.Name == "keep" {
			return admission.Denied("widget keep may not be deleted")
		}
		return admission.Allowed("")
	}
	var w unstructured.Unstructured
	if err := w.UnmarshalJSON(req.Object.Raw); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if c, _, _ := unstructured.NestedString(w.Object, "spec", "color"); c == "green" {
		return admission.Denied("green widgets are sold out")
	}
	return admission.Allowed("")
}

// warnings records the Warning headers a client receives.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, msg)
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.msgs
	w.msgs = nil
	return out
}

// startWebhookManager starts a controller-runtime manager whose webhook
// server serves the kubebuilder-style webhooks where WithWebhooks
// pointed the configurations, and waits until it answers. It returns a
// function that stops the manager (and so the webhook server).
func startWebhookManager(t *testing.T, env *miniapitest.Env) (stop func()) {
	t.Helper()
	o := env.WebhookInstallOptions
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: o.LocalServingHost, Port: o.LocalServingPort, CertDir: o.LocalServingCertDir,
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &appsv1.Deployment{}).
		WithDefaulter(deploymentHooks{}).WithValidator(deploymentHooks{}).Complete(); err != nil {
		t.Fatal(err)
	}
	srv := mgr.GetWebhookServer()
	srv.Register("/validate--v1-configmap", &webhook.Admission{Handler: admission.HandlerFunc(configMapCheck)})
	srv.Register("/mutate-example-com-v1-widget", &webhook.Admission{Handler: admission.HandlerFunc(widgetDefault)})
	srv.Register("/validate-example-com-v1-widget", &webhook.Admission{Handler: admission.HandlerFunc(widgetCheck)})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("manager: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	wctx, wcancel := context.WithTimeout(ctx, testTimeout)
	defer wcancel()
	if err := env.WaitForWebhookServer(wctx); err != nil {
		t.Fatal(err)
	}
	return stop
}

// TestWebhooksKubebuilder installs kubebuilder's config/webhook
// manifests with WithWebhooks, serves them with controller-runtime's
// webhook server as a scaffolded suite does, and writes built-in kinds
// (through client-go's typed clients, which send protobuf) and a custom
// resource (through the dynamic client, JSON) past them.
func TestWebhooksKubebuilder(t *testing.T) {
	t.Parallel()
	env := miniapitest.Start(t,
		miniapitest.WithCRDObjects(widgetCRD),
		miniapitest.WithNamespaces("plain"),
		miniapitest.WithWebhooks(envtest.WebhookInstallOptions{Paths: []string{"testdata/webhook"}}),
	)
	o := env.WebhookInstallOptions
	if o.LocalServingPort == 0 || o.LocalServingCertDir == "" || len(o.LocalServingCAData) == 0 {
		t.Fatalf("WebhookInstallOptions not filled in: %+v", o)
	}
	if len(o.MutatingWebhooks) != 1 || len(o.ValidatingWebhooks) != 1 {
		t.Fatalf("read %d mutating and %d validating configurations, want 1 and 1", len(o.MutatingWebhooks), len(o.ValidatingWebhooks))
	}
	startWebhookManager(t, env)

	var warned warnings
	cfg := rest.CopyConfig(env.Config)
	cfg.WarningHandler = &warned
	cs := kubernetes.NewForConfigOrDie(cfg)
	dyn := dynamic.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: "hooked", Labels: map[string]string{"webhooks": "enabled"},
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	t.Run("validating refusal", func(t *testing.T) {
		_, err := cs.AppsV1().Deployments("plain").Create(ctx, deployment("big", 10), metav1.CreateOptions{})
		want := `admission webhook "vdeployment-v1.kb.io" denied the request: replicas 10 exceeds the limit of 5`
		if !apierrors.IsForbidden(err) || err.Error() != want {
			t.Fatalf("create: %v, want Forbidden %q", err, want)
		}
	})
	t.Run("mutation and warnings", func(t *testing.T) {
		warned.take()
		d, err := cs.AppsV1().Deployments("plain").Create(ctx, deployment("web", 4), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if d.Labels["defaulted-by"] != "webhook" {
			t.Errorf("labels %v: the mutating webhook's label is missing", d.Labels)
		}
		if got := warned.take(); len(got) != 1 || got[0] != "4 replicas is a lot" {
			t.Errorf("warnings %q, want the webhook's", got)
		}
		d.Spec.Replicas = ptr(int32(6))
		_, err = cs.AppsV1().Deployments("plain").Update(ctx, d, metav1.UpdateOptions{})
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "replicas 6 exceeds the limit of 5") {
			t.Errorf("update to 6 replicas: %v, want the webhook's refusal", err)
		}
	})
	t.Run("namespaceSelector and matchConditions", func(t *testing.T) {
		bad := func(name string, labels map[string]string) *corev1.ConfigMap {
			return &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
				Data:       map[string]string{"forbidden": "yes"},
			}
		}
		_, err := cs.CoreV1().ConfigMaps("hooked").Create(ctx, bad("refused", nil), metav1.CreateOptions{})
		want := `admission webhook "vconfigmap-v1.kb.io" denied the request: key forbidden is not allowed`
		if !apierrors.IsForbidden(err) || err.Error() != want {
			t.Errorf("in a selected namespace: %v, want %q", err, want)
		}
		if _, err := cs.CoreV1().ConfigMaps("plain").Create(ctx, bad("unselected", nil), metav1.CreateOptions{}); err != nil {
			t.Errorf("in a namespace the selector leaves out: %v", err)
		}
		if _, err := cs.CoreV1().ConfigMaps("hooked").Create(ctx, bad("exempt", map[string]string{"exempt": "true"}), metav1.CreateOptions{}); err != nil {
			t.Errorf("excluded by a matchCondition: %v", err)
		}
	})
	t.Run("custom resource", func(t *testing.T) {
		w := newWidget()
		w.SetName("plain-widget")
		w.Object["spec"] = map[string]any{}
		got, err := dyn.Resource(widgets).Namespace("plain").Create(ctx, w, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if c, _, _ := unstructured.NestedString(got.Object, "spec", "color"); c != "red" {
			t.Errorf("spec.color %q, want the webhook's default red", c)
		}
		w.SetName("green")
		w.Object["spec"] = map[string]any{"color": "green"}
		_, err = dyn.Resource(widgets).Namespace("plain").Create(ctx, w, metav1.CreateOptions{})
		want := `admission webhook "vwidget-v1.kb.io" denied the request: green widgets are sold out`
		if !apierrors.IsForbidden(err) || err.Error() != want {
			t.Errorf("green widget: %v, want %q", err, want)
		}
		w.SetName("keep")
		w.Object["spec"] = map[string]any{}
		if _, err := dyn.Resource(widgets).Namespace("plain").Create(ctx, w, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		err = dyn.Resource(widgets).Namespace("plain").Delete(ctx, "keep", metav1.DeleteOptions{})
		want = `admission webhook "vwidget-v1.kb.io" denied the request: widget keep may not be deleted`
		if !apierrors.IsForbidden(err) || err.Error() != want {
			t.Errorf("delete: %v, want %q", err, want)
		}
	})
}

// deployment is a Deployment of n replicas of one container.
func deployment(name string, n int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(n),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
			},
		},
	}
}
