package apiextensions_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	explainv2 "k8s.io/kubectl/pkg/explain/v2"
)

// TestCRDFieldValidation checks that a CRD's own fields are validated
// like kube-apiserver's typed CRD: unknown fields refused under Strict
// with its strict decoding error, warned under Warn (and dropped), and
// every field of the v1 type accepted.
func TestCRDFieldValidation(t *testing.T) {
	srv, _ := start(t, "")
	base := srv.URL()
	misspelt := func(v string) map[string]any {
		crd := widgetCRD("v1")
		spec := crd["spec"].(map[string]any)
		spec["verison"] = v
		version(spec["versions"].([]any), 0)["subresources"] = map[string]any{"status": map[string]any{}, "scale": map[string]any{"specReplicasPath": ".spec.size", "statusReplicasPath": ".status.size", "labelSelectorPath": ".status.sel", "extra": 1}}
		return crd
	}
	full := widgetCRD("v1", "v2")
	fspec := full["spec"].(map[string]any)
	fspec["preserveUnknownFields"] = false
	fspec["conversion"] = map[string]any{"strategy": "None"}
	fv := version(fspec["versions"].([]any), 1)
	fv["deprecated"] = true
	fv["deprecationWarning"] = "use v1"
	// On both versions: kube-apiserver's validation sees the schemas of
	// versions whose schemas are all the same at spec level only, and
	// refuses per-version selectableFields beside them.
	fv["selectableFields"] = []any{map[string]any{"jsonPath": ".spec.color"}}
	version(fspec["versions"].([]any), 0)["selectableFields"] = []any{map[string]any{"jsonPath": ".spec.color"}}
	full["status"] = map[string]any{"storedVersions": []any{"v1"}, "conditions": []any{}, "acceptedNames": map[string]any{"plural": "", "kind": ""}}

	cases := []struct {
		name       string
		directive  string
		crd        map[string]any
		wantCode   int
		wantMsg    string
		wantWarned []string
	}{
		{"Strict refuses unknown fields", "Strict", misspelt("v1"), http.StatusBadRequest,
			`CustomResourceDefinition in version "v1" cannot be handled as a CustomResourceDefinition: strict decoding error: unknown field "spec.verison", unknown field "spec.versions[0].subresources.scale.extra"`, nil},
		{"Warn warns and creates", "Warn", misspelt("v1"), http.StatusCreated, "",
			[]string{`299 - "unknown field \"spec.verison\""`, `299 - "unknown field \"spec.versions[0].subresources.scale.extra\""`}},
		{"every v1 field is known", "Strict", full, http.StatusCreated, "", nil},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// A group per case: the CRDs do not collide.
			group := fmt.Sprintf("c%d.example.com", i)
			tc.crd["spec"].(map[string]any)["group"] = group
			tc.crd["metadata"] = map[string]any{"name": "widgets." + group}
			b, _ := json.Marshal(tc.crd)
			req, _ := http.NewRequest("POST", base+crdURL+"?fieldValidation="+tc.directive, strings.NewReader(string(b)))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var st struct {
				Message string `json:"message"`
				Spec    map[string]any
			}
			if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.wantCode {
				t.Fatalf("create = %d, want %d: %s", resp.StatusCode, tc.wantCode, st.Message)
			}
			if st.Message != tc.wantMsg {
				t.Errorf("message\n got %s\nwant %s", st.Message, tc.wantMsg)
			}
			if got := resp.Header.Values("Warning"); !slices.Equal(got, tc.wantWarned) {
				t.Errorf("warnings %q, want %q", got, tc.wantWarned)
			}
			if _, ok := st.Spec["verison"]; ok {
				t.Errorf("unknown field stored: %v", st.Spec)
			}
		})
	}
}

// TestCRDExplain renders `kubectl explain crd.spec` with kubectl's code:
// kube-apiserver's text.
func TestCRDExplain(t *testing.T) {
	srv, _ := start(t, "")
	dc, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	for _, tc := range []struct {
		path []string
		want []string
	}{
		// kube's own descriptions, from its generated OpenAPI definitions.
		{nil, []string{"KIND:       CustomResourceDefinition", "CustomResourceDefinition represents a resource that should be exposed on the\n    API server.", "spec\t<CustomResourceDefinitionSpec> -required-", "status\t<CustomResourceDefinitionStatus>"}},
		{[]string{"spec"}, []string{"FIELD: spec <CustomResourceDefinitionSpec>", "group\t<string> -required-", "versions\t<[]CustomResourceDefinitionVersion> -required-", "conversion\t<CustomResourceConversion>"}},
		{[]string{"spec", "versions", "subresources", "scale"}, []string{"specReplicasPath\t<string> -required-", "labelSelectorPath\t<string>"}},
	} {
		t.Run(strings.Join(append([]string{"crd"}, tc.path...), "."), func(t *testing.T) {
			var out strings.Builder
			if err := explainv2.PrintModelDescription(tc.path, &out, dc.OpenAPIV3(), gvr, false, 5, "plaintext"); err != nil {
				t.Fatalf("explain: %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("explain lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}
