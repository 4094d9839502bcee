package endpoints

import (
	"encoding/json"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/miniapi/miniapi/builtin"
	"github.com/miniapi/miniapi/internal/apitest"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestOpenAPISubresourcePaths checks the paths of the built-in kinds'
// subresources besides status and scale against what kube-apiserver
// 1.37's /openapi/v2 and /openapi/v3/api/v1 say of them: operation IDs,
// actions, kinds, methods, bodies, answers and query parameters.
func TestOpenAPISubresourcePaths(t *testing.T) {
	f := newFixture(t)
	var doc struct {
		Paths       map[string]map[string]json.RawMessage `json:"paths"`
		Definitions map[string]json.RawMessage            `json:"definitions"`
	}
	if err := json.Unmarshal(f.Do("GET", "/openapi/v2", nil).Body, &doc); err != nil {
		t.Fatal(err)
	}
	type op struct {
		OperationID string   `json:"operationId"`
		Action      string   `json:"x-kubernetes-action"`
		GVK         gvkJSON  `json:"x-kubernetes-group-version-kind"`
		Produces    []string `json:"produces"`
		Parameters  []struct {
			Name   string `json:"name"`
			In     string `json:"in"`
			Schema struct {
				Ref string `json:"$ref"`
			} `json:"schema"`
		} `json:"parameters"`
		Responses map[string]struct {
			Schema map[string]any `json:"schema"`
		} `json:"responses"`
	}
	get := func(path, method string) (op, []string) {
		t.Helper()
		item, ok := doc.Paths[path]
		if !ok {
			t.Fatalf("no path %s", path)
		}
		var o op
		if raw, ok := item[method]; !ok {
			t.Fatalf("%s has no %s", path, method)
		} else if err := json.Unmarshal(raw, &o); err != nil {
			t.Fatal(err)
		}
		var params []struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(item["parameters"], &params); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range params {
			names = append(names, p.Name)
		}
		sort.Strings(names)
		return o, names
	}
	methods := func(path string) []string {
		var out []string
		for m := range doc.Paths[path] {
			if m != "parameters" {
				out = append(out, m)
			}
		}
		sort.Strings(out)
		return out
	}
	pod := "/api/v1/namespaces/{namespace}/pods/{name}"

	// A pod's log: a read answering a string, in text/plain too, with
	// the fields of PodLogOptions but sinceTime (a struct) as parameters.
	logOp, params := get(pod+"/log", "get")
	if logOp.OperationID != "readCoreV1NamespacedPodLog" || logOp.Action != "get" || logOp.GVK != (gvkJSON{Version: "v1", Kind: "Pod"}) ||
		!slices.Equal(logOp.Produces, []string{"text/plain", "application/json", "application/yaml", "application/vnd.kubernetes.protobuf"}) ||
		logOp.Responses["200"].Schema["type"] != "string" {
		t.Errorf("log: %+v", logOp)
	}
	if want := []string{"container", "follow", "insecureSkipTLSVerifyBackend", "limitBytes", "name", "namespace", "pretty", "previous", "sinceSeconds", "stream", "tailLines", "timestamps"}; !slices.Equal(params, want) {
		t.Errorf("log parameters %v, want %v", params, want)
	}

	// exec: a connection by GET or POST, named by its options kind.
	for _, m := range []string{"get", "post"} {
		o, params := get(pod+"/exec", m)
		id := map[string]string{"get": "connectCoreV1GetNamespacedPodExec", "post": "connectCoreV1PostNamespacedPodExec"}[m]
		if o.OperationID != id || o.Action != "connect" || o.GVK != (gvkJSON{Version: "v1", Kind: "PodExecOptions"}) || !slices.Equal(o.Produces, []string{"*/*"}) {
			t.Errorf("exec %s: %+v", m, o)
		}
		if want := []string{"command", "container", "name", "namespace", "stderr", "stdin", "stdout", "tty"}; !slices.Equal(params, want) {
			t.Errorf("exec parameters %v, want %v", params, want)
		}
	}
	if m := methods(pod + "/portforward"); !slices.Equal(m, []string{"get", "post"}) {
		t.Errorf("portforward methods %v", m)
	}

	// Proxies take every method, with and without a path after them.
	all := []string{"delete", "get", "head", "options", "patch", "post", "put"}
	for _, p := range []string{pod + "/proxy", "/api/v1/nodes/{name}/proxy", "/api/v1/namespaces/{namespace}/services/{name}/proxy"} {
		if m := methods(p); !slices.Equal(m, all) {
			t.Errorf("%s methods %v", p, m)
		}
		if m := methods(p + "/{path}"); !slices.Equal(m, all) {
			t.Errorf("%s/{path} methods %v", p, m)
		}
	}
	if o, params := get("/api/v1/nodes/{name}/proxy/{path}", "head"); o.OperationID != "connectCoreV1HeadNodeProxyWithPath" || o.GVK.Kind != "NodeProxyOptions" ||
		!slices.Equal(params, []string{"name", "path", "path"}) {
		t.Errorf("node proxy with path: %+v, parameters %v", o, params)
	}

	// Creates of another kind: its definition, published. (A
	// ServiceAccount's token is one too where the server issues tokens;
	// this registry has no issuer, and lists it nowhere.)
	for _, c := range []struct {
		path, id, def string
		gvk           gvkJSON
	}{
		{pod + "/binding", "createCoreV1NamespacedPodBinding", "io.k8s.api.core.v1.Binding", gvkJSON{Version: "v1", Kind: "Binding"}},
		{pod + "/eviction", "createCoreV1NamespacedPodEviction", "io.k8s.api.policy.v1.Eviction", gvkJSON{Group: "policy", Version: "v1", Kind: "Eviction"}},
	} {
		o, _ := get(c.path, "post")
		body := slices.IndexFunc(o.Parameters, func(p struct {
			Name   string `json:"name"`
			In     string `json:"in"`
			Schema struct {
				Ref string `json:"$ref"`
			} `json:"schema"`
		}) bool {
			return p.In == "body" && p.Schema.Ref == "#/definitions/"+c.def
		})
		if o.OperationID != c.id || o.Action != "post" || o.GVK != c.gvk || body < 0 || o.Responses["201"].Schema["$ref"] != "#/definitions/"+c.def {
			t.Errorf("%s: %+v", c.path, o)
		}
		if _, ok := doc.Definitions[c.def]; !ok {
			t.Errorf("no definition %s", c.def)
		}
	}

	// Views of the parent, as their verbs allow.
	for path, want := range map[string][]string{
		pod + "/ephemeralcontainers":         {"get", "patch", "put"},
		pod + "/resize":                      {"get", "patch", "put"},
		"/api/v1/namespaces/{name}/finalize": {"put"},
		"/apis/certificates.k8s.io/v1/certificatesigningrequests/{name}/approval": {"get", "patch", "put"},
	} {
		if m := methods(path); !slices.Equal(m, want) {
			t.Errorf("%s methods %v, want %v", path, m, want)
		}
	}
	if o, _ := get("/api/v1/namespaces/{name}/finalize", "put"); o.OperationID != "replaceCoreV1NamespaceFinalize" || o.Responses["200"].Schema["$ref"] != "#/definitions/io.k8s.api.core.v1.Namespace" {
		t.Errorf("finalize: %+v", o)
	}

	// The options kinds give parameters only, as in kube's document.
	for _, name := range []string{"io.k8s.api.core.v1.PodExecOptions", "io.k8s.api.core.v1.PodLogOptions", "io.k8s.api.core.v1.NodeProxyOptions"} {
		if _, ok := doc.Definitions[name]; ok {
			t.Errorf("definition %s published", name)
		}
	}

	// The v3 document of api/v1 says the same of the log.
	v3, raw := v3Spec(t, f, schema.GroupVersion{Version: "v1"})
	item, ok := v3.Paths.Paths[pod+"/log"]
	if !ok || item.Get == nil || item.Get.OperationId != "readCoreV1NamespacedPodLog" {
		t.Fatalf("v3 log path: %+v", item)
	}
	if s := item.Get.Responses.StatusCodeResponses[200].Content["text/plain"]; s == nil || !s.Schema.Type.Contains("string") {
		t.Errorf("v3 log answer: %+v", item.Get.Responses.StatusCodeResponses[200])
	}
	if schemas := raw["components"].(map[string]any)["schemas"].(map[string]any); schemas["io.k8s.api.policy.v1.Eviction"] == nil || schemas["io.k8s.api.core.v1.PodExecOptions"] != nil {
		t.Error("v3 api/v1: want Eviction's definition and not PodExecOptions'")
	}
}

// gvkJSON is an x-kubernetes-group-version-kind extension.
type gvkJSON struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// TestOpenAPIDeleteAnswers checks that deletes are documented as
// kube-apiserver 1.37 documents them: the deleted object for the kinds
// whose storage says it answers it (pods), a Status for the others and
// for every collection.
func TestOpenAPIDeleteAnswers(t *testing.T) {
	f := newFixture(t)
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(f.Do("GET", "/openapi/v2", nil).Body, &doc); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"/api/v1/namespaces/{namespace}/pods/{name}":       "io.k8s.api.core.v1.Pod",
		"/api/v1/namespaces/{namespace}/configmaps/{name}": defStatus,
		"/api/v1/namespaces/{name}":                        defStatus,
		"/api/v1/namespaces/{namespace}/pods":              defStatus,
		"/api/v1/namespaces/{namespace}/configmaps":        defStatus,
	} {
		var del struct {
			Responses map[string]struct {
				Schema struct {
					Ref string `json:"$ref"`
				} `json:"schema"`
			} `json:"responses"`
		}
		if err := json.Unmarshal(doc.Paths[path]["delete"], &del); err != nil {
			t.Fatalf("DELETE %s: %v", path, err)
		}
		codes := []string{"200", "202"}
		if !strings.HasSuffix(path, "}") {
			codes = codes[:1] // a collection answers 200 only
		}
		for _, code := range codes {
			if r, ok := del.Responses[code]; !ok || r.Schema.Ref != "#/definitions/"+want {
				t.Errorf("DELETE %s %s answers %q, want %s", path, code, r.Schema.Ref, want)
			}
		}
	}
}

// TestOpenAPIDiscoveryPaths checks the discovery, version and issuer
// paths kube-apiserver 1.37's documents list: in /openapi/v2, and each
// in its own v3 document under the index key kube gives it, but a group
// version's resources, which sit in that group version's document.
func TestOpenAPIDiscoveryPaths(t *testing.T) {
	for _, issuer := range []bool{false, true} {
		reg, _ := apitest.Registry(t)
		srv := httptest.NewServer(New(Config{Registry: reg, OpenAPI: &builtin.OpenAPI{}, IssuerDiscovery: issuer, BearerTokens: issuer}))
		t.Cleanup(srv.Close)
		c := &apitest.Client{T: t, URL: srv.URL}

		var v2 struct {
			Info        map[string]string                     `json:"info"`
			Paths       map[string]map[string]json.RawMessage `json:"paths"`
			Definitions map[string]json.RawMessage            `json:"definitions"`
			SecurityDef map[string]map[string]string          `json:"securityDefinitions"`
			Security    []map[string][]string                 `json:"security"`
		}
		if err := json.Unmarshal(c.Do("GET", "/openapi/v2", nil).Body, &v2); err != nil {
			t.Fatal(err)
		}
		// Versioned and secured as kube-apiserver's document: its
		// minor version, and a bearer token where the server takes one.
		if v2.Info["title"] != "Kubernetes" || v2.Info["version"] != "1.37" {
			t.Errorf("info %v", v2.Info)
		}
		if bt := v2.SecurityDef["BearerToken"]; issuer != (bt["type"] == "apiKey" && bt["in"] == "header" && bt["name"] == "authorization" && len(v2.Security) == 1) {
			t.Errorf("bearer tokens %v: securityDefinitions %v, security %v", issuer, v2.SecurityDef, v2.Security)
		}
		want := map[string]struct{ id, def string }{
			"/api/":                                  {"getCoreAPIVersions", defAPIVersions},
			"/api/v1/":                               {"getCoreV1APIResources", defAPIResourceList},
			"/apis/":                                 {"getAPIVersions", defAPIGroupList},
			"/apis/apps/":                            {"getAppsAPIGroup", defAPIGroup},
			"/apis/apps/v1/":                         {"getAppsV1APIResources", defAPIResourceList},
			"/apis/flowcontrol.apiserver.k8s.io/v1/": {"getFlowcontrolApiserverV1APIResources", defAPIResourceList},
			"/version/":                              {"getCodeVersion", defVersionInfo},
		}
		if issuer {
			want["/.well-known/openid-configuration/"] = struct{ id, def string }{"getServiceAccountIssuerOpenIDConfiguration", ""}
			want["/openid/v1/jwks/"] = struct{ id, def string }{"getServiceAccountIssuerOpenIDKeyset", ""}
		} else if _, ok := v2.Paths["/openid/v1/jwks/"]; ok {
			t.Error("issuer paths listed without an issuer")
		}
		for path, w := range want {
			var op struct {
				ID        string         `json:"operationId"`
				Action    string         `json:"x-kubernetes-action"`
				Responses map[string]any `json:"responses"`
			}
			if err := json.Unmarshal(v2.Paths[path]["get"], &op); err != nil {
				t.Fatalf("GET %s: %v", path, err)
			}
			schema, _ := op.Responses["200"].(map[string]any)["schema"].(map[string]any)
			ref := "#/definitions/" + w.def
			if w.def == "" {
				ref = ""
			}
			if op.ID != w.id || op.Action != "" || schema["$ref"] != nil && schema["$ref"] != ref || w.def == "" && schema["type"] != "string" || op.Responses["401"] == nil {
				t.Errorf("GET %s: %+v", path, op)
			}
			if _, ok := v2.Definitions[w.def]; w.def != "" && !ok {
				t.Errorf("no definition %s", w.def)
			}
		}

		index := map[string]map[string]map[string]string{}
		if err := json.Unmarshal(c.Do("GET", "/openapi/v3", nil).Body, &index); err != nil {
			t.Fatal(err)
		}
		for key, path := range map[string]string{"api": "/api/", "apis": "/apis/", "apis/apps": "/apis/apps/", "version": "/version/", "api/v1": "/api/v1/", "apis/apps/v1": "/apis/apps/v1/"} {
			var doc struct {
				Paths      map[string]map[string]json.RawMessage `json:"paths"`
				Components struct {
					SecuritySchemes map[string]any `json:"securitySchemes"`
				} `json:"components"`
			}
			var op struct {
				ID string `json:"operationId"`
			}
			if err := json.Unmarshal(c.Do("GET", index["paths"][key]["serverRelativeURL"], nil).Body, &doc); err != nil {
				t.Fatalf("v3 %s: %v", key, err)
			}
			if err := json.Unmarshal(doc.Paths[path]["get"], &op); err != nil || op.ID != want[path].id {
				t.Errorf("v3 document %s: GET %s is %s (%v)", key, path, doc.Paths[path]["get"], err)
			}
			if _, ok := doc.Components.SecuritySchemes["BearerToken"]; ok != issuer {
				t.Errorf("v3 document %s: BearerToken scheme %v, want %v", key, ok, issuer)
			}
		}
		if _, ok := index["paths"]["openid/v1/jwks"]; ok != issuer {
			t.Errorf("issuer %v: v3 index lists openid/v1/jwks: %v", issuer, ok)
		}
	}
}
