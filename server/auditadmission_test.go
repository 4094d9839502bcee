package server

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// auditAdmissionPolicy logs ConfigMaps at RequestResponse, the level at
// which kube adds a mutating webhook's patch to the event.
const auditAdmissionPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: RequestResponse
  resources: [{group: "", resources: ["configmaps"]}]
- level: None
`

// TestAuditAdmissionAnnotations writes a ConfigMap past a mutating and
// a validating webhook, one down but ignored, and a
// ValidatingAdmissionPolicy bound with validationActions Audit, and
// finds in its audit event the annotations kube-apiserver's plugins
// write there, under kube's keys: the webhooks' own (<webhook>/<key>),
// the mutating webhook's round and patch, the ignored webhook's failing
// open, the policy's auditAnnotations (<policy>/<key>) and its failed
// validation.
func TestAuditAdmissionAnnotations(t *testing.T) {
	dir := t.TempDir()
	policyFile := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policyFile, []byte(auditAdmissionPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "audit.log")
	srv := startWithUsers(t, Config{Audit: AuditConfig{PolicyFile: policyFile, LogPath: logPath}}, "alice")
	u := newUserClient(srv, "alice")
	defer u.c.CloseIdleConnections()
	cs, err := kubernetes.NewForConfig(srv.ownConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// The webhooks: /mutate labels the object, both answer with an
	// audit annotation of their own.
	hooks := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review struct {
			Request struct {
				UID string `json:"uid"`
			} `json:"request"`
		}
		if b, err := io.ReadAll(r.Body); err != nil || json.Unmarshal(b, &review) != nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		resp := map[string]any{"uid": review.Request.UID, "allowed": true}
		if r.URL.Path == "/mutate" {
			resp["patchType"] = "JSONPatch"
			resp["patch"] = []byte(`[{"op":"add","path":"/metadata/labels","value":{"mutated":"yes"}}]`)
			resp["auditAnnotations"] = map[string]string{"mutated": "labels"}
		} else {
			resp["auditAnnotations"] = map[string]string{"checked": "yes"}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": resp})
	}))
	defer hooks.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: hooks.Certificate().Raw})
	cc := func(path string) admissionregistrationv1.WebhookClientConfig {
		u := hooks.URL + path
		return admissionregistrationv1.WebhookClientConfig{URL: &u, CABundle: ca}
	}

	// down is a port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "https://" + l.Addr().String() + "/validate"
	l.Close()

	const ns = "audited"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	inNS := &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}
	rules := []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
	}}
	none := ptr.To(admissionregistrationv1.SideEffectClassNone)
	if _, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "audit-mutating"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: "mutate.audit.example.com", ClientConfig: cc("/mutate"), Rules: rules, NamespaceSelector: inNS,
			SideEffects: none, AdmissionReviewVersions: []string{"v1"},
		}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "audit-validating"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "validate.audit.example.com", ClientConfig: cc("/validate"), Rules: rules, NamespaceSelector: inNS,
			SideEffects: none, AdmissionReviewVersions: []string{"v1"},
		}, {
			// Down, and ignored: kube notes that it failed open.
			Name: "down.audit.example.com", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &down, CABundle: ca},
			Rules: rules, NamespaceSelector: inNS, SideEffects: none, AdmissionReviewVersions: []string{"v1"},
			FailurePolicy: ptr.To(admissionregistrationv1.Ignore),
		}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "audit-policy"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: rules[0],
			}}},
			Validations:      []admissionregistrationv1.Validation{{Expression: "!has(object.data)", Message: "data is not allowed"}},
			AuditAnnotations: []admissionregistrationv1.AuditAnnotation{{Key: "name", ValueExpression: "'named ' + object.metadata.name"}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "audit-binding"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName: "audit-policy", ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Audit},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: inNS},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Write ConfigMaps with data until every plugin has its
	// configuration (the policy's takes a moment to compile): the
	// label shows the mutating webhook ran, the audit event the rest.
	var name string
	var ev *auditEvent
	waitFor(t, "a ConfigMap's audit event with the policy's annotation", func() bool {
		name = fmt.Sprintf("cm-%d", time.Now().UnixNano())
		body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q},"data":{"k":"v"}}`, name)
		resp, b, err := u.do(ctx, "POST", "/api/v1/namespaces/"+ns+"/configmaps", body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("create: %s %s", resp.Status, b)
		}
		ev = nil
		for deadline := time.Now().Add(5 * time.Second); ev == nil && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			for _, e := range readAuditLog(t, logPath) {
				if e.Verb == "create" && e.ObjectRef != nil && e.ObjectRef.Namespace == ns && e.ObjectRef.Name == name {
					ev = &e
				}
			}
		}
		if ev == nil {
			t.Fatalf("no audit event for %s", name)
		}
		return ev.Annotations["audit-policy/name"] != ""
	})

	want := map[string]string{
		"mutate.audit.example.com/mutated":                      "labels",
		"validate.audit.example.com/checked":                    "yes",
		"mutation.webhook.admission.k8s.io/round_0_index_0":     `{"configuration":"audit-mutating","webhook":"mutate.audit.example.com","mutated":true}`,
		"patch.webhook.admission.k8s.io/round_0_index_0":        `{"configuration":"audit-mutating","webhook":"mutate.audit.example.com","patch":[{"op":"add","path":"/metadata/labels","value":{"mutated":"yes"}}],"patchType":"JSONPatch"}`,
		"audit-policy/name":                                     "named " + name,
		"validation.policy.admission.k8s.io/validation_failure": `[{"message":"data is not allowed","policy":"audit-policy","binding":"audit-binding","expressionIndex":0,"validationActions":["Audit"]}]`,
	}
	var missing []string
	for k, v := range want {
		if got, ok := ev.Annotations[k]; !ok || got != v {
			missing = append(missing, fmt.Sprintf("%s: got %q, want %q", k, got, v))
		}
	}
	if len(missing) > 0 {
		t.Errorf("audit event of %s:\n%s\nall annotations: %v", name, strings.Join(missing, "\n"), ev.Annotations)
	}
	meta, _ := ev.ResponseObject["metadata"].(map[string]any)
	if labels, _ := meta["labels"].(map[string]any); labels["mutated"] != "yes" {
		t.Errorf("responseObject %v, want the mutating webhook's label", ev.ResponseObject)
	}
}
