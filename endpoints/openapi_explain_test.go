package endpoints

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	openapiproto "k8s.io/kube-openapi/pkg/util/proto"
	"k8s.io/kubectl/pkg/explain"
	explainv2 "k8s.io/kubectl/pkg/explain/v2"
)

// TestKubectlExplain renders `kubectl explain` with kubectl's own code,
// from the OpenAPI v3 documents (kubectl's default) and from v2
// (--output plaintext-openapiv2).
func TestKubectlExplain(t *testing.T) {
	f := newFixture(t)
	dc, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: f.url})
	if err != nil {
		t.Fatal(err)
	}
	v2doc, err := dc.OpenAPISchema()
	if err != nil {
		t.Fatal(err)
	}
	models, err := openapiproto.NewOpenAPIData(v2doc)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		gvr   schema.GroupVersionResource
		kind  string
		model string // v2 definition
		path  []string
		want  []string // lines the output must contain
	}{
		// Built-in kinds print kube's own descriptions.
		{schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "ConfigMap", "io.k8s.api.core.v1.ConfigMap", nil,
			[]string{"KIND:       ConfigMap", "DESCRIPTION:", "ConfigMap holds configuration data for pods to consume.", "data\t<map[string]string>", "metadata\t<ObjectMeta>"}},
		{schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "ConfigMap", "io.k8s.api.core.v1.ConfigMap", []string{"data"},
			[]string{"FIELD: data <map[string]string>", "Data contains the configuration data. Each key must consist of alphanumeric"}},
		{schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "ConfigMap", "io.k8s.api.core.v1.ConfigMap", []string{"metadata", "labels"},
			[]string{"FIELD: labels <map[string]string>", "Map of string keys and values that can be used to organize and categorize"}},
		{schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "Namespace", "io.k8s.api.core.v1.Namespace", []string{"status", "phase"},
			[]string{"FIELD: phase <string>", "ENUM:", "Terminating", "Phase is the current lifecycle phase of the namespace."}},
		{schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}, "Lease", "io.k8s.api.coordination.v1.Lease", []string{"spec"},
			[]string{"GROUP:      coordination.k8s.io", "holderIdentity\t<string>", "leaseDurationSeconds\t<integer>"}},
		{schema.GroupVersionResource{Version: "v1", Resource: "events"}, "Event", "io.k8s.api.core.v1.Event", []string{"involvedObject"},
			[]string{"FIELD: involvedObject <ObjectReference>", "The object that this event is about."}},
		{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "Deployment", "io.k8s.api.apps.v1.Deployment", []string{"spec", "template", "spec", "containers"},
			[]string{"FIELD: containers <[]Container>", "List of containers belonging to the pod."}},
		{schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}, "Widget", "com.example.v1.Widget", nil,
			[]string{"KIND:       Widget", "served without a schema"}},
	}
	for _, tc := range tests {
		name := tc.gvr.Resource
		if len(tc.path) > 0 {
			name += "." + strings.Join(tc.path, ".")
		}
		t.Run(name, func(t *testing.T) {
			var out strings.Builder
			if err := explainv2.PrintModelDescription(tc.path, &out, dc.OpenAPIV3(), tc.gvr, false, 5, "plaintext"); err != nil {
				t.Fatalf("explain (v3): %v", err)
			}
			for _, want := range tc.want {
				if !strings.Contains(out.String(), want) {
					t.Errorf("explain (v3) lacks %q:\n%s", want, out.String())
				}
			}

			model := models.LookupModel(tc.model)
			if model == nil {
				t.Fatalf("no v2 model %s", tc.model)
			}
			out.Reset()
			gvk := tc.gvr.GroupVersion().WithKind(tc.kind)
			if err := explain.PrintModelDescription(tc.path, &out, model, gvk, false, 5); err != nil {
				t.Fatalf("explain (v2): %v", err)
			}
			if !strings.Contains(out.String(), "DESCRIPTION:") {
				t.Errorf("explain (v2) has no description:\n%s", out.String())
			}
		})
	}
}
