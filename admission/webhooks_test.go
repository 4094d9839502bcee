package admission_test

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
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
		other, _, err := cert.GenerateSelfSignedCertKey("127.0.0.1", nil, nil)
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
