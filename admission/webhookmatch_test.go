package admission_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// The webhook matching and calling rules of kube's plugins, through
// miniapi: objectSelector, dry runs and sideEffects, AdmissionReview
// v1beta1, matchPolicy Equivalent, and reinvocation.
func TestWebhookMatching(t *testing.T) {
	t.Parallel()
	var firstCalls atomic.Int32
	hooks := startHookServer(t, map[string]admission.HandlerFunc{
		"/deny":  deny("selected"),
		"/allow": allow,
		// first adds label first=<n>, counting its calls; second adds
		// second=yes, after first, so first is called again when it
		// asks to be reinvoked.
		"/first": func(_ context.Context, req admission.Request) admission.Response {
			n := firstCalls.Add(1)
			return admission.PatchResponseFromRaw(req.Object.Raw, withLabel(req.Object.Raw, "first", string(rune('0'+n))))
		},
		"/second": func(_ context.Context, req admission.Request) admission.Response {
			return admission.PatchResponseFromRaw(req.Object.Raw, withLabel(req.Object.Raw, "second", "yes"))
		},
	})
	ca := hooks.ca
	e := startEnv(t, "object-selector", "dry-run", "v1beta1", "equivalent", "reinvoke")
	ctx := t.Context()
	cc := func(path string) admissionregistrationv1.WebhookClientConfig {
		return admissionregistrationv1.WebhookClientConfig{URL: hooks.url(path), CABundle: ca}
	}

	t.Run("objectSelector", func(t *testing.T) {
		h := validating("selector.example.com", "object-selector", cc("/deny"))
		h.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"check": "yes"}}
		e.addValidating(t, ctx, h)
		e.createUntil(t, ctx, "object-selector", "checked", map[string]string{"check": "yes"},
			refusedWith(`admission webhook "selector.example.com" denied the request: selected`))
		if _, err := e.cs.CoreV1().ConfigMaps("object-selector").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "unchecked"}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("an object the selector does not match: %v", err)
		}
	})

	t.Run("dry run", func(t *testing.T) {
		// A webhook without side effects is called on a dry run, told
		// so, and its refusal is the dry run's answer.
		e.addValidating(t, ctx, validating("dry.example.com", "dry-run", cc("/deny")))
		e.createUntil(t, ctx, "dry-run", "probe", nil, refusedWith(`admission webhook "dry.example.com" denied the request: selected`))
		_, err := e.cs.CoreV1().ConfigMaps("dry-run").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dry"}},
			metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil || !strings.Contains(err.Error(), "denied the request") {
			t.Fatalf("dry run: %v, want the webhook's refusal", err)
		}
		var dry bool
		for _, r := range hooks.reviewsOf("/deny") {
			if r.Namespace == "dry-run" && r.Name == "dry" {
				dry = r.DryRun != nil && *r.DryRun
			}
		}
		if !dry {
			t.Error("the webhook was not told the request was a dry run")
		}
	})

	t.Run("v1beta1", func(t *testing.T) {
		h := validating("beta.example.com", "v1beta1", cc("/deny"))
		h.AdmissionReviewVersions = []string{"v1beta1"}
		e.addValidating(t, ctx, h)
		e.createUntil(t, ctx, "v1beta1", "cm", nil, refusedWith(`admission webhook "beta.example.com" denied the request: selected`))
	})

	t.Run("matchPolicy Equivalent", func(t *testing.T) {
		// Registered for events.k8s.io/v1 only, the webhook is called
		// for a core v1 Event, with the object converted to its version.
		h := validating("equivalent.example.com", "equivalent", cc("/deny"))
		h.Rules = []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{"events.k8s.io"}, APIVersions: []string{"v1"}, Resources: []string{"events"}},
		}}
		h.MatchPolicy = ptr.To(admissionregistrationv1.Equivalent)
		e.addValidating(t, ctx, h)
		deadline := time.Now().Add(testTimeout)
		for i := 0; ; i++ {
			_, err := e.cs.CoreV1().Events("equivalent").Create(ctx, &corev1.Event{
				ObjectMeta:     metav1.ObjectMeta{Name: "ev" + string(rune('a'+i%26)) + time.Now().Format("150405.000000")},
				InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "p", Namespace: "equivalent"},
				Reason:         "R", Message: "m", Type: corev1.EventTypeNormal,
			}, metav1.CreateOptions{})
			if err != nil && strings.Contains(err.Error(), `admission webhook "equivalent.example.com" denied the request`) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("a core Event was not sent to the events.k8s.io webhook: %v", err)
			}
			time.Sleep(20 * time.Millisecond)
		}
		var got *admission.Request
		for _, r := range hooks.reviewsOf("/deny") {
			if r.Namespace == "equivalent" {
				got = &r
			}
		}
		if got == nil {
			t.Fatal("no review recorded")
		}
		if got.Kind.Group != "events.k8s.io" || got.RequestKind == nil || got.RequestKind.Group != "" {
			t.Errorf("kind %v, requestKind %v; want events.k8s.io/v1 Event converted from the core v1 one", got.Kind, got.RequestKind)
		}
		var obj map[string]any
		if err := json.Unmarshal(got.Object.Raw, &obj); err != nil {
			t.Fatal(err)
		}
		if obj["apiVersion"] != "events.k8s.io/v1" || obj["note"] != "m" {
			t.Errorf("object sent %v; want it in events.k8s.io/v1 (message as note)", obj)
		}
	})

	t.Run("reinvocation", func(t *testing.T) {
		first := mutating("first.example.com", "reinvoke", cc("/first"))
		first.ReinvocationPolicy = ptr.To(admissionregistrationv1.IfNeededReinvocationPolicy)
		second := mutating("second.example.com", "reinvoke", cc("/second"))
		e.addMutating(t, ctx, first, second)
		e.createUntil(t, ctx, "reinvoke", "cm", nil, func(cm *corev1.ConfigMap, err error) error {
			if err != nil || cm.Labels["second"] != "yes" {
				return errNotYet
			}
			return nil
		})
		before := firstCalls.Load()
		firstCalls.Store(0)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "again"}}
		got, err := e.cs.CoreV1().ConfigMaps("reinvoke").Create(ctx, cm, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if n := firstCalls.Load(); n != 2 || got.Labels["first"] != "2" {
			t.Errorf("first webhook called %d times (label %q; %d before), want 2: once, then again after the second changed the object", n, got.Labels["first"], before)
		}
	})
}

// errNotYet is a check's answer while a configuration is not in effect.
var errNotYet = errString("not yet")

type errString string

func (e errString) Error() string { return string(e) }

// withLabel returns the object raw with label key set to value.
func withLabel(raw []byte, key, value string) []byte {
	var obj map[string]any
	_ = json.Unmarshal(raw, &obj)
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	labels, _ := meta["labels"].(map[string]any)
	if labels == nil {
		labels = map[string]any{}
		meta["labels"] = labels
	}
	labels[key] = value
	out, _ := json.Marshal(obj)
	return out
}
