package apiextensions_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/miniapi/miniapi/apiextensions"
)

// TestDeprecationWarningText checks the warning each served version's type
// carries against kube-apiserver's wording (customresource_handler.go
// defaultDeprecationWarning).
func TestDeprecationWarningText(t *testing.T) {
	custom := "widgets v1alpha1 go away soon"
	empty := ""
	type ver struct {
		name       string
		served     bool
		deprecated bool
		warning    *string
	}
	cases := []struct {
		name     string
		versions []ver
		want     map[string]string // version -> warning
	}{
		{"not deprecated", []ver{{"v1", true, false, nil}}, map[string]string{"v1": ""}},
		{"no newer version", []ver{{"v1", true, true, nil}}, map[string]string{"v1": "example.com/v1 Widget is deprecated"}},
		{"newest served undeprecated", []ver{{"v1", true, true, nil}, {"v2", true, false, nil}, {"v3", false, false, nil}, {"v1beta1", true, false, nil}},
			map[string]string{"v1": "example.com/v1 Widget is deprecated; use example.com/v2 Widget", "v2": "", "v1beta1": ""}},
		{"GA sorts after beta", []ver{{"v1beta1", true, true, nil}, {"v1", true, false, nil}, {"v2alpha1", true, false, nil}},
			map[string]string{"v1beta1": "example.com/v1beta1 Widget is deprecated; use example.com/v1 Widget", "v1": "", "v2alpha1": ""}},
		{"deprecated newer skipped", []ver{{"v1", true, true, nil}, {"v2", true, true, nil}},
			map[string]string{"v1": "example.com/v1 Widget is deprecated", "v2": "example.com/v2 Widget is deprecated"}},
		{"custom warning", []ver{{"v1alpha1", true, true, &custom}, {"v1", true, false, nil}},
			map[string]string{"v1alpha1": custom, "v1": ""}},
		{"empty custom warning", []ver{{"v1", true, true, &empty}}, map[string]string{"v1": ""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			crd := &apiextensions.CRD{Spec: apiextensions.Spec{Group: "example.com", Scope: "Namespaced",
				Names: apiextensions.Names{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"}}}
			for i, v := range tc.versions {
				crd.Spec.Versions = append(crd.Spec.Versions, apiextensions.Version{Name: v.name, Served: v.served, Storage: i == 0, Deprecated: v.deprecated, DeprecationWarning: v.warning})
			}
			got := map[string]string{}
			for _, typ := range apiextensions.Types(crd, crd.Spec.Names) {
				got[typ.Version] = typ.DeprecationWarning
			}
			if len(got) != len(tc.want) {
				t.Fatalf("types for %v, want %v", got, tc.want)
			}
			for v, w := range tc.want {
				if got[v] != w {
					t.Errorf("%s warning = %q, want %q", v, got[v], w)
				}
			}
		})
	}
}

// TestDeprecatedVersionWarns checks that every request to a deprecated
// version answers kube's Warning header, and one to another version none.
func TestDeprecatedVersionWarns(t *testing.T) {
	srv, _ := start(t, "")
	base := srv.URL()
	crd := widgetCRD("v2", "v1")
	version(crd["spec"].(map[string]any)["versions"].([]any), 1)["deprecated"] = true
	createCRD(t, base, crd)
	list := func(v string) *http.Response {
		resp, err := http.Get(base + "/apis/example.com/" + v + "/namespaces/default/widgets")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	eventually(t, 5*time.Second, func() error {
		resp := list("v1")
		return wantStatus(resp.StatusCode, nil, http.StatusOK)
	})
	if got, want := list("v1").Header.Values("Warning"), []string{`299 - "example.com/v1 Widget is deprecated; use example.com/v2 Widget"`}; !slices.Equal(got, want) {
		t.Errorf("v1 Warning = %q, want %q", got, want)
	}
	obj := map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "a"}}
	b, _ := json.Marshal(obj)
	req, _ := http.NewRequest("POST", base+"/apis/example.com/v1/namespaces/default/widgets", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || len(resp.Header.Values("Warning")) != 1 {
		t.Errorf("create in v1 = %d, Warning %q", resp.StatusCode, resp.Header.Values("Warning"))
	}
	if got := list("v2").Header.Values("Warning"); len(got) != 0 {
		t.Errorf("v2 Warning = %q, want none", got)
	}
}
