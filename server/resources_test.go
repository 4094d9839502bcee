package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

func TestParseResources(t *testing.T) {
	gadget := strings.NewReplacer("widgets", "gadgets", "widget", "gadget", "Widget", "Gadget").Replace(widgetCRD)
	legacy := "resources:\n- {group: legacy.example.com, version: v1, kind: Thing, plural: things, namespaced: true}\n"
	tests := []struct {
		name      string
		in        string
		crds      []string
		types     []string
		wantError string
	}{
		{name: "empty", in: ""},
		{name: "comments only", in: "# nothing\n---\n# still nothing\n"},
		{name: "one CRD", in: widgetCRD, crds: []string{"widgets.example.com"}},
		{name: "two documents", in: "---\n" + widgetCRD + "---\n" + gadget, crds: []string{"widgets.example.com", "gadgets.example.com"}},
		{name: "document end marker", in: widgetCRD + "...\n", crds: []string{"widgets.example.com"}},
		{name: "list", in: "apiVersion: v1\nkind: List\nitems:\n- " + strings.ReplaceAll(strings.TrimSpace(widgetCRD), "\n", "\n  ") + "\n", crds: []string{"widgets.example.com"}},
		{name: "JSON", in: `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"a.b.c"}}`, crds: []string{"a.b.c"}},
		{name: "legacy format", in: legacy, types: []string{"things.legacy.example.com"}},
		{name: "both formats", in: legacy + "---\n" + widgetCRD, crds: []string{"widgets.example.com"}, types: []string{"things.legacy.example.com"}},
		{name: "other kind", in: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", wantError: "document 1: v1 ConfigMap is not a CustomResourceDefinition"},
		{name: "no name", in: "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n", wantError: "without metadata.name"},
		{name: "not an object", in: "- a\n- b\n", wantError: "not an object"},
		{name: "legacy typo", in: "resources:\n- {group: g, version: v1, kind: K, plural: ks, namspaced: true}\n", wantError: "namspaced"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseResources([]byte(tc.in))
			if tc.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantError) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var crds, types []string
			for _, c := range r.CRDs {
				crds = append(crds, c.Metadata.Name)
			}
			for _, ty := range r.Types {
				types = append(types, ty.Plural+"."+ty.Group)
			}
			if strings.Join(crds, ",") != strings.Join(tc.crds, ",") || strings.Join(types, ",") != strings.Join(tc.types, ",") {
				t.Errorf("CRDs %v, types %v; want %v, %v", crds, types, tc.crds, tc.types)
			}
		})
	}
}

func TestReadResourcesDirectory(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"b.yaml":       strings.NewReplacer("widgets", "gadgets", "Widget", "Gadget", "widget", "gadget").Replace(widgetCRD),
		"a.yml":        widgetCRD,
		".hidden.yaml": "not: [valid",
		"notes.txt":    "ignored",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := ReadResources(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.CRDs) != 2 || r.CRDs[0].Metadata.Name != "widgets.example.com" || r.CRDs[1].Metadata.Name != "gadgets.example.com" {
		t.Fatalf("read %d CRDs, want widgets then gadgets (file name order)", len(r.CRDs))
	}
	if _, err := ReadResources(filepath.Join(dir, "missing")); err == nil {
		t.Error("reading a missing path succeeded")
	}
}
