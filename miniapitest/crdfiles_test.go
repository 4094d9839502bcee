package miniapitest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// crdDoc is a minimal CRD document for name (plural.group) with the given
// spec.names.kind.
func crdDoc(name, kind string) string {
	plural, group, _ := strings.Cut(name, ".")
	return "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: " + name +
		"\nspec:\n  group: " + group + "\n  scope: Namespaced\n  names: {plural: " + plural + ", kind: " + kind + "}\n" +
		"  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]\n"
}

const (
	kustomization = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- widgets.yaml\n"
	namespace     = "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n"
)

// TestReadCRDPaths checks that WithCRDs reads paths as envtest's readCRDs
// does: which files, which documents are skipped, what is an error.
func TestReadCRDPaths(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string // relative path → content; a trailing / makes a directory
		paths []string          // relative to the test's directory
		want  []string          // CRD names, in order; with the kind after "=" when it matters
		err   string            // a substring of the error; "" for none
	}{{
		name:  "directory: kustomization and a namespace skipped",
		files: map[string]string{"kustomization.yaml": kustomization, "ns.yaml": namespace, "widgets.yaml": crdDoc("widgets.example.com", "Widget")},
		paths: []string{"."},
		want:  []string{"widgets.example.com"},
	}, {
		name: "directory: only .json, .yaml and .yml, in name order, no subdirectories",
		files: map[string]string{
			"b.yml":          crdDoc("bs.example.com", "B"),
			"a.json":         `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"as.example.com"},"spec":{"group":"example.com","names":{"plural":"as","kind":"A"}}}`,
			"c.yaml":         crdDoc("cs.example.com", "C"),
			"d.txt":          crdDoc("ds.example.com", "D"),
			"README.md":      "# not YAML: {",
			"sub/e.yaml":     crdDoc("es.example.com", "E"),
			"f.yaml.orig":    crdDoc("fs.example.com", "F"),
			"emptydir.yaml/": "",
		},
		paths: []string{"."},
		want:  []string{"as.example.com", "bs.example.com", "cs.example.com"},
	}, {
		name:  "multi-document file: comments, empty documents and other kinds skipped",
		files: map[string]string{"all.yaml": "# CRDs\n---\n" + namespace + "---\n---\n" + crdDoc("widgets.example.com", "Widget") + "---\n" + kustomization},
		paths: []string{"all.yaml"},
		want:  []string{"widgets.example.com"},
	}, {
		name:  "a CRD without spec.group or spec.names.kind is skipped",
		files: map[string]string{"x.yaml": "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: partial}\nspec: {names: {plural: xs}}\n"},
		paths: []string{"x.yaml"},
		want:  nil,
	}, {
		name:  "a field of another kind that does not fit a CRD is no error",
		files: map[string]string{"x.yaml": "apiVersion: example.com/v1\nkind: Thing\nspec: {group: [1, 2], names: many}\n"},
		paths: []string{"x.yaml"},
		want:  nil,
	}, {
		name: "the last of several CRDs with one name wins, across paths",
		files: map[string]string{
			"one/w.yaml": crdDoc("widgets.example.com", "Widget") + "---\n" + crdDoc("gadgets.example.com", "Gadget"),
			"two/w.yaml": crdDoc("widgets.example.com", "Widget2"),
		},
		paths: []string{"one", "two"},
		want:  []string{"widgets.example.com=Widget2", "gadgets.example.com"},
	}, {
		name:  "a list of CRDs is read item by item",
		files: map[string]string{"l.yaml": "apiVersion: v1\nkind: List\nitems:\n- " + strings.ReplaceAll(strings.TrimSuffix(crdDoc("widgets.example.com", "Widget"), "\n"), "\n", "\n  ") + "\n- " + strings.ReplaceAll(strings.TrimSuffix(namespace, "\n"), "\n", "\n  ") + "\n"},
		paths: []string{"l.yaml"},
		want:  []string{"widgets.example.com"},
	}, {
		name:  "an empty directory holds no CRDs",
		files: map[string]string{"empty/": ""},
		paths: []string{"empty"},
		want:  nil,
	}, {
		name:  "invalid YAML is an error",
		files: map[string]string{"bad.yaml": crdDoc("widgets.example.com", "Widget") + "---\nkind: [unclosed\n"},
		paths: []string{"."},
		err:   "bad.yaml: document 2",
	}, {
		name:  "a document that is not an object is an error",
		files: map[string]string{"s.yaml": "just a string\n"},
		paths: []string{"s.yaml"},
		err:   "not an object",
	}, {
		name:  "a v1beta1 CRD is an error",
		files: map[string]string{"old.yaml": strings.Replace(crdDoc("widgets.example.com", "Widget"), "/v1\n", "/v1beta1\n", 1)},
		paths: []string{"old.yaml"},
		err:   "only apiextensions.k8s.io/v1 is served",
	}, {
		name:  "a CRD without a name is an error",
		files: map[string]string{"x.yaml": strings.Replace(crdDoc("widgets.example.com", "Widget"), "name: widgets.example.com", "labels: {}", 1)},
		paths: []string{"x.yaml"},
		err:   "without metadata.name",
	}, {
		name:  "a missing path is an error",
		paths: []string{"missing"},
		err:   "no such file",
	}, {
		name:  "a file named directly with another extension is an error",
		files: map[string]string{"crd.txt": crdDoc("widgets.example.com", "Widget")},
		paths: []string{"crd.txt"},
		err:   "not a .json, .yaml or .yml file",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tc.files {
				p := filepath.Join(dir, name)
				if strings.HasSuffix(name, "/") {
					if err := os.MkdirAll(p, 0o755); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var paths []string
			for _, p := range tc.paths {
				paths = append(paths, filepath.Join(dir, p))
			}
			crds, err := readCRDPaths(paths)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("readCRDPaths: error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("readCRDPaths: %v", err)
			}
			var got []string
			for _, crd := range crds {
				got = append(got, crd.Metadata.Name)
			}
			var want []string
			for i, w := range tc.want {
				name, kind, hasKind := strings.Cut(w, "=")
				want = append(want, name)
				if !hasKind || i >= len(crds) {
					continue
				}
				var spec struct {
					Names struct{ Kind string } `json:"names"`
				}
				if err := json.Unmarshal(crds[i].Fields["spec"], &spec); err != nil {
					t.Fatal(err)
				}
				if spec.Names.Kind != kind {
					t.Errorf("CRD %s has kind %s, want %s (the last definition)", name, spec.Names.Kind, kind)
				}
			}
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("readCRDPaths read %q, want %q", got, want)
			}
		})
	}
}
