package apiextensions_test

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miniapi/miniapi/auth"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// converter is a conversion webhook for gadgets.conv.example.com: v1
// keeps the size in spec.size, v2 in spec.replicas. It counts the
// ConversionReviews it answers for each desired version.
type converter struct {
	srv *httptest.Server

	// mu protects calls.
	mu    sync.Mutex
	calls map[string]int
}

func startConverter(t *testing.T) *converter {
	t.Helper()
	c := &converter{calls: map[string]int{}}
	c.srv = httptest.NewTLSServer(http.HandlerFunc(c.serve))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *converter) serve(w http.ResponseWriter, r *http.Request) {
	var review apiextensionsv1.ConversionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, "bad review", http.StatusBadRequest)
		return
	}
	req := review.Request
	c.mu.Lock()
	c.calls[req.DesiredAPIVersion]++
	c.mu.Unlock()
	resp := &apiextensionsv1.ConversionResponse{UID: req.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
	for _, raw := range req.Objects {
		var obj map[string]any
		if err := json.Unmarshal(raw.Raw, &obj); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		spec, _ := obj["spec"].(map[string]any)
		from, to := "replicas", "size"
		if req.DesiredAPIVersion == "conv.example.com/v2" {
			from, to = to, from
		}
		if v, ok := spec[from]; ok {
			spec[to] = v
			delete(spec, from)
		}
		obj["apiVersion"] = req.DesiredAPIVersion
		b, _ := json.Marshal(obj)
		resp.ConvertedObjects = append(resp.ConvertedObjects, runtime.RawExtension{Raw: b})
	}
	review.Request, review.Response = nil, resp
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&review)
}

// callsTo is how many reviews asked for version so far.
func (c *converter) callsTo(version string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[version]
}

// caBundle is the webhook's serving CA, base64 as a CRD carries it.
func (c *converter) caBundle() string {
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.srv.Certificate().Raw})
	return base64.StdEncoding.EncodeToString(ca)
}

// gadgetCRD is a CRD in two versions, v1 stored, converted by c.
func gadgetCRD(c *converter) map[string]any {
	schemaFor := func(field string) map[string]any {
		return map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "properties": map[string]any{
			"spec": map[string]any{"type": "object", "properties": map[string]any{field: map[string]any{"type": "integer"}}},
		}}}
	}
	return map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "gadgets.conv.example.com"},
		"spec": map[string]any{
			"group": "conv.example.com", "scope": "Namespaced",
			"names": map[string]any{"plural": "gadgets", "kind": "Gadget"},
			"versions": []any{
				map[string]any{"name": "v1", "served": true, "storage": true, "schema": schemaFor("size")},
				map[string]any{"name": "v2", "served": true, "storage": false, "schema": schemaFor("replicas")},
			},
			"conversion": map[string]any{"strategy": "Webhook", "webhook": map[string]any{
				"conversionReviewVersions": []any{"v1"},
				"clientConfig":             map[string]any{"url": c.srv.URL + "/convert", "caBundle": c.caBundle()},
			}},
		},
	}
}

// createEstablished creates crd and waits until it is Established.
func createEstablished(ctx context.Context, t *testing.T, dc dynamic.Interface, crd map[string]any) {
	t.Helper()
	crds := dc.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	created, err := crds.Create(ctx, &unstructured.Unstructured{Object: toUnstructured(t, crd)}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error {
		got, err := crds.Get(ctx, created.GetName(), metav1.GetOptions{})
		if err != nil {
			return err
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conds {
			if m := c.(map[string]any); m["type"] == "Established" && m["status"] == "True" {
				return nil
			}
		}
		return context.DeadlineExceeded
	})
}

func gadget(version, name, field string, n int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "conv.example.com/" + version, "kind": "Gadget",
		"metadata": map[string]any{"name": name}, "spec": map[string]any{field: n},
	}}
}

func wantField(t *testing.T, what string, obj *unstructured.Unstructured, version, field string, n int64) {
	t.Helper()
	got, ok, _ := unstructured.NestedInt64(obj.Object, "spec", field)
	if obj.GetAPIVersion() != "conv.example.com/"+version || !ok || got != n {
		t.Errorf("%s: %s spec %v, want %s spec.%s=%d", what, obj.GetAPIVersion(), obj.Object["spec"], version, field, n)
	}
}

// A CRD whose conversion strategy is Webhook is served: objects written
// in one version are read, listed and watched in the other through the
// webhook, and each watch event is converted once for all the watchers
// of a version.
func TestConversionWebhook(t *testing.T) {
	conv := startConverter(t)
	srv, _ := start(t, "")
	dc, err := dynamic.NewForConfig(&rest.Config{Host: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	createEstablished(ctx, t, dc, gadgetCRD(conv))
	res := func(v string) dynamic.ResourceInterface {
		return dc.Resource(schema.GroupVersionResource{Group: "conv.example.com", Version: v, Resource: "gadgets"}).Namespace("default")
	}
	v1, v2 := res("v1"), res("v2")

	if _, err := v1.Create(ctx, gadget("v1", "a", "size", 3), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	created, err := v2.Create(ctx, gadget("v2", "b", "replicas", 5), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantField(t, "create in v2", created, "v2", "replicas", 5)
	got, err := v2.Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantField(t, "get v1 object in v2", got, "v2", "replicas", 3)
	if got, err = v1.Get(ctx, "b", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	wantField(t, "get v2 object in v1", got, "v1", "size", 5)
	list, err := v2.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 2 {
		t.Fatalf("list in v2: %d items", len(list.Items))
	}
	wantField(t, "list in v2", &list.Items[0], "v2", "replicas", 3)
	wantField(t, "list in v2", &list.Items[1], "v2", "replicas", 5)

	// Three watchers of v2 see an update made in v1; the webhook is asked
	// once for it.
	var watchers []watch.Interface
	for range 3 {
		w, err := v2.Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		watchers = append(watchers, w)
	}
	before := conv.callsTo("conv.example.com/v2")
	a, err := v1.Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedField(a.Object, int64(7), "spec", "size")
	if _, err := v1.Update(ctx, a, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i, w := range watchers {
		select {
		case ev := <-w.ResultChan():
			if ev.Type != watch.Modified {
				t.Fatalf("watcher %d: %s %v", i, ev.Type, ev.Object)
			}
			wantField(t, "watch event in v2", ev.Object.(*unstructured.Unstructured), "v2", "replicas", 7)
		case <-ctx.Done():
			t.Fatalf("watcher %d: no event", i)
		}
	}
	if n := conv.callsTo("conv.example.com/v2") - before; n != 1 {
		t.Errorf("one event for 3 watchers took %d conversions to v2, want 1", n)
	}
}

// With its conversion webhook down, a CRD's other version answers as
// kube-apiserver does: reads 500 InternalError, writes 500, both naming
// the failed webhook.
func TestConversionWebhookDown(t *testing.T) {
	conv := startConverter(t)
	srv, _ := start(t, "")
	dc, err := dynamic.NewForConfig(&rest.Config{Host: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	createEstablished(ctx, t, dc, gadgetCRD(conv))
	res := func(v string) dynamic.ResourceInterface {
		return dc.Resource(schema.GroupVersionResource{Group: "conv.example.com", Version: v, Resource: "gadgets"}).Namespace("default")
	}
	v1, v2 := res("v1"), res("v2")
	if _, err := v1.Create(ctx, gadget("v1", "a", "size", 3), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	conv.srv.Close()

	_, err = v2.Get(ctx, "a", metav1.GetOptions{})
	if !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), "Internal error occurred: StorageError: corrupt object") ||
		!strings.Contains(err.Error(), "object not decodable revision=") ||
		!strings.Contains(err.Error(), "conversion webhook for conv.example.com/v1, Kind=Gadget failed: Post ") {
		t.Errorf("get with the webhook down: %v", err)
	}
	_, err = v2.Create(ctx, gadget("v2", "b", "replicas", 5), metav1.CreateOptions{})
	if code := statusCode(err); code != http.StatusInternalServerError || apierrors.ReasonForError(err) != metav1.StatusReasonUnknown ||
		!strings.HasPrefix(err.Error(), "conversion webhook for conv.example.com/v2, Kind=Gadget failed: Post ") {
		t.Errorf("create with the webhook down: %d %v", code, err)
	}
	// Writes in the storage version need no webhook; the other version's
	// cache cannot follow them, so a consistent list there reads etcd and
	// fails as kube's does.
	if _, err := v1.Create(ctx, gadget("v1", "c", "size", 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = v2.List(ctx, metav1.ListOptions{})
	if apierrors.ReasonForError(err) != "StorageReadError" || statusCode(err) != http.StatusInternalServerError ||
		!strings.HasPrefix(err.Error(), "failed to read one or more gadgets.conv.example.com from the storage: StorageError: corrupt object") ||
		!strings.Contains(err.Error(), "(and 1 more)") {
		t.Errorf("list with the webhook down: %v", err)
	}
}

func statusCode(err error) int {
	if st, ok := err.(apierrors.APIStatus); ok {
		return int(st.Status().Code)
	}
	return 0
}

// startServiceConverter is a converter serving as the Service
// default/gadget-webhook would: its certificate names
// gadget-webhook.default.svc, signed by the returned CA (PEM).
func startServiceConverter(t *testing.T) (*converter, []byte) {
	t.Helper()
	pki, err := auth.EnsurePKI(t.TempDir(), []string{"gadget-webhook.default.svc"})
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(pki.ServingCert, pki.ServingKey)
	if err != nil {
		t.Fatal(err)
	}
	// An EndpointSlice may not name a loopback address: listen on one of
	// the machine's others.
	ip := hostIP(t)
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	c := &converter{calls: map[string]int{}}
	c.srv = httptest.NewUnstartedServer(http.HandlerFunc(c.serve))
	c.srv.Listener.Close()
	c.srv.Listener = ln
	c.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	c.srv.StartTLS()
	t.Cleanup(c.srv.Close)
	return c, pki.CACert
}

// A conversion webhook named by a Service is reached at the Service's
// endpoint, here a local server registered in an EndpointSlice.
func TestConversionWebhookService(t *testing.T) {
	conv, ca := startServiceConverter(t)
	srv, _ := start(t, "")
	cfg := &rest.Config{Host: srv.URL()}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	u, err := url.Parse(conv.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Services("default").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "gadget-webhook"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 443, TargetPort: intstr.FromInt32(int32(port))}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.DiscoveryV1().EndpointSlices("default").Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "gadget-webhook", Labels: map[string]string{discoveryv1.LabelServiceName: "gadget-webhook"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{u.Hostname()}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Port: ptr.To(int32(port))}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	crd := gadgetCRD(conv)
	crd["spec"].(map[string]any)["conversion"] = webhookConversion(map[string]any{
		"service":  map[string]any{"namespace": "default", "name": "gadget-webhook", "path": "/convert"},
		"caBundle": base64.StdEncoding.EncodeToString(ca),
	}, "v1")
	createEstablished(ctx, t, dc, crd)
	gvr := schema.GroupVersionResource{Group: "conv.example.com", Resource: "gadgets"}
	gvr.Version = "v1"
	if _, err := dc.Resource(gvr).Namespace("default").Create(ctx, gadget("v1", "a", "size", 3), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gvr.Version = "v2"
	// The resolver's informers may still be catching up with the
	// Service: the first conversions can fail.
	eventually(t, 10*time.Second, func() error {
		got, err := dc.Resource(gvr).Namespace("default").Get(ctx, "a", metav1.GetOptions{})
		if err != nil {
			return err
		}
		wantField(t, "get through a service webhook", got, "v2", "replicas", 3)
		return nil
	})
	if conv.callsTo("conv.example.com/v2") == 0 {
		t.Error("the webhook was never called")
	}
}

// hostIP is a non-loopback IPv4 address of this machine; the test is
// skipped without one.
func hostIP(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Skip(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	t.Skip("no non-loopback IPv4 address")
	return ""
}

// Once a CRD is Established, its conversion webhook's caBundle must
// parse, as in kube; a new CRD may carry one that does not.
func TestConversionWebhookUpdateRules(t *testing.T) {
	conv := startConverter(t)
	srv, _ := start(t, "")
	dc, err := dynamic.NewForConfig(&rest.Config{Host: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	createEstablished(ctx, t, dc, gadgetCRD(conv))
	crdAt := srv.URL() + crdURL + "/gadgets.conv.example.com"
	for _, tc := range []struct{ patch, want string }{
		{`{"spec":{"conversion":{"webhook":{"clientConfig":{"caBundle":"Zm9v"}}}}}`,
			`spec.conversion.webhookClientConfig.caBundle: Invalid value: "Zm9v": unable to load root certificates: unable to parse bytes as PEM block`},
		{`{"spec":{"conversion":{"webhook":{"conversionReviewVersions":["v9"]}}}}`,
			`spec.conversion.conversionReviewVersions: Invalid value: ["v9"]: must include at least one of v1, v1beta1`},
	} {
		req, err := http.NewRequest("PATCH", crdAt, strings.NewReader(tc.patch))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/merge-patch+json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var st metav1.Status
		err = json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusUnprocessableEntity || !strings.HasSuffix(st.Message, tc.want) {
			t.Errorf("patch %s: %d %q, want 422 ending %q", tc.patch, resp.StatusCode, st.Message, tc.want)
		}
	}
}

// A restart while the conversion webhook is down serves the storage
// version at once and keeps other CRDs' statuses moving; the converted
// version answers kube's error until the webhook is back.
func TestConversionWebhookDownAtStart(t *testing.T) {
	conv := startConverter(t)
	dir := t.TempDir()
	srv, stop := start(t, dir)
	dc, err := dynamic.NewForConfig(&rest.Config{Host: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	createEstablished(ctx, t, dc, gadgetCRD(conv))
	gvr := schema.GroupVersionResource{Group: "conv.example.com", Version: "v1", Resource: "gadgets"}
	if _, err := dc.Resource(gvr).Namespace("default").Create(ctx, gadget("v1", "a", "size", 3), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	stop()
	conv.srv.Close()

	srv, _ = start(t, dir)
	if dc, err = dynamic.NewForConfig(&rest.Config{Host: srv.URL()}); err != nil {
		t.Fatal(err)
	}
	if _, err := dc.Resource(gvr).Namespace("default").Get(ctx, "a", metav1.GetOptions{}); err != nil {
		t.Fatalf("storage version after a restart: %v", err)
	}
	gvr.Version = "v2"
	if _, err := dc.Resource(gvr).Namespace("default").Get(ctx, "a", metav1.GetOptions{}); !apierrors.IsInternalError(err) {
		t.Errorf("converted version with the webhook down: %v", err)
	}
	crds := dc.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	if _, err := crds.Create(ctx, &unstructured.Unstructured{Object: toUnstructured(t, widgetCRD("v1"))}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, func() error {
		got, err := crds.Get(ctx, "widgets.example.com", metav1.GetOptions{})
		if err != nil {
			return err
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conds {
			if m := c.(map[string]any); m["type"] == "Established" && m["status"] == "True" {
				return nil
			}
		}
		return context.DeadlineExceeded
	})
}
