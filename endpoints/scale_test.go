package endpoints

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	"github.com/miniapi/miniapi/registry"
	"google.golang.org/protobuf/proto"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/scale"
	openapiproto "k8s.io/kube-openapi/pkg/util/proto"
)

// scaledType has a /scale subresource (and /status), as a resources file
// or CRD declares one.
var scaledType = registry.Type{
	Group: "example.com", Version: "v1", Kind: "Doohickey", Plural: "doohickeys", Namespaced: true,
	Strategy: registry.GenericStrategy{Status: true},
	Scale: &registry.ScaleSubresource{
		SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas", LabelSelectorPath: ".status.selector",
	},
}

// newScaleFixture is the endpoints fixture serving doohickeys too, with
// namespace ns1 and doohickey g1 (3 replicas desired, 2 observed).
func newScaleFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t)
	if err := f.reg.Add(scaledType); err != nil {
		t.Fatal(err)
	}
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	f.Must(201, "POST", doohickeys, map[string]any{"metadata": map[string]any{"name": "g1"}, "spec": map[string]any{"replicas": 3, "color": "red"}})
	f.Must(200, "PATCH", doohickeys+"/g1/status", `{"status":{"replicas":2,"selector":"app=g1"}}`, "Content-Type", "application/merge-patch+json")
	return f
}

const doohickeys = "/apis/example.com/v1/namespaces/ns1/doohickeys"

func TestScaleHTTP(t *testing.T) {
	f := newScaleFixture(t)
	obj := f.Must(200, "GET", doohickeys+"/g1", nil)
	sc := f.Must(200, "GET", doohickeys+"/g1/scale", nil)
	if sc["apiVersion"] != "autoscaling/v1" || sc["kind"] != "Scale" ||
		field(sc, "spec.replicas") != 3.0 || field(sc, "status.replicas") != 2.0 || field(sc, "status.selector") != "app=g1" {
		t.Fatalf("scale = %v", sc)
	}
	for _, k := range []string{"name", "namespace", "uid", "resourceVersion", "creationTimestamp"} {
		if field(sc, "metadata."+k) != field(obj, "metadata."+k) {
			t.Errorf("metadata.%s = %v, want the object's %v", k, field(sc, "metadata."+k), field(obj, "metadata."+k))
		}
	}
	rv := field(sc, "metadata.resourceVersion").(string)

	for _, tc := range []struct {
		name, method, path string
		body               any
		headers            []string
		code               int
		reason             string // for failures
		msg                string // in the failure's message
		replicas           float64
	}{
		{name: "put", method: "PUT", path: doohickeys + "/g1/scale", code: 200, replicas: 4,
			body: `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"g1","namespace":"ns1"},"spec":{"replicas":4}}`},
		{name: "put-stale", method: "PUT", path: doohickeys + "/g1/scale", code: 409, reason: "Conflict",
			msg:  "the object has been modified",
			body: `{"metadata":{"name":"g1","resourceVersion":"` + rv + `"},"spec":{"replicas":9}}`},
		{name: "put-negative", method: "PUT", path: doohickeys + "/g1/scale", code: 422, reason: "Invalid",
			msg:  `Doohickey.example.com "g1" is invalid: .spec.replicas: Invalid value: -1: should be a non-negative integer`,
			body: `{"spec":{"replicas":-1}}`},
		{name: "put-not-int32", method: "PUT", path: doohickeys + "/g1/scale", code: 400, reason: "BadRequest",
			msg: "Scale in version \"v1\" cannot be handled as a Scale", body: `{"spec":{"replicas":3000000000}}`},
		{name: "put-unknown-strict", method: "PUT", path: doohickeys + "/g1/scale?fieldValidation=Strict", code: 400, reason: "BadRequest",
			msg: `strict decoding error: unknown field "spec.size"`, body: `{"spec":{"replicas":1,"size":2}}`},
		{name: "merge-patch", method: "PATCH", path: doohickeys + "/g1/scale", code: 200, replicas: 5,
			body: `{"spec":{"replicas":5}}`, headers: []string{"Content-Type", "application/merge-patch+json"}},
		{name: "json-patch", method: "PATCH", path: doohickeys + "/g1/scale", code: 200, replicas: 6,
			body: `[{"op":"replace","path":"/spec/replicas","value":6}]`, headers: []string{"Content-Type", "application/json-patch+json"}},
		{name: "strategic-merge-patch", method: "PATCH", path: doohickeys + "/g1/scale", code: 415, reason: "UnsupportedMediaType",
			body: `{"spec":{"replicas":5}}`, headers: []string{"Content-Type", "application/strategic-merge-patch+json"}},
		{name: "delete", method: "DELETE", path: doohickeys + "/g1/scale", code: 405, reason: "MethodNotAllowed"},
		{name: "missing-object", method: "GET", path: doohickeys + "/nope/scale", code: 404, reason: "NotFound", msg: `doohickeys.example.com "nope" not found`},
		{name: "type-without-scale", method: "GET", path: "/apis/example.com/v1/namespaces/ns1/widgets/w/scale", code: 404, reason: "NotFound"},
		{name: "cluster-path", method: "GET", path: "/apis/example.com/v1/doohickeys/g1/scale", code: 404, reason: "NotFound"},
		{name: "partial-list", method: "GET", path: doohickeys + "/g1/scale", code: 406, reason: "NotAcceptable",
			msg:     "you requested PartialObjectMetadataList, but the requested object is not a list (*autoscaling.Scale)",
			headers: []string{"Accept", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := f.Do(tc.method, tc.path, tc.body, tc.headers...)
			if tc.reason != "" {
				st := f.Status(r, tc.code, tc.reason)
				if msg := st["message"].(string); !strings.Contains(msg, tc.msg) {
					t.Fatalf("message %q, want it to contain %q", msg, tc.msg)
				}
				return
			}
			if r.Code != tc.code {
				t.Fatalf("code %d, want %d: %s", r.Code, tc.code, r.Body)
			}
			got := r.Obj(t)
			if field(got, "spec.replicas") != tc.replicas || field(got, "status.replicas") != 2.0 || got["kind"] != "Scale" {
				t.Fatalf("answer %s", r.Body)
			}
			obj := f.Must(200, "GET", doohickeys+"/g1", nil)
			if field(obj, "spec.replicas") != tc.replicas || field(obj, "spec.color") != "red" || field(obj, "status.replicas") != 2.0 {
				t.Fatalf("object after %s: %v", tc.name, obj)
			}
			if field(obj, "metadata.resourceVersion") != field(got, "metadata.resourceVersion") {
				t.Errorf("scale resourceVersion %v, object's %v", field(got, "metadata.resourceVersion"), field(obj, "metadata.resourceVersion"))
			}
		})
	}

	t.Run("generation", func(t *testing.T) {
		before := field(f.Must(200, "GET", doohickeys+"/g1", nil), "metadata.generation").(float64)
		f.Must(200, "PATCH", doohickeys+"/g1/scale", `{"spec":{"replicas":11}}`, "Content-Type", "application/merge-patch+json")
		after := field(f.Must(200, "GET", doohickeys+"/g1", nil), "metadata.generation").(float64)
		if after != before+1 {
			t.Errorf("generation %v -> %v, want one more", before, after)
		}
	})
	t.Run("dry-run", func(t *testing.T) {
		got := f.Must(200, "PUT", doohickeys+"/g1/scale?dryRun=All", `{"spec":{"replicas":30}}`)
		obj := f.Must(200, "GET", doohickeys+"/g1", nil)
		if field(got, "spec.replicas") != 30.0 || field(obj, "spec.replicas") == 30.0 {
			t.Errorf("dry run answered %v, stored %v", field(got, "spec.replicas"), field(obj, "spec.replicas"))
		}
	})
	t.Run("missing-spec-replicas", func(t *testing.T) {
		f.Must(201, "POST", doohickeys, map[string]any{"metadata": map[string]any{"name": "bare"}})
		f.Status(f.Do("GET", doohickeys+"/bare/scale", nil), 500, "InternalError")
		f.Status(f.Do("PATCH", doohickeys+"/bare/scale", `{"metadata":{"labels":{"a":"b"}}}`, "Content-Type", "application/merge-patch+json"), 400, "BadRequest")
		// A whole Scale sets it, creating the path.
		f.Must(200, "PUT", doohickeys+"/bare/scale", `{"spec":{"replicas":2}}`)
		if sc := f.Must(200, "GET", doohickeys+"/bare/scale", nil); field(sc, "spec.replicas") != 2.0 || field(sc, "status.replicas") != 0.0 {
			t.Errorf("scale %v", sc)
		}
	})
	t.Run("table", func(t *testing.T) {
		// As kube-apiserver prints a custom resource's Scale (kubectl get
		// --subresource=scale): Name, Desired and Available from the
		// CRD's replicas paths, Age.
		tbl := f.Must(200, "GET", doohickeys+"/g1/scale", nil, "Accept", "application/json;as=Table;g=meta.k8s.io;v=v1")
		var names []string
		for _, c := range tbl["columnDefinitions"].([]any) {
			names = append(names, c.(map[string]any)["name"].(string))
		}
		cells := tbl["rows"].([]any)[0].(map[string]any)["cells"].([]any)
		sc := f.Must(200, "GET", doohickeys+"/g1/scale", nil)
		if strings.Join(names, ",") != "Name,Desired,Available,Age" || cells[0] != "g1" ||
			cells[1] != field(sc, "spec.replicas") || cells[2] != field(sc, "status.replicas") {
			t.Fatalf("Scale as Table: columns %v, cells %v", names, cells)
		}
		partial := f.Must(200, "GET", doohickeys+"/g1/scale", nil, "Accept", "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1")
		if partial["kind"] != "PartialObjectMetadata" || field(partial, "metadata.name") != "g1" {
			t.Fatalf("Scale as PartialObjectMetadata: %v", partial)
		}
	})
	t.Run("yaml", func(t *testing.T) {
		r := f.Do("GET", doohickeys+"/g1/scale", nil, "Accept", "application/yaml")
		if r.Code != 200 || r.Header.Get("Content-Type") != "application/yaml" || !bytes.Contains(r.Body, []byte("kind: Scale")) {
			t.Fatalf("code %d %s: %s", r.Code, r.Header.Get("Content-Type"), r.Body)
		}
	})
	t.Run("protobuf", func(t *testing.T) {
		s := runtime.NewScheme()
		s.AddKnownTypes(autoscalingv1.SchemeGroupVersion, &autoscalingv1.Scale{})
		ser := protobuf.NewSerializer(s, s)
		// kube-apiserver answers a custom resource's Scale in JSON or
		// YAML only (its handler's serializers), yet reads a protobuf one.
		r := f.Do("GET", doohickeys+"/g1/scale", nil, "Accept", "application/vnd.kubernetes.protobuf")
		if r.Code != 406 || r.Header.Get("Content-Type") != "application/vnd.kubernetes.protobuf" {
			t.Fatalf("protobuf GET = %d %s, want 406 in protobuf: %s", r.Code, r.Header.Get("Content-Type"), r.Body)
		}
		r = f.Do("GET", doohickeys+"/g1/scale", nil, "Accept", "application/vnd.kubernetes.protobuf, application/json")
		if r.Code != 200 || r.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("protobuf-or-JSON GET = %d %s, want 200 JSON: %s", r.Code, r.Header.Get("Content-Type"), r.Body)
		}
		got := &autoscalingv1.Scale{}
		if err := json.Unmarshal(r.Body, got); err != nil {
			t.Fatal(err)
		}
		if got.Name != "g1" || got.Status.Replicas != 2 || got.Status.Selector != "app=g1" {
			t.Fatalf("scale %+v", got)
		}
		got.Spec.Replicas = 8
		got.ResourceVersion = ""
		var body bytes.Buffer
		if err := ser.Encode(got, &body); err != nil {
			t.Fatal(err)
		}
		r = f.Do("PUT", doohickeys+"/g1/scale", body.Bytes(), "Content-Type", "application/vnd.kubernetes.protobuf")
		if r.Code != 200 {
			t.Fatalf("protobuf PUT = %d: %s", r.Code, r.Body)
		}
		if sc := r.Obj(t); field(sc, "spec.replicas") != 8.0 {
			t.Fatalf("protobuf PUT answered %s", r.Body)
		}
	})
}

func TestScaleDiscoveryAndOpenAPI(t *testing.T) {
	f := newScaleFixture(t)
	legacy := resourceListOf(t, f.must200Body("/apis/example.com/v1"), "example.com/v1")
	sub, ok := legacy["doohickeys/scale"]
	if !ok || sub.Group != "autoscaling" || sub.Version != "v1" || sub.Kind != "Scale" || !sub.Namespaced ||
		strings.Join(sub.Verbs, ",") != "get,patch,update" {
		t.Errorf("legacy doohickeys/scale = %+v (present %v)", sub, ok)
	}
	if _, ok := legacy["widgets/scale"]; ok {
		t.Error("widgets, without scale, list a scale subresource")
	}

	list, _ := f.aggregated("/apis")
	res := aggregatedResources(list)["example.com/v1/doohickeys"]
	var found bool
	for _, s := range res.Subresources {
		if s.Subresource == "scale" {
			found = true
			if s.ResponseKind == nil || *s.ResponseKind != (metav1.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}) ||
				strings.Join(s.Verbs, ",") != "get,patch,update" {
				t.Errorf("aggregated scale = %+v", s)
			}
		}
	}
	if !found {
		t.Errorf("aggregated doohickeys has no scale: %+v", res.Subresources)
	}

	doc := f.Must(200, "GET", f.v3Index()["apis/example.com/v1"], nil)
	const scalePath = "/apis/example.com/v1/namespaces/{namespace}/doohickeys/{name}/scale"
	item, _ := field(doc, "paths").(map[string]any)[scalePath].(map[string]any)
	for method, id := range map[string]string{"get": "readExampleComV1NamespacedDoohickeyScale", "put": "replaceExampleComV1NamespacedDoohickeyScale", "patch": "patchExampleComV1NamespacedDoohickeyScale"} {
		op, _ := item[method].(map[string]any)
		if op["operationId"] != id || field(op, "x-kubernetes-group-version-kind.kind") != "Scale" ||
			field(op, "x-kubernetes-group-version-kind.group") != "autoscaling" {
			t.Errorf("v3 %s %s = %v", method, scalePath, op)
		}
	}
	schemas := field(doc, "components.schemas").(map[string]any)
	if def, ok := schemas["io.k8s.api.autoscaling.v1.Scale"].(map[string]any); !ok || field(def, "properties.spec") == nil {
		t.Errorf("v3 Scale schema = %v", def)
	}
	v2 := f.Must(200, "GET", "/openapi/v2", nil)
	if field(v2, "paths").(map[string]any)[scalePath] == nil || field(v2, "definitions").(map[string]any)["io.k8s.api.autoscaling.v1.ScaleSpec"] == nil {
		t.Error("v2 lacks the scale path or definitions")
	}
	if _, ok := field(v2, "paths").(map[string]any)["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/scale"]; ok {
		t.Error("v2 has a scale path for widgets")
	}
	// kubectl builds its models from the protobuf v2 document: every
	// reference must resolve and Scale must be found by its kind.
	pb := f.Do("GET", "/openapi/v2", nil, "Accept", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf")
	var pdoc openapiv2.Document
	if err := proto.Unmarshal(pb.Body, &pdoc); err != nil || pb.Code != 200 {
		t.Fatalf("protobuf v2: code %d, %v", pb.Code, err)
	}
	models, err := openapiproto.NewOpenAPIData(&pdoc)
	if err != nil {
		t.Fatalf("v2 does not parse: %v", err)
	}
	if models.LookupModel(defScale) == nil {
		t.Error("v2 models lack Scale")
	}
}

// TestScaleClient drives /scale with client-go's scale client, as kubectl
// scale and the HPA controller do, with a RESTMapper from discovery, in
// JSON and in protobuf.
func TestScaleClient(t *testing.T) {
	f := newScaleFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, tc := range []struct {
		name string
		cfg  rest.Config
	}{
		{"json", rest.Config{Host: f.url}},
		{"protobuf", rest.Config{Host: f.url, ContentConfig: rest.ContentConfig{
			ContentType: "application/vnd.kubernetes.protobuf", AcceptContentTypes: "application/vnd.kubernetes.protobuf,application/json"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dc, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: f.url})
			if err != nil {
				t.Fatal(err)
			}
			cached := memory.NewMemCacheClient(dc)
			mapper := restmapper.NewDeferredDiscoveryRESTMapper(cached)
			cfg := tc.cfg
			log := &wireLog{}
			cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
				return roundTripFunc(func(req *http.Request) (*http.Response, error) { return log.RoundTrip(rt, req) })
			}
			sc, err := scale.NewForConfig(&cfg, mapper, dynamic.LegacyAPIPathResolverFunc, scale.NewDiscoveryScaleKindResolver(cached))
			if err != nil {
				t.Fatal(err)
			}
			gr := schema.GroupResource{Group: "example.com", Resource: "doohickeys"}
			s, err := sc.Scales("ns1").Get(ctx, gr, "g1", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if s.Name != "g1" || s.Status.Replicas != 2 || s.Status.Selector != "app=g1" || s.ResourceVersion == "" {
				t.Fatalf("get = %+v", s)
			}
			want := s.Spec.Replicas + 1
			s.Spec.Replicas = want
			upd, err := sc.Scales("ns1").Update(ctx, gr, s, metav1.UpdateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if upd.Spec.Replicas != want || upd.ResourceVersion == s.ResourceVersion {
				t.Fatalf("update = %+v", upd)
			}
			// The same Scale again is stale: a typed Conflict.
			if _, err := sc.Scales("ns1").Update(ctx, gr, s, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
				t.Fatalf("stale update: %v, want Conflict", err)
			}
			gvr := gr.WithVersion("v1")
			p, err := sc.Scales("ns1").Patch(ctx, gvr, "g1", types.MergePatchType, []byte(`{"spec":{"replicas":7}}`), metav1.PatchOptions{})
			if err != nil || p.Spec.Replicas != 7 {
				t.Fatalf("patch = %+v, %v", p, err)
			}
			s.Spec.Replicas, s.ResourceVersion = -1, ""
			if _, err := sc.Scales("ns1").Update(ctx, gr, s, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
				t.Fatalf("negative update: %v, want Invalid", err)
			}
			// A custom resource's Scale is never protobuf: JSON, the
			// client's second choice, as from kube-apiserver; its two
			// refusals are Status, which comes in the first choice.
			_, answers := log.snapshot()
			statuses := 0
			for _, a := range answers {
				_, ct, _ := strings.Cut(a, " ")
				switch {
				case ct == protobufMedia && cfg.AcceptContentTypes != "":
					statuses++
				case ct != "application/json":
					t.Errorf("answer %q", a)
				}
			}
			if want := map[bool]int{true: 2, false: 0}[cfg.AcceptContentTypes != ""]; statuses != want {
				t.Errorf("%d Status answers in protobuf, want %d: %q", statuses, want, answers)
			}
		})
	}
}

// must200Body fetches a path that must answer 200 and returns its body.
func (f *fixture) must200Body(path string) []byte {
	f.t.Helper()
	r := f.Do(http.MethodGet, path, nil)
	if r.Code != 200 {
		f.t.Fatalf("GET %s = %d: %s", path, r.Code, r.Body)
	}
	return r.Body
}

func TestScaleApplyHTTP(t *testing.T) {
	f := newScaleFixture(t)
	apply := func(manager, body string, force bool) response {
		q := "?fieldManager=" + manager
		if force {
			q += "&force=true"
		}
		return f.Do("PATCH", doohickeys+"/g1/scale"+q, body, "Content-Type", "application/apply-patch+yaml")
	}
	body := "apiVersion: autoscaling/v1\nkind: Scale\nmetadata:\n  name: g1\nspec:\n  replicas: 5\n"
	// The creator (the fixture's client, by user agent) owns
	// spec.replicas: a non-forced apply through /scale conflicts.
	st := f.Status(apply("autoscaler", body, false), 409, "Conflict")
	if msg, _ := st["message"].(string); !strings.Contains(msg, ".spec.replicas") {
		t.Errorf("conflict message %q", msg)
	}
	r := apply("autoscaler", body, true)
	if r.Code != 200 {
		t.Fatalf("forced apply = %d: %s", r.Code, r.Body)
	}
	obj := f.Must(200, "GET", doohickeys+"/g1", nil)
	if field(obj, "spec.replicas") != 5.0 {
		t.Errorf("replicas %v, want 5", field(obj, "spec.replicas"))
	}
	entries, _ := field(obj, "metadata.managedFields").([]any)
	var found bool
	for _, e := range entries {
		m := e.(map[string]any)
		if m["manager"] == "autoscaler" {
			found = true
			if m["operation"] != "Apply" || m["subresource"] != "scale" || m["apiVersion"] != "example.com/v1" {
				t.Errorf("autoscaler entry %v", m)
			}
			if got, _ := json.Marshal(m["fieldsV1"]); string(got) != `{"f:spec":{"f:replicas":{}}}` {
				t.Errorf("autoscaler owns %s", got)
			}
		}
	}
	if !found {
		t.Errorf("no autoscaler entry in %v", entries)
	}
	f.Status(f.Do("PATCH", doohickeys+"/g1/scale", body, "Content-Type", "application/apply-patch+yaml"), 422, "Invalid")
}
