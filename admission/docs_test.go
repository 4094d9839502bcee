package admission_test

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/miniapi/miniapi/admission"
	"github.com/miniapi/miniapi/miniapitest"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	cradmission "sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/yaml"
)

// TestAdmissionDocPolicies applies the policy docs/admission.md shows
// and expects the refusal and the default plugin list it shows.
func TestAdmissionDocPolicies(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../docs/admission.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	_, rest, ok := strings.Cut(doc, "## Admission policies")
	if !ok {
		t.Fatal("docs/admission.md has no Admission policies section")
	}
	_, rest, _ = strings.Cut(rest, "```yaml\n")
	block, _, _ := strings.Cut(rest, "```")
	parts := strings.Split(block, "---\n")
	if len(parts) != 2 {
		t.Fatalf("want a policy and a binding, got %d documents", len(parts))
	}
	var policy admissionregistrationv1.ValidatingAdmissionPolicy
	var binding admissionregistrationv1.ValidatingAdmissionPolicyBinding
	if err := yaml.UnmarshalStrict([]byte(parts[0]), &policy); err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict([]byte(parts[1]), &binding); err != nil {
		t.Fatal(err)
	}

	env := miniapitest.Start(t)
	cs, _ := clientFor(t, env)
	ctx := t.Context()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: "team", Labels: map[string]string{"policy": "deny"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps("team").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "limits"},
		Data: map[string]string{"maxReplicas": "3"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, &policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, &binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() error {
		_, err = cs.AppsV1().Deployments("team").Create(ctx, deployment("big", 5), metav1.CreateOptions{})
		if err == nil {
			_ = cs.AppsV1().Deployments("team").Delete(ctx, "big", metav1.DeleteOptions{})
			return fmt.Errorf("a Deployment over the limit was admitted")
		}
		if strings.Contains(err.Error(), "not yet synced") {
			// kube's plugin refuses too, this way, until its informer
			// of the binding's parameters has listed them.
			return err
		}
		return nil
	})
	if err == nil || !strings.Contains(doc, "\n"+err.Error()+"\n") {
		t.Errorf("docs/admission.md does not show the refusal %v", err)
	}

	_, plugins, _ := strings.Cut(doc, "## Default admission plugins")
	plugins, _, _ = strings.Cut(plugins, "write.")
	if !strings.Contains(strings.Join(strings.Fields(plugins), " "), strings.Join(admission.DefaultPlugins(), ", ")+".") {
		t.Errorf("docs/admission.md does not list the default plugins %v", admission.DefaultPlugins())
	}
}

// TestDocsLocalService applies the Service and configuration
// docs/admission.md shows for reaching a server on this machine (with
// the test server's port and CA filled in) and checks the webhook is
// called through them.
func TestDocsLocalService(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/admission.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := bytes.Cut(doc, []byte("```yaml\n"))
	if !ok {
		t.Fatal("docs/admission.md shows no YAML")
	}
	block, _, _ = bytes.Cut(block, []byte("```"))
	parts := strings.Split(string(block), "\n---\n")
	if len(parts) != 2 {
		t.Fatalf("docs/admission.md's YAML has %d documents, want a Service and a configuration", len(parts))
	}
	var svc corev1.Service
	var cfg admissionregistrationv1.ValidatingWebhookConfiguration
	if err := yaml.UnmarshalStrict([]byte(parts[0]), &svc); err != nil {
		t.Fatal(err)
	}
	// The caBundle placeholder is not base64; the test's CA replaces it.
	cfgYAML := strings.Replace(parts[1], "caBundle: <base64 of the CA of the server's certificate>", "caBundle: \"\"", 1)
	if err := yaml.UnmarshalStrict([]byte(cfgYAML), &cfg); err != nil {
		t.Fatal(err)
	}

	hooks := startHookServer(t, map[string]cradmission.HandlerFunc{"/validate-configmap": deny("from the docs")})
	e := startEnv(t, svc.Namespace, "docs")
	ctx := t.Context()
	if _, err := e.cs.CoreV1().Services(svc.Namespace).Create(ctx, &svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cc := &cfg.Webhooks[0].ClientConfig
	cc.Service.Port = ptr.To(hooks.port())
	cc.CABundle = hooks.ca
	e.addValidating(t, ctx, cfg.Webhooks...)
	e.createUntil(t, ctx, "docs", "cm", nil, refusedWith(`admission webhook "vconfigmap.example.com" denied the request: from the docs`))
}
