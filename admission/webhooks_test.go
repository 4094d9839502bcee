package admission_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/cert"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// TestWebhookClientConfig reaches webhooks by url and by Service (an
// EndpointSlice pointing at the test's server), checks the caBundle,
// and fails or ignores a webhook that cannot be called, with
// kube-apiserver's error texts.
func TestWebhookClientConfig(t *testing.T) {
	t.Parallel()
	hooks := startHookServer(t, map[string]admission.HandlerFunc{
		"/deny": deny("no thanks"),
		"/slow": func(ctx context.Context, req admission.Request) admission.Response {
			select {
			case <-time.After(3 * time.Second):
			case <-ctx.Done():
			}
			return admission.Allowed("")
		},
	})
	ca := hooks.ca
	e := startEnv(t, "by-url", "by-service", "by-endpoints", "bad-ca", "down-fail", "down-ignore", "timeout", "no-endpoints")
	ctx := t.Context()

	t.Run("url", func(t *testing.T) {
		e.addValidating(t, ctx, validating("url.example.com", "by-url", admissionregistrationv1.WebhookClientConfig{URL: hooks.url("/deny"), CABundle: ca}))
		e.createUntil(t, ctx, "by-url", "cm", nil, refusedWith(`admission webhook "url.example.com" denied the request: no thanks`))
	})
	t.Run("service", func(t *testing.T) {
		// The documented way to reach a server on this machine by
		// Service: type ExternalName, externalName localhost, and the
		// server's port as the webhook's service port. Kube's validation
		// refuses loopback addresses in EndpointSlices.
		if _, err := e.cs.CoreV1().Services("by-service").Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "hooks"},
			Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost"},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		e.addValidating(t, ctx, validating("service.example.com", "by-service", admissionregistrationv1.WebhookClientConfig{
			Service:  &admissionregistrationv1.ServiceReference{Namespace: "by-service", Name: "hooks", Path: ptr.To("/deny"), Port: ptr.To(hooks.port())},
			CABundle: ca,
		}))
		e.createUntil(t, ctx, "by-service", "cm", nil, refusedWith(`admission webhook "service.example.com" denied the request: no thanks`))
	})
	t.Run("service endpoints", func(t *testing.T) {
		// A Service with endpoints is reached at one of them, as
		// kube-apiserver does with --enable-aggregator-routing; kube's
		// validation refuses loopback addresses in them.
		port := hooks.port()
		if _, err := e.cs.CoreV1().Services("by-endpoints").Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "hooks"},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstr.FromInt32(port)}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		slice := &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Name: "hooks-local", Labels: map[string]string{discoveryv1.LabelServiceName: "hooks"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
			Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: &port}},
		}
		_, err := e.cs.DiscoveryV1().EndpointSlices("by-endpoints").Create(ctx, slice, metav1.CreateOptions{})
		want := `EndpointSlice.discovery.k8s.io "hooks-local" is invalid: endpoints[0].addresses[0]: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)`
		if err == nil || err.Error() != want {
			t.Fatalf("EndpointSlice to loopback: %v, want %q", err, want)
		}
	})
	t.Run("service without endpoints", func(t *testing.T) {
		if _, err := e.cs.CoreV1().Services("no-endpoints").Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "hooks"},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 443}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		e.addValidating(t, ctx, validating("noendpoints.example.com", "no-endpoints", admissionregistrationv1.WebhookClientConfig{
			Service:  &admissionregistrationv1.ServiceReference{Namespace: "no-endpoints", Name: "hooks", Path: ptr.To("/deny")},
			CABundle: ca,
		}))
		e.createUntil(t, ctx, "no-endpoints", "cm", nil, refusedWith(`Internal error occurred: failed calling webhook "noendpoints.example.com": failed to call webhook: Post "https://hooks.no-endpoints.svc:443/deny?timeout=10s": no endpoints available for service "hooks"`))
	})
	t.Run("caBundle", func(t *testing.T) {
		// Another host's CA: one named as the hook server's (host and
		// second of creation) would make Go's verifier add "possibly
		// because of ..." to the error.
		other, _, err := cert.GenerateSelfSignedCertKey("other.example.com", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		e.addValidating(t, ctx, validating("badca.example.com", "bad-ca", admissionregistrationv1.WebhookClientConfig{URL: hooks.url("/deny"), CABundle: other}))
		e.createUntil(t, ctx, "bad-ca", "cm", nil, refusedWith(fmt.Sprintf(`Internal error occurred: failed calling webhook "badca.example.com": failed to call webhook: Post "https://%s/deny?timeout=10s": tls: failed to verify certificate: x509: certificate signed by unknown authority`, hooks.host)))
	})
	downHost := net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	downURL := "https://" + downHost + "/deny"
	t.Run("failurePolicy Fail", func(t *testing.T) {
		e.addValidating(t, ctx, validating("downfail.example.com", "down-fail", admissionregistrationv1.WebhookClientConfig{URL: &downURL, CABundle: ca}))
		e.createUntil(t, ctx, "down-fail", "cm", nil, refusedWith(fmt.Sprintf(`Internal error occurred: failed calling webhook "downfail.example.com": failed to call webhook: Post "https://%s/deny?timeout=10s": dial tcp %s: connect: connection refused`, downHost, downHost)))
	})
	t.Run("failurePolicy Ignore", func(t *testing.T) {
		hook := validating("downignore.example.com", "down-ignore", admissionregistrationv1.WebhookClientConfig{URL: &downURL, CABundle: ca})
		hook.FailurePolicy = ignore
		// A second webhook that refuses shows the configuration is in
		// effect, and the first, down, ignored.
		after := validating("after.example.com", "down-ignore", admissionregistrationv1.WebhookClientConfig{URL: hooks.url("/deny"), CABundle: ca})
		e.addValidating(t, ctx, hook, after)
		e.createUntil(t, ctx, "down-ignore", "cm", nil, refusedWith(`admission webhook "after.example.com" denied the request: no thanks`))
	})
	t.Run("timeoutSeconds", func(t *testing.T) {
		hook := validating("slow.example.com", "timeout", admissionregistrationv1.WebhookClientConfig{URL: hooks.url("/slow"), CABundle: ca})
		hook.TimeoutSeconds = ptr.To(int32(1))
		e.addValidating(t, ctx, hook)
		e.createUntil(t, ctx, "timeout", "cm", nil, refusedWith(fmt.Sprintf(`Internal error occurred: failed calling webhook "slow.example.com": failed to call webhook: Post "https://%s/slow?timeout=1s": context deadline exceeded`, hooks.host)))
	})
}

// TestWebhookTimeouts calls webhooks that do not answer: a server whose
// handler blocks, and a port that takes connections but never serves
// them (a listener nothing accepts from, so even the TLS handshake
// waits). Each call gives up after the webhook's timeoutSeconds with
// kube's error under failurePolicy Fail, and lets the write through
// under Ignore; a request whose own ?timeout= runs out first is
// answered with kube's 504.
func TestWebhookTimeouts(t *testing.T) {
	t.Parallel()
	block := func(ctx context.Context, _ admission.Request) admission.Response {
		// Until kube's client gives up and hangs up, or the test's
		// bound, whichever comes first.
		select {
		case <-ctx.Done():
		case <-time.After(testTimeout):
		}
		return admission.Allowed("")
	}
	hooks := startHookServer(t, map[string]admission.HandlerFunc{"/block": block, "/deny": deny("in effect")})
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })
	silentURL := "https://" + silent.Addr().String() + "/never"
	e := startEnv(t, "block-fail", "block-ignore", "mutating-block-fail", "silent-fail", "silent-ignore", "request-timeout")
	ctx := t.Context()
	second := ptr.To(int32(1))
	cc := func(path string) admissionregistrationv1.WebhookClientConfig {
		return admissionregistrationv1.WebhookClientConfig{URL: hooks.url(path), CABundle: hooks.ca}
	}
	// failing is kube's answer when the webhook named gives up on url.
	failing := func(name, url string) func(*corev1.ConfigMap, error) error {
		return refusedWith(fmt.Sprintf(`Internal error occurred: failed calling webhook %q: failed to call webhook: Post "%s?timeout=1s": context deadline exceeded`, name, url))
	}
	// admittedAfter accepts a write once the refusing webhook "after"
	// shows the configuration is in effect, by being called and
	// refusing: the webhook before it timed out and was ignored.
	admittedAfter := refusedWith(`admission webhook "after.example.com" denied the request: in effect`)

	t.Run("blocking Fail", func(t *testing.T) {
		h := validating("block.example.com", "block-fail", cc("/block"))
		h.TimeoutSeconds = second
		e.addValidating(t, ctx, h)
		e.createUntil(t, ctx, "block-fail", "cm", nil, failing("block.example.com", *hooks.url("/block")))
	})
	t.Run("blocking Ignore", func(t *testing.T) {
		h := validating("block.example.com", "block-ignore", cc("/block"))
		h.TimeoutSeconds, h.FailurePolicy = second, ignore
		// Validating webhooks are called in parallel: after refuses
		// on its own, so the request is refused, but only once
		// block.example.com has timed out.
		e.addValidating(t, ctx, h, validating("after.example.com", "block-ignore", cc("/deny")))
		e.createUntil(t, ctx, "block-ignore", "cm", nil, admittedAfter)
		// Without the refusing webhook, the write goes through.
		e.addValidating(t, ctx, h)
		e.createUntil(t, ctx, "block-ignore", "alone", nil, func(_ *corev1.ConfigMap, err error) error { return err })
	})
	t.Run("mutating blocking Fail", func(t *testing.T) {
		h := mutating("mblock.example.com", "mutating-block-fail", cc("/block"))
		h.TimeoutSeconds = second
		e.addMutating(t, ctx, h)
		e.createUntil(t, ctx, "mutating-block-fail", "cm", nil, failing("mblock.example.com", *hooks.url("/block")))
	})
	t.Run("silent Fail", func(t *testing.T) {
		h := validating("silent.example.com", "silent-fail", admissionregistrationv1.WebhookClientConfig{URL: &silentURL, CABundle: hooks.ca})
		h.TimeoutSeconds = second
		e.addValidating(t, ctx, h)
		e.createUntil(t, ctx, "silent-fail", "cm", nil, failing("silent.example.com", silentURL))
	})
	t.Run("silent Ignore", func(t *testing.T) {
		h := mutating("silent.example.com", "silent-ignore", admissionregistrationv1.WebhookClientConfig{URL: &silentURL, CABundle: hooks.ca})
		h.TimeoutSeconds, h.FailurePolicy = second, ignore
		e.addMutating(t, ctx, h)
		e.addValidating(t, ctx, validating("after.example.com", "silent-ignore", cc("/deny")))
		// The mutating webhook runs first and is ignored; the
		// validating one refuses, so the write got past the first.
		e.createUntil(t, ctx, "silent-ignore", "cm", nil, admittedAfter)
	})
	t.Run("request timeout first", func(t *testing.T) {
		// The webhook would wait 10s; the request's own ?timeout=2s
		// ends first, and the request is answered as kube-apiserver's
		// handlers answer one that ran out of time.
		h := validating("patient.example.com", "request-timeout", cc("/block"))
		h.TimeoutSeconds = ptr.To(int32(10))
		e.addValidating(t, ctx, h)
		hc, err := rest.HTTPClientFor(e.cfg)
		if err != nil {
			t.Fatal(err)
		}
		// kube's finisher's answer, as kube-apiserver 1.37.1 sends it.
		want := map[string]any{
			"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{}, "status": "Failure",
			"message": "Timeout: request did not complete within requested timeout - context deadline exceeded",
			"reason":  "Timeout", "details": map[string]any{}, "code": float64(504),
		}
		// Until the configuration is in effect, the create succeeds;
		// then it times out.
		deadline := time.Now().Add(testTimeout)
		for i := 0; ; i++ {
			body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"timed-%d"}}`, i)
			resp, err := hc.Post(e.cfg.Host+"/api/v1/namespaces/request-timeout/configmaps?timeout=2s", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				var st map[string]any
				if err := json.Unmarshal(got, &st); err != nil || resp.StatusCode != http.StatusGatewayTimeout || !reflect.DeepEqual(st, want) {
					t.Errorf("%s %s, want 504 %v", resp.Status, got, want)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the webhook configuration did not take effect")
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}
