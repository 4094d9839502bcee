package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestLoopbackOpenAPIFromRegistry checks the OpenAPI v3 client the
// server's own components use (kube's mutating policy plugin): it lists
// the group versions served, under URLs that change when the set of
// types does, and fetches a schema from the server when asked.
func TestLoopbackOpenAPIFromRegistry(t *testing.T) {
	srv := start(t, Config{})
	oa := srv.sec.client.Discovery().OpenAPIV3()
	paths, err := oa.Paths()
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"api/v1", "apis/apps/v1", "apis/apiextensions.k8s.io/v1"} {
		if _, ok := paths[key]; !ok {
			t.Fatalf("paths lack %s: %v", key, paths)
		}
	}
	if _, ok := paths["apis/example.com/v1"]; ok {
		t.Fatal("paths list example.com/v1 before its CRD exists")
	}
	again, _ := oa.Paths()
	if a, b := paths["apis/apps/v1"].ServerRelativeURL(), again["apis/apps/v1"].ServerRelativeURL(); a != b {
		t.Fatalf("URL changed with no type change: %s, then %s", a, b)
	}

	crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
	"metadata":{"name":"widgets.example.com"},
	"spec":{"group":"example.com","scope":"Namespaced",
	"names":{"plural":"widgets","singular":"widget","kind":"Widget","listKind":"WidgetList"},
	"versions":[{"name":"v1","served":true,"storage":true,
	"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{"size":{"type":"integer"}}}}}}}]}}`
	post(t, http.DefaultClient, srv.URL()+"/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, ok := srv.Registry().Snapshot().Lookup("example.com", "v1", "widgets"); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the CRD's type was not served")
		}
		time.Sleep(10 * time.Millisecond)
	}
	after, err := oa.Paths()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := after["apis/example.com/v1"]; !ok {
		t.Fatalf("paths lack example.com/v1 once its CRD is served: %v", after)
	}
	if a, b := paths["apis/apps/v1"].ServerRelativeURL(), after["apis/apps/v1"].ServerRelativeURL(); a == b {
		t.Fatalf("URL %s unchanged though the set of types changed", a)
	}

	for gv, model := range map[string]string{
		"apis/apps/v1":        "io.k8s.api.apps.v1.Deployment",
		"apis/example.com/v1": "com.example.v1.Widget",
	} {
		b, err := after[gv].Schema("application/json")
		if err != nil {
			t.Fatalf("%s: %v", gv, err)
		}
		var doc struct {
			Components struct {
				Schemas map[string]json.RawMessage `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v: %.200s", gv, err, b)
		}
		if _, ok := doc.Components.Schemas[model]; !ok {
			var names []string
			for n := range doc.Components.Schemas {
				names = append(names, n)
			}
			t.Errorf("%s: no schema %s among %s", gv, model, strings.Join(names, ", "))
		}
	}
}
