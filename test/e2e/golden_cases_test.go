package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apiextensionsscheme "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/scheme"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"
)

// The golden corpus: testdata/golden/<group>/<resource>.yaml holds
// manifests of one resource ("core" is the core group), one case per
// YAML document; testdata/golden/<group>/<resource>.kube.yaml holds
// kube-apiserver 1.37's answers to creating them, normalized, as
// TestGoldenCapture recorded them; testdata/golden/kubectl.kube.yaml
// holds its answers to kubectl on a sample of them.
const (
	goldenDir = "testdata/golden"
	// goldenAnswersSuffix ends the name of a file of kube's answers.
	goldenAnswersSuffix = ".kube.yaml"
	// goldenNamespace is where the namespaced cases without a namespace
	// of their own are created.
	goldenNamespace = "golden-kinds"
	// goldenRefusedPrefix starts the name of every case kube refuses.
	goldenRefusedPrefix = "bad-"
	// goldenTimeout bounds each request of the golden tests and each
	// wait for an object to be gone.
	goldenTimeout = 30 * time.Second
)

// goldenCase is one manifest of the corpus.
type goldenCase struct {
	// file is the manifest file's path under goldenDir, e.g.
	// "apps/deployments.yaml"; group and resource come from it.
	file, group, resource string
	// name is the manifest's metadata.name, or its generateName.
	name string
	// manifest is the document as written, in JSON.
	manifest []byte
	obj      *unstructured.Unstructured
}

// id names the case in messages and in the known differences.
func (c goldenCase) id() string { return c.group + "/" + c.resource + "/" + c.name }

// refused reports whether kube refuses the case, by its name.
func (c goldenCase) refused() bool { return strings.HasPrefix(c.name, goldenRefusedPrefix) }

// answersFile is the path of the file of kube's answers to the case's
// file.
func (c goldenCase) answersFile() string {
	return filepath.Join(goldenDir, strings.TrimSuffix(c.file, ".yaml")+goldenAnswersSuffix)
}

// loadGoldenCases reads every manifest of the corpus, in file order and
// then document order.
func loadGoldenCases(t *testing.T) []goldenCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(goldenDir, "*", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []goldenCase
	for _, path := range files {
		if strings.HasSuffix(path, goldenAnswersSuffix) {
			continue
		}
		rel, err := filepath.Rel(goldenDir, path)
		if err != nil {
			t.Fatal(err)
		}
		group, resource := filepath.Dir(rel), strings.TrimSuffix(filepath.Base(rel), ".yaml")
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			js, err := yaml.YAMLToJSON(doc)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if string(js) == "null" {
				continue // only comments
			}
			obj := &unstructured.Unstructured{}
			if err := obj.UnmarshalJSON(js); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			name := obj.GetName()
			if name == "" {
				name = obj.GetGenerateName()
			}
			cases = append(cases, goldenCase{file: rel, group: group, resource: resource, name: name, manifest: js, obj: obj})
		}
	}
	if len(cases) == 0 {
		t.Fatalf("no cases under %s", goldenDir)
	}
	return cases
}

// goldenNamespaces are the namespaces the cases are created in.
func goldenNamespaces(cases []goldenCase) []string {
	set := map[string]bool{goldenNamespace: true}
	for _, c := range cases {
		if ns := c.obj.GetNamespace(); ns != "" {
			set[ns] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// goldenAnswer is a server's answer to creating one case, normalized.
type goldenAnswer struct {
	Case string `json:"case"`
	// Code is the HTTP status code.
	Code int `json:"code"`
	// Warnings are the texts of the answer's Warning headers.
	Warnings []string `json:"warnings,omitempty"`
	// Object is the created object, for a success.
	Object map[string]any `json:"object,omitempty"`
	// Status is the refusal, for a failure, without its type and list
	// metadata.
	Status map[string]any `json:"status,omitempty"`
	// Protobuf is the answer to the same manifest created through
	// client-go's typed Go types in protobuf, when it is not the same
	// as this one: protobuf carries no apiVersion and kind of an
	// embedded object, such as a StatefulSet's volume claim templates.
	Protobuf *goldenAnswer `json:"protobuf,omitempty"`
}

// forProtobuf is the answer expected through the typed protobuf path.
func (a goldenAnswer) forProtobuf() goldenAnswer {
	if a.Protobuf != nil {
		return *a.Protobuf
	}
	a.Protobuf = nil
	return a
}

// readGoldenYAML reads a file of recorded answers into v.
func readGoldenYAML(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (record kube's answers with TestGoldenCapture)", err)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// goldenTarget is a server the cases are created on, through clients
// that share one HTTP client, built from one rest.Config.
type goldenTarget struct {
	cfg    *rest.Config
	hc     *http.Client
	dyn    dynamic.Interface
	mapper meta.RESTMapper
	rec    *exchangeRecorder
}

// newGoldenTarget builds the clients of a target from cfg, reading its
// discovery once. A cleanup closes their idle connections.
func newGoldenTarget(t *testing.T, cfg *rest.Config) *goldenTarget {
	t.Helper()
	rec := &exchangeRecorder{}
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = goldenTimeout
	cfg.QPS = -1
	cfg.WarningHandler = rest.NoWarnings{} // recorded from the headers
	// What client-go's clients default to, so that managedFields name
	// the test binary as their manager.
	cfg.UserAgent = rest.DefaultKubernetesUserAgent()
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &recordingTransport{rt: rt, rec: rec} })
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { utilnet.CloseIdleConnectionsFor(hc.Transport) })
	dc, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, hc)
	if err != nil {
		t.Fatal(err)
	}
	groups, err := restmapper.GetAPIGroupResources(dc)
	if err != nil {
		t.Fatalf("discovery: %v", err)
	}
	dyn, err := dynamic.NewForConfigAndClient(cfg, hc)
	if err != nil {
		t.Fatal(err)
	}
	return &goldenTarget{cfg: cfg, hc: hc, dyn: dyn, mapper: restmapper.NewDiscoveryRESTMapper(groups), rec: rec}
}

// where returns the resource of a case and the namespace it is created
// in ("" for a cluster-scoped kind), checking that the file is named
// after the resource the kind is served as.
func (g *goldenTarget) where(t *testing.T, c goldenCase) (*meta.RESTMapping, string) {
	t.Helper()
	gvk := c.obj.GroupVersionKind()
	m, err := g.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		t.Fatalf("%s: %v", c.id(), err)
	}
	group := m.Resource.Group
	if group == "" {
		group = "core"
	}
	if group != c.group || m.Resource.Resource != c.resource {
		t.Fatalf("%s: %s is served as %s, not as the file's name says", c.id(), gvk, m.Resource)
	}
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		return m, ""
	}
	if ns := c.obj.GetNamespace(); ns != "" {
		return m, ns
	}
	return m, goldenNamespace
}

// createNamespaces creates the cases' namespaces; ones that exist
// already are fine.
func (g *goldenTarget) createNamespaces(ctx context.Context, t *testing.T, names []string) {
	t.Helper()
	for _, name := range names {
		ns := &unstructured.Unstructured{Object: namespace(name)}
		if _, err := g.dyn.Resource(namespacesGVR).Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("create namespace %s: %v", name, err)
		}
	}
}

var namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// createJSON creates a case with the dynamic client, in JSON, and
// returns the normalized answer and the created object's name.
func (g *goldenTarget) createJSON(ctx context.Context, t *testing.T, c goldenCase) (goldenAnswer, string) {
	t.Helper()
	m, ns := g.where(t, c)
	g.rec.reset()
	created, err := g.dyn.Resource(m.Resource).Namespace(ns).Create(ctx, c.obj.DeepCopy(), metav1.CreateOptions{})
	ex := g.rec.last()
	if ex.requestType != "application/json" || !strings.HasPrefix(ex.responseType, "application/json") {
		t.Errorf("%s: the dynamic client sent %q and got %q, want JSON both ways", c.id(), ex.requestType, ex.responseType)
	}
	a := goldenAnswer{Case: c.name, Code: ex.code, Warnings: ex.warnings}
	if err != nil {
		a.Status = statusOf(t, c, err)
		return a, ""
	}
	a.Object = normalizeGolden(created.Object)
	return a, created.GetName()
}

// createProtobuf creates a case as client-go's typed clients do: the
// manifest decoded into client-go's Go type, sent and answered in
// protobuf. ok is false for a kind client-go's scheme does not know.
func (g *goldenTarget) createProtobuf(ctx context.Context, t *testing.T, c goldenCase) (a goldenAnswer, name string, ok bool) {
	t.Helper()
	codecs := clientscheme.Codecs
	if c.group == "apiextensions.k8s.io" {
		// CustomResourceDefinitions are the apiextensions clientset's,
		// which sends protobuf as client-go's does.
		codecs = apiextensionsscheme.Codecs
	}
	obj, gvk, err := codecs.UniversalDeserializer().Decode(c.manifest, nil, nil)
	if runtime.IsNotRegisteredError(err) {
		return goldenAnswer{}, "", false
	}
	if err != nil {
		t.Fatalf("%s: decode with client-go's scheme: %v", c.id(), err)
	}
	m, ns := g.where(t, c)
	cfg := rest.CopyConfig(g.cfg)
	cfg.GroupVersion = &schema.GroupVersion{Group: gvk.Group, Version: gvk.Version}
	cfg.APIPath = "/apis"
	if gvk.Group == "" {
		cfg.APIPath = "/api"
	}
	cfg.NegotiatedSerializer = codecs.WithoutConversion()
	// What kubernetes.NewForConfig sets when the config names none.
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	rc, err := rest.RESTClientForConfigAndClient(cfg, g.hc)
	if err != nil {
		t.Fatal(err)
	}
	g.rec.reset()
	res := rc.Post().NamespaceIfScoped(ns, ns != "").Resource(m.Resource.Resource).Body(obj).Do(ctx)
	out, err := res.Get()
	ex := g.rec.last()
	if ex.requestType != runtime.ContentTypeProtobuf || ex.responseType != runtime.ContentTypeProtobuf {
		t.Errorf("%s: the typed client sent %q and got %q, want protobuf both ways", c.id(), ex.requestType, ex.responseType)
	}
	a = goldenAnswer{Case: c.name, Code: ex.code, Warnings: ex.warnings}
	if err != nil {
		a.Status = statusOf(t, c, err)
		return a, "", true
	}
	out.GetObjectKind().SetGroupVersionKind(*gvk)
	m2, err := runtime.DefaultUnstructuredConverter.ToUnstructured(out)
	if err != nil {
		t.Fatal(err)
	}
	// Through JSON, so that numbers are float64 as in the other answers.
	var created map[string]any
	if err := json.Unmarshal(mustJSON(t, m2), &created); err != nil {
		t.Fatal(err)
	}
	return goldenAnswer{Case: c.name, Code: ex.code, Warnings: ex.warnings, Object: normalizeGolden(created)}, out.(metav1.Object).GetName(), true
}

// statusOf returns the Status of a refusal, without its type and list
// metadata, failing the test for an error that is not one.
func statusOf(t *testing.T, c goldenCase, err error) map[string]any {
	t.Helper()
	var se apierrors.APIStatus
	if !errors.As(err, &se) {
		t.Fatalf("%s: create: %v", c.id(), err)
	}
	var st map[string]any
	if err := json.Unmarshal(mustJSON(t, se.Status()), &st); err != nil {
		t.Fatal(err)
	}
	delete(st, "kind")
	delete(st, "apiVersion")
	delete(st, "metadata")
	return st
}

// remove deletes what a case created and waits until it is gone:
// finalizers no controller will remove are dropped first, and a
// namespace is finalized, as the reference server runs no controllers.
func (g *goldenTarget) remove(ctx context.Context, t *testing.T, c goldenCase, name string) {
	t.Helper()
	m, ns := g.where(t, c)
	ri := g.dyn.Resource(m.Resource).Namespace(ns)
	cur, err := ri.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return
	}
	if err != nil {
		t.Fatalf("%s: get %s: %v", c.id(), name, err)
	}
	if len(cur.GetFinalizers()) > 0 {
		if _, err := ri.Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
			t.Fatalf("%s: drop finalizers of %s: %v", c.id(), name, err)
		}
	}
	zero, background := int64(0), metav1.DeletePropagationBackground
	if err := ri.Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero, PropagationPolicy: &background}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("%s: delete %s: %v", c.id(), name, err)
	}
	if m.Resource == namespacesGVR {
		g.finalizeNamespace(ctx, t, name)
	}
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, goldenTimeout, true, func(ctx context.Context) (bool, error) {
		_, err := ri.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if err != nil {
		t.Fatalf("%s: %s is not gone %v after its deletion: %v", c.id(), name, goldenTimeout, err)
	}
}

// finalizeNamespace empties a deleted namespace's spec.finalizers, which
// only the namespace controller would otherwise do.
func (g *goldenTarget) finalizeNamespace(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	ns, err := g.dyn.Resource(namespacesGVR).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return
	}
	if err != nil {
		t.Fatalf("get namespace %s: %v", name, err)
	}
	unstructured.RemoveNestedField(ns.Object, "spec", "finalizers")
	if _, err := g.dyn.Resource(namespacesGVR).Update(ctx, ns, metav1.UpdateOptions{}, "finalize"); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		t.Fatalf("finalize namespace %s: %v", name, err)
	}
}

// deleteNamespaces deletes and finalizes the cases' namespaces.
func (g *goldenTarget) deleteNamespaces(ctx context.Context, t *testing.T, names []string) {
	t.Helper()
	for _, name := range names {
		if err := g.dyn.Resource(namespacesGVR).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete namespace %s: %v", name, err)
			continue
		}
		g.finalizeNamespace(ctx, t, name)
	}
}

// exchange is what the recorder saw of one request and its answer.
type exchange struct {
	requestType, responseType string
	code                      int
	warnings                  []string
}

// exchangeRecorder keeps the last exchange of a client; the golden tests
// make one request at a time.
type exchangeRecorder struct {
	mu sync.Mutex // mu protects ex
	ex exchange
}

// recordingTransport records each exchange through it into rec.
type recordingTransport struct {
	rt  http.RoundTripper
	rec *exchangeRecorder
}

// RoundTrip sends req and records it with its answer.
func (r *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.rt.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	ex := exchange{requestType: req.Header.Get("Content-Type"), responseType: resp.Header.Get("Content-Type"), code: resp.StatusCode}
	ws, _ := utilnet.ParseWarningHeaders(resp.Header.Values("Warning"))
	for _, w := range ws {
		ex.warnings = append(ex.warnings, w.Text)
	}
	r.rec.mu.Lock()
	defer r.rec.mu.Unlock()
	r.rec.ex = ex
	return resp, nil
}

// WrappedRoundTripper lets utilnet.CloseIdleConnectionsFor reach the
// transport below.
func (r *recordingTransport) WrappedRoundTripper() http.RoundTripper { return r.rt }

func (r *exchangeRecorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ex = exchange{}
}

func (r *exchangeRecorder) last() exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ex
}
