package endpoints

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/miniapi/miniapi/registry"
	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// acceptAggregated is what client-go's discovery client sends to /api and
// /apis: aggregated v2 first, then the legacy document.
const acceptAggregated = discovery.AcceptV2 + "," + discovery.AcceptV1

// decodeStrict decodes JSON into v, failing on fields v's type lacks, so
// the tests catch fields Kubernetes' types do not have.
func decodeStrict(t *testing.T, b []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode %T: %v: %s", v, err, b)
	}
}

func TestLegacyDiscovery(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		path  string
		check func(t *testing.T, body []byte)
	}{
		{"/api", func(t *testing.T, b []byte) {
			var v metav1.APIVersions
			decodeStrict(t, b, &v)
			if v.Kind != "APIVersions" || !slices.Equal(v.Versions, []string{"v1"}) || len(v.ServerAddressByClientCIDRs) != 1 {
				t.Errorf("APIVersions = %+v", v)
			}
		}},
		{"/apis", func(t *testing.T, b []byte) {
			var v metav1.APIGroupList
			decodeStrict(t, b, &v)
			var names []string
			for _, g := range v.Groups {
				names = append(names, g.Name+"="+g.PreferredVersion.GroupVersion)
			}
			if v.Kind != "APIGroupList" || !containsAll(names, "apps=apps/v1", "autoscaling=autoscaling/v2", "coordination.k8s.io=coordination.k8s.io/v1", "example.com=example.com/v1") {
				t.Errorf("groups = %v (%s)", names, b)
			}
		}},
		{"/apis/example.com", func(t *testing.T, b []byte) {
			var v metav1.APIGroup
			decodeStrict(t, b, &v)
			if v.Kind != "APIGroup" || v.APIVersion != "v1" || v.Name != "example.com" ||
				len(v.Versions) != 1 || v.Versions[0] != (metav1.GroupVersionForDiscovery{GroupVersion: "example.com/v1", Version: "v1"}) {
				t.Errorf("APIGroup = %+v", v)
			}
		}},
		{"/api/v1", func(t *testing.T, b []byte) {
			list := resourceListOf(t, b, "v1")
			// As kube-apiserver 1.37.1 answers it: no apiVersion.
			if bytes.Contains(b, []byte(`"apiVersion"`)) {
				t.Errorf("/api/v1 has an apiVersion: %.120s", b)
			}
			ns := list["namespaces"]
			if ns.Namespaced || ns.SingularName != "namespace" || ns.Kind != "Namespace" ||
				!slices.Equal(ns.ShortNames, []string{"ns"}) || !slices.Equal(ns.Verbs, noCollectionDeleteVerbs) || ns.StorageVersionHash == "" {
				t.Errorf("namespaces = %+v", ns)
			}
			st, ok := list["namespaces/status"]
			if !ok || st.Kind != "Namespace" || !slices.Equal(st.Verbs, []string{"get", "patch", "update"}) || st.SingularName != "" {
				t.Errorf("namespaces/status = %+v", st)
			}
			cm := list["configmaps"]
			if !cm.Namespaced || !slices.Equal(cm.ShortNames, []string{"cm"}) || cm.SingularName != "configmap" {
				t.Errorf("configmaps = %+v", cm)
			}
			for _, name := range []string{"events", "secrets"} {
				if _, ok := list[name]; !ok {
					t.Errorf("%s missing", name)
				}
			}
			if _, ok := list["configmaps/status"]; ok {
				t.Error("configmaps has no status subresource, but one is listed")
			}
		}},
		{"/apis/coordination.k8s.io/v1", func(t *testing.T, b []byte) {
			list := resourceListOf(t, b, "coordination.k8s.io/v1")
			if l := list["leases"]; !l.Namespaced || l.Kind != "Lease" || l.SingularName != "lease" {
				t.Errorf("leases = %+v", l)
			}
		}},
		{"/apis/example.com/v1", func(t *testing.T, b []byte) {
			list := resourceListOf(t, b, "example.com/v1")
			// A custom resource's verbs and subresources in the order of
			// kube's CRD discovery.
			if w := list["widgets"]; !slices.Equal(w.ShortNames, []string{"wd"}) || w.Kind != "Widget" ||
				!slices.Equal(w.Verbs, []string{"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"}) {
				t.Errorf("widgets = %+v", w)
			}
			if _, ok := list["widgets/status"]; !ok {
				t.Error("widgets/status missing")
			}
		}},
	}
	scaled := registry.Type{Group: "scaled.example.org", Version: "v1", Kind: "Scaled", Plural: "scaleds",
		Strategy: registry.GenericStrategy{Status: true}, Scale: &registry.ScaleSubresource{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas"}}
	// One whose CRD is being deleted lists only the verbs kube's does.
	ending := registry.Type{Group: "scaled.example.org", Version: "v1", Kind: "Ending", Plural: "endings", CreatesRefused: true}
	for _, typ := range []registry.Type{scaled, ending} {
		if err := f.reg.Add(typ); err != nil {
			t.Fatal(err)
		}
	}
	tests = append(tests, struct {
		path  string
		check func(t *testing.T, body []byte)
	}{"/apis/scaled.example.org/v1", func(t *testing.T, b []byte) {
		var v metav1.APIResourceList
		decodeStrict(t, b, &v)
		var names []string
		for _, r := range v.APIResources {
			names = append(names, r.Name)
			if r.Name == "endings" && !slices.Equal(r.Verbs, []string{"delete", "deletecollection", "get", "list", "watch"}) {
				t.Errorf("a terminating custom resource's verbs: %v", r.Verbs)
			}
		}
		if !slices.Equal(names, []string{"endings", "scaleds", "scaleds/status", "scaleds/scale"}) {
			t.Errorf("listed as %v, want kube's CRD order", names)
		}
	}})
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			r := f.Do("GET", tc.path, nil)
			if r.Code != 200 || r.Header.Get("Content-Type") != "application/json" || r.Header.Get("Vary") != "Accept" {
				t.Fatalf("code %d, headers %v: %s", r.Code, r.Header, r.Body)
			}
			tc.check(t, r.Body)
		})
	}
	for _, path := range []string{"/apis/nope.example.com", "/apis/example.com/v9", "/api/v2"} {
		f.Status(f.Do("GET", path, nil), 404, "NotFound")
	}
}

// resourceListOf decodes an APIResourceList and indexes it by name.
func resourceListOf(t *testing.T, b []byte, gv string) map[string]metav1.APIResource {
	t.Helper()
	var v metav1.APIResourceList
	decodeStrict(t, b, &v)
	if v.Kind != "APIResourceList" || v.GroupVersion != gv {
		t.Fatalf("kind %q groupVersion %q", v.Kind, v.GroupVersion)
	}
	out := map[string]metav1.APIResource{}
	for _, r := range v.APIResources {
		out[r.Name] = r
	}
	return out
}

// aggregated fetches an aggregated discovery document and decodes it.
func (f *fixture) aggregated(path string) (apidiscoveryv2.APIGroupDiscoveryList, response) {
	f.t.Helper()
	r := f.Do("GET", path, nil, "Accept", acceptAggregated)
	if r.Code != 200 {
		f.t.Fatalf("GET %s = %d: %s", path, r.Code, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList" {
		f.t.Fatalf("Content-Type = %q", ct)
	}
	var list apidiscoveryv2.APIGroupDiscoveryList
	decodeStrict(f.t, r.Body, &list)
	if list.Kind != "APIGroupDiscoveryList" || list.APIVersion != "apidiscovery.k8s.io/v2" {
		f.t.Fatalf("kind %q apiVersion %q", list.Kind, list.APIVersion)
	}
	return list, r
}

// aggregatedResources indexes an aggregated document's resources by
// "group/version/resource".
func aggregatedResources(list apidiscoveryv2.APIGroupDiscoveryList) map[string]apidiscoveryv2.APIResourceDiscovery {
	out := map[string]apidiscoveryv2.APIResourceDiscovery{}
	for _, g := range list.Items {
		for _, v := range g.Versions {
			for _, r := range v.Resources {
				out[g.Name+"/"+v.Version+"/"+r.Resource] = r
			}
		}
	}
	return out
}

func TestAggregatedDiscovery(t *testing.T) {
	f := newFixture(t)
	core, r := f.aggregated("/api")
	if r.Header.Get("ETag") == "" || r.Header.Get("Vary") != "Accept" || r.Header.Get("Cache-Control") != "public" {
		t.Errorf("headers = %v", r.Header)
	}
	if len(core.Items) != 1 || core.Items[0].Name != "" || len(core.Items[0].Versions) != 1 ||
		core.Items[0].Versions[0].Version != "v1" || core.Items[0].Versions[0].Freshness != apidiscoveryv2.DiscoveryFreshnessCurrent {
		t.Fatalf("core items = %+v", core.Items)
	}
	res := aggregatedResources(core)
	cm := res["/v1/configmaps"]
	if cm.Scope != apidiscoveryv2.ScopeNamespace || cm.SingularResource != "configmap" || !slices.Equal(cm.ShortNames, []string{"cm"}) ||
		!slices.Equal(cm.Verbs, resourceVerbs) || cm.ResponseKind == nil || *cm.ResponseKind != (metav1.GroupVersionKind{Kind: "ConfigMap"}) ||
		len(cm.Subresources) != 0 {
		t.Errorf("configmaps = %+v", cm)
	}
	ns := res["/v1/namespaces"]
	if ns.Scope != apidiscoveryv2.ScopeCluster || len(ns.Subresources) != 2 ||
		ns.Subresources[0].Subresource != "finalize" || !slices.Equal(ns.Subresources[0].Verbs, []string{"update"}) ||
		ns.Subresources[1].Subresource != "status" || !slices.Equal(ns.Subresources[1].Verbs, []string{"get", "patch", "update"}) ||
		ns.Subresources[1].ResponseKind.Kind != "Namespace" {
		t.Errorf("namespaces = %+v", ns)
	}

	apis, _ := f.aggregated("/apis")
	var groups []string
	for _, g := range apis.Items {
		groups = append(groups, g.Name)
	}
	if !containsAll(groups, "apps", "coordination.k8s.io", "example.com") {
		t.Fatalf("groups = %v", groups)
	}
	res = aggregatedResources(apis)
	// As kube-apiserver, a built-in kind's response kind leaves out its
	// own group and version.
	if l := res["coordination.k8s.io/v1/leases"]; l.ResponseKind == nil || *l.ResponseKind != (metav1.GroupVersionKind{Kind: "Lease"}) || l.SingularResource != "lease" {
		t.Errorf("leases = %+v", l)
	}
	if w := res["example.com/v1/widgets"]; len(w.Subresources) != 1 || !slices.Equal(w.ShortNames, []string{"wd"}) {
		t.Errorf("widgets = %+v", w)
	}
}

// kubeGroupOrder is the order of /apis on kube-apiserver 1.37.1 serving
// its default groups and one CRD group (example.com), as the reference
// server answered it (../shared/reference, 2026-11-29), legacy and
// aggregated alike: its aggregator's own group first, then by the
// APIServices' group priorities, CRDs' last.
var kubeGroupOrder = []string{"apiregistration.k8s.io", "apps", "events.k8s.io", "authentication.k8s.io",
	"authorization.k8s.io", "autoscaling", "batch", "certificates.k8s.io", "networking.k8s.io", "policy",
	"rbac.authorization.k8s.io", "storage.k8s.io", "admissionregistration.k8s.io", "apiextensions.k8s.io",
	"scheduling.k8s.io", "coordination.k8s.io", "node.k8s.io", "discovery.k8s.io", "resource.k8s.io",
	"flowcontrol.apiserver.k8s.io", "storagemigration.k8s.io", "example.com"}

// TestDiscoveryGroupOrder checks that /apis lists groups, and each
// group its versions, in kube-apiserver's order, in both discovery
// forms: clients that pick the first group serving a resource name
// pick what they would on kube.
func TestDiscoveryGroupOrder(t *testing.T) {
	f := newFixture(t)
	r := f.Do("GET", "/apis", nil)
	var legacy metav1.APIGroupList
	decodeStrict(t, r.Body, &legacy)
	var names, autoscaling []string
	for _, g := range legacy.Groups {
		names = append(names, g.Name)
		if g.Name == "autoscaling" {
			for _, v := range g.Versions {
				autoscaling = append(autoscaling, v.Version)
			}
		}
	}
	// The fixture serves no review resources (no authentication), so
	// neither authentication.k8s.io nor authorization.k8s.io.
	want := slices.DeleteFunc(slices.Clone(kubeGroupOrder), func(g string) bool {
		return g == "authentication.k8s.io" || g == "authorization.k8s.io"
	})
	if !slices.Equal(names, want) {
		t.Errorf("legacy /apis groups:\n got %v\nwant %v", names, want)
	}
	if !slices.Equal(autoscaling, []string{"v2", "v1"}) {
		t.Errorf("autoscaling versions %v, want [v2 v1]", autoscaling)
	}
	apis, _ := f.aggregated("/apis")
	names = nil
	for _, g := range apis.Items {
		names = append(names, g.Name)
	}
	if !slices.Equal(names, want) {
		t.Errorf("aggregated /apis groups:\n got %v\nwant %v", names, want)
	}
}

// TestStorageVersionHash checks discovery's storageVersionHash against
// kube-apiserver 1.37.1's answers for the same resources (the reference
// server, 2026-11-29): from the version objects are stored in, which is
// not always the one served, and none for resources nothing is stored
// for.
func TestStorageVersionHash(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct{ gv, path, resource, want string }{
		{"v1", "/api/v1", "configmaps", "qFsyl6wFWjQ="},
		{"v1", "/api/v1", "bindings", ""},
		{"v1", "/api/v1", "componentstatuses", ""},
		{"autoscaling/v1", "/apis/autoscaling/v1", "horizontalpodautoscalers", "qwQve8ut294="}, // stored as v2
		{"events.k8s.io/v1", "/apis/events.k8s.io/v1", "events", "r2yiGXH7wu8="},               // stored as core v1 Events
	} {
		r := f.Do("GET", tc.path, nil)
		res, ok := resourceListOf(t, r.Body, tc.gv)[tc.resource]
		if !ok || res.StorageVersionHash != tc.want {
			t.Errorf("%s %s: storageVersionHash %q (listed: %v), want %q", tc.gv, tc.resource, res.StorageVersionHash, ok, tc.want)
		}
	}
}

// TestDiscoveryNegotiation checks which Accept headers get the aggregated
// document, as kube-apiserver 1.37.1 answers them: any clause asking for
// an apidiscovery.k8s.io/v2 APIGroupDiscoveryList wins over those that
// do not, whatever their order or q (kube's negotiation tries the
// aggregated clauses first), in the format that clause names.
func TestDiscoveryNegotiation(t *testing.T) {
	f := newFixture(t)
	const v2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	tests := []struct {
		accept     string
		aggregated bool
	}{
		{"", false},
		{"application/json", false},
		{"*/*", false},
		{v2, true},
		{acceptAggregated, true},
		{v2 + ";profile=nopeer," + acceptAggregated, true},
		{"application/json; as=APIGroupDiscoveryList; v=v2; g=apidiscovery.k8s.io", true},
		{"application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json", false},
		{"application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList," + v2, true},
		{"application/json," + v2, true},
		{"application/json;q=0.5," + v2, true},
		{v2 + ";q=0," + "application/json", true},
	}
	for _, tc := range tests {
		t.Run(tc.accept, func(t *testing.T) {
			for _, path := range []string{"/api", "/apis"} {
				r := f.Do("GET", path, nil, "Accept", tc.accept)
				got := strings.Contains(r.Header.Get("Content-Type"), "APIGroupDiscoveryList")
				if r.Code != 200 || got != tc.aggregated {
					t.Errorf("%s: code %d, Content-Type %q, want aggregated %v", path, r.Code, r.Header.Get("Content-Type"), tc.aggregated)
				}
				// In the format of the clause that asked for it.
				if wantProto := strings.HasPrefix(tc.accept, "application/vnd.kubernetes.protobuf"); got && strings.HasPrefix(r.Header.Get("Content-Type"), "application/vnd.kubernetes.protobuf") != wantProto {
					t.Errorf("%s: Content-Type %q, want protobuf %v", path, r.Header.Get("Content-Type"), wantProto)
				}
			}
		})
	}
}

func TestAggregatedDiscoveryETag(t *testing.T) {
	f := newFixture(t)
	_, first := f.aggregated("/apis")
	etag := first.Header.Get("ETag")
	if len(etag) < 3 || etag[0] != '"' {
		t.Fatalf("ETag = %q", etag)
	}
	for _, inm := range []string{etag, "W/" + etag, `"other", ` + etag} {
		r := f.Do("GET", "/apis", nil, "Accept", acceptAggregated, "If-None-Match", inm)
		if r.Code != http.StatusNotModified || len(r.Body) != 0 || r.Header.Get("ETag") != etag {
			t.Errorf("If-None-Match %s: code %d, ETag %q, body %q", inm, r.Code, r.Header.Get("ETag"), r.Body)
		}
	}
	if r := f.Do("GET", "/apis", nil, "Accept", acceptAggregated, "If-None-Match", `"stale"`); r.Code != 200 {
		t.Errorf("stale ETag: code %d", r.Code)
	}
	// /api has its own document and tag.
	if _, core := f.aggregated("/api"); core.Header.Get("ETag") == etag {
		t.Error("/api and /apis share an ETag")
	}
	// A new type changes the document, so the old tag no longer matches.
	if err := f.reg.Add(toyType("v1")); err != nil {
		t.Fatal(err)
	}
	r := f.Do("GET", "/apis", nil, "Accept", acceptAggregated, "If-None-Match", etag)
	if r.Code != 200 || r.Header.Get("ETag") == etag {
		t.Fatalf("after adding a type: code %d, ETag %q", r.Code, r.Header.Get("ETag"))
	}
}

// toyType is a cluster-scoped type added and removed while serving.
func toyType(version string) registry.Type {
	return registry.Type{Group: "toys.example.org", Version: version, Kind: "Gadget", Plural: "gadgets",
		ShortNames: []string{"gd"}, Categories: []string{"all"}}
}

// TestDiscoveryFollowsRegistry adds and removes types while serving and
// checks both discovery forms change at once.
func TestDiscoveryFollowsRegistry(t *testing.T) {
	f := newFixture(t)
	for _, v := range []string{"v1alpha1", "v1", "v1beta1"} {
		if err := f.reg.Add(toyType(v)); err != nil {
			t.Fatal(err)
		}
	}
	group := f.Must(200, "GET", "/apis/toys.example.org", nil)
	if pv := field(group, "preferredVersion.version"); pv != "v1" {
		t.Errorf("preferred version %v, want v1", pv)
	}
	var versions []string
	for _, v := range group["versions"].([]any) {
		versions = append(versions, v.(map[string]any)["version"].(string))
	}
	if !slices.Equal(versions, []string{"v1", "v1beta1", "v1alpha1"}) {
		t.Errorf("versions %v, want Kubernetes' preference order", versions)
	}
	apis, _ := f.aggregated("/apis")
	gd, ok := aggregatedResources(apis)["toys.example.org/v1/gadgets"]
	if !ok || gd.Scope != apidiscoveryv2.ScopeCluster || !slices.Equal(gd.Categories, []string{"all"}) {
		t.Fatalf("gadgets = %+v (present %v)", gd, ok)
	}
	list := resourceListOf(t, f.Do("GET", "/apis/toys.example.org/v1beta1", nil).Body, "toys.example.org/v1beta1")
	if g := list["gadgets"]; g.Namespaced || !slices.Equal(g.Categories, []string{"all"}) {
		t.Errorf("legacy gadgets = %+v", g)
	}

	for _, v := range []string{"v1alpha1", "v1", "v1beta1"} {
		if err := f.reg.Remove(registry.GVR{Group: "toys.example.org", Version: v, Resource: "gadgets"}); err != nil {
			t.Fatal(err)
		}
	}
	f.Status(f.Do("GET", "/apis/toys.example.org", nil), 404, "NotFound")
	f.Status(f.Do("GET", "/apis/toys.example.org/v1", nil), 404, "NotFound")
	apis, _ = f.aggregated("/apis")
	for key := range aggregatedResources(apis) {
		if strings.HasPrefix(key, "toys.example.org/") {
			t.Errorf("%s still listed after removal", key)
		}
	}
	if strings.Contains(string(f.Do("GET", "/apis", nil).Body), "toys.example.org") {
		t.Error("legacy /apis still lists the removed group")
	}
}

// recorder notes the Accept header and answer Content-Type of each
// request a client makes.
type recorder struct {
	mu   sync.Mutex
	seen []string // "path accept -> content-type"
	rt   http.RoundTripper
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.rt.RoundTrip(req)
	if err == nil {
		r.mu.Lock()
		r.seen = append(r.seen, req.URL.Path+" "+req.Header.Get("Accept")+" -> "+resp.Header.Get("Content-Type"))
		r.mu.Unlock()
	}
	return resp, err
}

// paths returns the request paths seen.
func (r *recorder) paths() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, s := range r.seen {
		p, _, _ := strings.Cut(s, " ")
		out = append(out, p)
	}
	return out
}

// TestDiscoveryClient drives client-go's discovery client against the
// handler, aggregated (two requests) and legacy (one per group version),
// and maps kubectl-style short names through a REST mapper built from it.
func TestDiscoveryClient(t *testing.T) {
	f := newFixture(t)
	for _, legacy := range []bool{false, true} {
		t.Run(map[bool]string{false: "aggregated", true: "legacy"}[legacy], func(t *testing.T) {
			rec := &recorder{}
			cfg := &rest.Config{Host: f.url, WrapTransport: func(rt http.RoundTripper) http.RoundTripper {
				rec.rt = rt
				return rec
			}}
			dc, err := discovery.NewDiscoveryClientForConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			dc.UseLegacyDiscovery = legacy
			groups, resources, err := dc.ServerGroupsAndResources()
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, g := range groups {
				names = append(names, g.Name+"/"+g.PreferredVersion.Version)
			}
			if !containsAll(names, "/v1", "apps/v1", "coordination.k8s.io/v1", "example.com/v1") {
				t.Errorf("groups = %v", names)
			}
			found := map[string]metav1.APIResource{}
			for _, list := range resources {
				for _, r := range list.APIResources {
					found[list.GroupVersion+"/"+r.Name] = r
				}
			}
			for _, want := range []string{"v1/namespaces", "v1/namespaces/status", "v1/configmaps", "v1/secrets", "v1/events",
				"coordination.k8s.io/v1/leases", "example.com/v1/widgets", "example.com/v1/widgets/status"} {
				if _, ok := found[want]; !ok {
					t.Errorf("%s missing from %v", want, found)
				}
			}
			if cm := found["v1/configmaps"]; !cm.Namespaced || cm.Kind != "ConfigMap" || cm.SingularName != "configmap" {
				t.Errorf("configmaps = %+v", cm)
			}
			paths := rec.paths()
			perGV := slices.Contains(paths, "/api/v1")
			if perGV != legacy {
				t.Errorf("requests %v: per-group-version fetches %v, want %v", rec.seen, perGV, legacy)
			}

			groupResources, err := restmapper.GetAPIGroupResources(dc)
			if err != nil {
				t.Fatal(err)
			}
			mapper := restmapper.NewShortcutExpander(restmapper.NewDiscoveryRESTMapper(groupResources), dc, nil)
			for short, kind := range map[string]string{"cm": "ConfigMap", "ns": "Namespace", "wd": "Widget", "lease": "Lease"} {
				gvk, err := mapper.KindFor(schema.GroupVersionResource{Resource: short})
				if err != nil || gvk.Kind != kind {
					t.Errorf("KindFor(%s) = %v, %v; want %s", short, gvk, err, kind)
				}
			}
		})
	}
}

// containsAll reports whether every one of want is in have.
func containsAll(have []string, want ...string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// TestDiscoveryTrailingSlash serves the discovery documents and /version
// at their paths with a trailing slash too, as kube-apiserver does.
func TestDiscoveryTrailingSlash(t *testing.T) {
	f := newFixture(t)
	for _, p := range []string{"/api", "/apis", "/apis/apps", "/api/v1", "/apis/apps/v1", "/version"} {
		want := f.Must(200, "GET", p, nil)
		got := f.Must(200, "GET", p+"/", nil)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("GET %s/ answered %v, want what %s answers: %v", p, got, p, want)
		}
	}
	// A resource path with a trailing slash is still the resource.
	f.Must(200, "GET", "/api/v1/namespaces/", nil)
	f.Status(f.Do("GET", "/apis/nothing/", nil), 404, "NotFound")
	f.Status(f.Do("GET", "/apis/apps/v9/", nil), 404, "NotFound")
}
