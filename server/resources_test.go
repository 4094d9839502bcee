package server

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// served reports whether srv serves group/version/plural.
func served(srv *Server, group, version, plural string) bool {
	_, ok := srv.Registry().Snapshot().Lookup(group, version, plural)
	return ok
}

// writeFile writes data to dir/name.
func writeFile(t *testing.T, dir, name, data string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestResourcesDirectory starts with a directory holding a CRD and a
// resources-file type, then changes the files while the server runs.
func TestResourcesDirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the one-second poll several times")
	}
	dir := t.TempDir()
	writeFile(t, dir, "widgets.yaml", widgetCRD)
	writeFile(t, dir, "legacy.yaml", "resources:\n- {group: legacy.example.com, version: v1, kind: Thing, plural: things, namespaced: true}\n")
	srv := start(t, Config{ResourcesFile: dir})
	// Both are served when Start returns.
	if !served(srv, "example.com", "v1", "widgets") || !served(srv, "legacy.example.com", "v1", "things") {
		t.Fatal("widgets or things not served after Start")
	}

	// A new file: its CRD is installed.
	gadgets := strings.NewReplacer("widgets", "gadgets", "widget", "gadget", "Widget", "Gadget").Replace(widgetCRD)
	writeFile(t, dir, "gadgets.yaml", gadgets)
	waitFor(t, "gadgets served", func() bool { return served(srv, "example.com", "v1", "gadgets") })

	// A changed CRD: a second served version appears.
	v2 := widgetCRD + `  - name: v2
    served: true
    storage: false
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`
	writeFile(t, dir, "widgets.yaml", v2)
	waitFor(t, "widgets v2 served", func() bool { return served(srv, "example.com", "v2", "widgets") })

	// A broken file changes nothing; a removed file leaves its CRD.
	writeFile(t, dir, "widgets.yaml", "apiVersion: [")
	if err := os.Remove(filepath.Join(dir, "gadgets.yaml")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "zz-marker.yaml", strings.NewReplacer("widgets", "markers", "widget", "marker", "Widget", "Marker").Replace(widgetCRD))
	time.Sleep(2 * resourcesPollInterval)
	if !served(srv, "example.com", "v2", "widgets") || !served(srv, "example.com", "v1", "gadgets") {
		t.Error("a broken or removed file took a CRD away")
	}
	if served(srv, "example.com", "v1", "markers") {
		t.Error("a directory with a broken file was applied in part")
	}
	// Fixed again: the whole directory applies.
	writeFile(t, dir, "widgets.yaml", v2)
	waitFor(t, "markers served", func() bool { return served(srv, "example.com", "v1", "markers") })
}

// TestResourcesRestart checks CRDs from --resources persist and a second
// start with the same files succeeds (they exist: updated, not created).
func TestResourcesRestart(t *testing.T) {
	file := filepath.Join(t.TempDir(), "crds.yaml")
	writeFile(t, filepath.Dir(file), "crds.yaml", widgetCRD)
	data := t.TempDir()
	for range 2 {
		srv, err := Start(t.Context(), Config{Listen: "127.0.0.1:0", DataDir: data, UnsafeNoFsync: true, UnsafePlainHTTP: true, ResourcesFile: file})
		if err != nil {
			t.Fatal(err)
		}
		ok := served(srv, "example.com", "v1", "widgets")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = srv.Shutdown(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			t.Fatal("widgets not served after Start")
		}
	}
}
