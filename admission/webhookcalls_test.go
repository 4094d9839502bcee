package admission_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// rawHookServer is a webhook server that sees the AdmissionReview as
// sent, whatever its version, which controller-runtime's server hides:
// answer gets the path called and the decoded review, and returns the
// response object.
type rawHookServer struct {
	srv *httptest.Server
	ca  []byte

	mu      sync.Mutex
	reviews []map[string]any
}

// startRawHookServer serves answer over HTTPS until the test ends.
func startRawHookServer(t *testing.T, answer func(path string, review map[string]any) map[string]any) *rawHookServer {
	t.Helper()
	h := &rawHookServer{}
	h.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		var review map[string]any
		if err == nil {
			err = json.Unmarshal(body, &review)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		h.mu.Lock()
		h.reviews = append(h.reviews, review)
		h.mu.Unlock()
		req, _ := review["request"].(map[string]any)
		resp := answer(r.URL.Path, review)
		resp["uid"] = req["uid"]
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": review["apiVersion"], "kind": "AdmissionReview", "response": resp})
	}))
	t.Cleanup(h.srv.Close)
	h.ca = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: h.srv.Certificate().Raw})
	return h
}

// clientConfig calls the server at path.
func (h *rawHookServer) clientConfig(path string) admissionregistrationv1.WebhookClientConfig {
	u := h.srv.URL + path
	return admissionregistrationv1.WebhookClientConfig{URL: &u, CABundle: h.ca}
}

// reviewsFor returns the reviews of objects named name, in order.
func (h *rawHookServer) reviewsFor(name string) []map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []map[string]any
	for _, r := range h.reviews {
		if req, _ := r["request"].(map[string]any); req["name"] == name {
			out = append(out, r)
		}
	}
	return out
}

// TestWebhookCalls checks which requests kube's plugins send to a
// webhook, and how: by the scope of its rules, on dry runs by its
// sideEffects, and in the AdmissionReview version it asks for.
func TestWebhookCalls(t *testing.T) {
	t.Parallel()
	hooks := startHookServer(t, map[string]admission.HandlerFunc{
		"/deny":  deny("called"),
		"/allow": allow,
		"/label": func(_ context.Context, req admission.Request) admission.Response {
			return admission.PatchResponseFromRaw(req.Object.Raw, withLabel(req.Object.Raw, "mutated", "yes"))
		},
	})
	e := startEnv(t, "scope", "dry-run", "beta")
	ctx := t.Context()
	cc := func(path string) admissionregistrationv1.WebhookClientConfig {
		return admissionregistrationv1.WebhookClientConfig{URL: hooks.url(path), CABundle: hooks.ca}
	}

	t.Run("scope", func(t *testing.T) {
		// One refusing webhook per scope, each matching ConfigMaps,
		// Roles, ClusterRoles and Namespaces labelled scope=<its scope>.
		short := map[admissionregistrationv1.ScopeType]string{
			admissionregistrationv1.NamespacedScope: "namespaced", admissionregistrationv1.ClusterScope: "cluster", admissionregistrationv1.AllScopes: "all",
		}
		hook := func(scope admissionregistrationv1.ScopeType) admissionregistrationv1.ValidatingWebhook {
			return admissionregistrationv1.ValidatingWebhook{
				Name: short[scope] + ".scope.example.com", ClientConfig: cc("/deny"),
				Rules: []admissionregistrationv1.RuleWithOperations{{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule: admissionregistrationv1.Rule{
						APIGroups: []string{"", "rbac.authorization.k8s.io"}, APIVersions: []string{"v1"},
						Resources: []string{"configmaps", "roles", "clusterroles", "namespaces"}, Scope: &scope,
					},
				}},
				ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"scope": short[scope]}},
				SideEffects:    sideEffectsNone, AdmissionReviewVersions: []string{"v1"}, FailurePolicy: fail,
			}
		}
		e.addValidating(t, ctx, hook(admissionregistrationv1.NamespacedScope), hook(admissionregistrationv1.ClusterScope), hook(admissionregistrationv1.AllScopes))
		labels := func(scope admissionregistrationv1.ScopeType) map[string]string {
			return map[string]string{"scope": short[scope]}
		}
		// Wait until the configuration is in effect.
		e.createUntil(t, ctx, "scope", "probe", labels(admissionregistrationv1.NamespacedScope),
			refusedWith(`admission webhook "namespaced.scope.example.com" denied the request: called`))

		refused := func(name string) func(error) error {
			return func(err error) error {
				want := fmt.Sprintf(`admission webhook %q denied the request: called`, name)
				if err == nil || !strings.HasSuffix(err.Error(), want) {
					return fmt.Errorf("got %v, want refusal %q", err, want)
				}
				return nil
			}
		}
		admitted := func(err error) error { return err }
		for _, tc := range []struct {
			scope admissionregistrationv1.ScopeType
			// what a ConfigMap and a Role (namespaced), a ClusterRole and
			// a Namespace (cluster-scoped) get.
			namespaced, cluster func(error) error
		}{
			{admissionregistrationv1.NamespacedScope, refused("namespaced.scope.example.com"), admitted},
			{admissionregistrationv1.ClusterScope, admitted, refused("cluster.scope.example.com")},
			{admissionregistrationv1.AllScopes, refused("all.scope.example.com"), refused("all.scope.example.com")},
		} {
			t.Run(short[tc.scope], func(t *testing.T) {
				meta := metav1.ObjectMeta{Name: "scope-" + short[tc.scope], Labels: labels(tc.scope)}
				_, err := e.cs.CoreV1().ConfigMaps("scope").Create(ctx, &corev1.ConfigMap{ObjectMeta: meta}, metav1.CreateOptions{})
				if err := tc.namespaced(err); err != nil {
					t.Errorf("ConfigMap: %v", err)
				}
				_, err = e.cs.RbacV1().Roles("scope").Create(ctx, &rbacv1.Role{ObjectMeta: meta}, metav1.CreateOptions{})
				if err := tc.namespaced(err); err != nil {
					t.Errorf("Role: %v", err)
				}
				_, err = e.cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: meta}, metav1.CreateOptions{})
				if err := tc.cluster(err); err != nil {
					t.Errorf("ClusterRole: %v", err)
				}
				_, err = e.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: meta}, metav1.CreateOptions{})
				if err := tc.cluster(err); err != nil {
					t.Errorf("Namespace create: %v", err)
				}
				// An update of a Namespace is made to the namespace's
				// own path; it is cluster-scoped all the same.
				ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: meta.Name + "-update"}}
				if ns, err = e.cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				ns.Labels = labels(tc.scope)
				_, err = e.cs.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{})
				if err := tc.cluster(err); err != nil {
					t.Errorf("Namespace update: %v", err)
				}
			})
		}
	})

	t.Run("sideEffects and dry run", func(t *testing.T) {
		// Webhooks without side effects, or without them on dry runs,
		// are called on a dry run and told it is one; their answers
		// are the dry run's.
		none := mutating("none.dryrun.example.com", "dry-run", cc("/label"))
		onDryRun := validating("noneondryrun.dryrun.example.com", "dry-run", cc("/allow"))
		onDryRun.SideEffects = ptr.To(admissionregistrationv1.SideEffectClassNoneOnDryRun)
		e.addMutating(t, ctx, none)
		e.addValidating(t, ctx, onDryRun)
		e.createUntil(t, ctx, "dry-run", "probe", nil, func(cm *corev1.ConfigMap, err error) error {
			if err != nil || cm.Labels["mutated"] != "yes" || len(hooks.reviewsOf("/allow")) == 0 {
				return errNotYet
			}
			return nil
		})
		got, err := e.cs.CoreV1().ConfigMaps("dry-run").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dry"}},
			metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			t.Fatalf("dry run: %v", err)
		}
		if got.Labels["mutated"] != "yes" {
			t.Errorf("dry run answered %v, want the mutating webhook's label", got.Labels)
		}
		if _, err := e.cs.CoreV1().ConfigMaps("dry-run").Get(ctx, "dry", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("after a dry run: %v, want NotFound", err)
		}
		for _, path := range []string{"/label", "/allow"} {
			var dry *bool
			for _, r := range hooks.reviewsOf(path) {
				if r.Namespace == "dry-run" && r.Name == "dry" {
					dry = r.DryRun
				}
			}
			if dry == nil || !*dry {
				t.Errorf("%s: dryRun %v, want the webhook called and told true", path, dry)
			}
		}
	})

	t.Run("sideEffects Some or Unknown", func(t *testing.T) {
		// kube refuses a dry run to a webhook that may have side
		// effects, but admissionregistration.k8s.io/v1 cannot hold one:
		// its validation refuses Some and Unknown on create, and
		// kube-apiserver 1.37 serves no v1beta1 webhook configurations,
		// the only version that took them.
		for _, se := range []admissionregistrationv1.SideEffectClass{admissionregistrationv1.SideEffectClassSome, admissionregistrationv1.SideEffectClassUnknown} {
			h := validating("sideeffects.example.com", "dry-run", cc("/allow"))
			h.SideEffects = &se
			c := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "side-effects"}, Webhooks: []admissionregistrationv1.ValidatingWebhook{h}}
			_, err := e.cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, c, metav1.CreateOptions{})
			want := fmt.Sprintf(`ValidatingWebhookConfiguration.admissionregistration.k8s.io "side-effects" is invalid: webhooks[0].sideEffects: Unsupported value: %q: supported values: "None", "NoneOnDryRun"`, se)
			if err == nil || err.Error() != want {
				t.Errorf("sideEffects %s: %v, want %q", se, err, want)
			}
		}
		hc, err := rest.HTTPClientFor(e.cfg)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := hc.Get(e.cfg.Host + "/apis/admissionregistration.k8s.io/v1beta1")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("admissionregistration.k8s.io/v1beta1: %s, want 404 as kube-apiserver 1.37 by default", resp.Status)
		}
	})

	t.Run("AdmissionReview v1beta1", func(t *testing.T) {
		// A webhook that speaks only v1beta1 is sent a v1beta1 review,
		// and its v1beta1 answer, a patch or a refusal, is honoured.
		raw := startRawHookServer(t, func(path string, review map[string]any) map[string]any {
			req, _ := review["request"].(map[string]any)
			if path == "/validate" {
				refuse := strings.HasPrefix(fmt.Sprint(req["name"]), "refused")
				if refuse {
					return map[string]any{"allowed": false, "status": map[string]any{"message": "not in v1beta1", "code": 403}}
				}
				return map[string]any{"allowed": true}
			}
			patch := `[{"op":"add","path":"/metadata/labels","value":{"review":"v1beta1"}}]`
			return map[string]any{"allowed": true, "patchType": "JSONPatch", "patch": []byte(patch)}
		})
		m := mutating("mutate.beta.example.com", "beta", raw.clientConfig("/mutate"))
		m.AdmissionReviewVersions = []string{"v1beta1"}
		v := validating("validate.beta.example.com", "beta", raw.clientConfig("/validate"))
		v.AdmissionReviewVersions = []string{"v1beta1"}
		v.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"review": "v1beta1"}}
		e.addMutating(t, ctx, m)
		e.addValidating(t, ctx, v)
		got := e.createUntil(t, ctx, "beta", "cm", nil, func(cm *corev1.ConfigMap, err error) error {
			if err != nil || cm.Labels["review"] != "v1beta1" {
				return errNotYet
			}
			return nil
		})
		e.createUntil(t, ctx, "beta", "refused", nil, refusedWith(`admission webhook "validate.beta.example.com" denied the request: not in v1beta1`))
		reviews := raw.reviewsFor(got.Name)
		if len(reviews) != 2 {
			t.Fatalf("%d reviews of %s, want one by each webhook", len(reviews), got.Name)
		}
		for _, r := range reviews {
			req, _ := r["request"].(map[string]any)
			if r["apiVersion"] != "admission.k8s.io/v1beta1" || r["kind"] != "AdmissionReview" || req["operation"] != "CREATE" || req["namespace"] != "beta" {
				t.Errorf("review %v, want a v1beta1 AdmissionReview of the create", r)
			}
		}
	})
}
