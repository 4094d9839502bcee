package server

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzParseResources feeds any file to the --resources reader (and
// miniapitest's WithCRDs): multi-document YAML or JSON holding CRDs,
// Lists of them and resources-file documents. What it accepts is
// well-formed (each CRD an apiextensions.k8s.io/v1 object with a name),
// and reading the CRDs back from one List of them gives the same CRDs.
func FuzzParseResources(f *testing.F) {
	for _, s := range []string{
		"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\nspec:\n  group: example.com\n" +
			"  names: {kind: Widget, plural: widgets}\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n" +
			"    schema: {openAPIV3Schema: {type: object}}\n",
		"# comment\n---\nresources:\n- {group: example.com, version: v1, kind: Gadget, plural: gadgets}\n--- \n...\n",
		`{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"a.b"}}]}`,
		"kind: CustomResourceDefinitionList\nitems:\n- {apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, metadata: {name: x}}\n- {kind: List, items: []}\n",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n",
		"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {}\n",
		"a: &a [*a, *a]\nb: &b [*a, *a]\n", "---\t\n---\n", "- 1\n- 2\n", "\"x\"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseResources(data)
		if err != nil {
			return
		}
		for _, crd := range r.CRDs {
			if crd == nil || crd.APIVersion != crdAPIVersion || crd.Kind != crdKind || crd.Metadata.Name == "" {
				t.Fatalf("ParseResources(%q) gave the CRD %+v", data, crd)
			}
		}
		for _, typ := range r.Types {
			if typ.Version == "" || typ.Kind == "" || typ.Plural == "" {
				t.Fatalf("ParseResources(%q) gave the type %+v", data, typ)
			}
		}
		if len(r.CRDs) == 0 {
			return
		}
		list, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": r.CRDs})
		if err != nil {
			t.Fatalf("the CRDs of %q do not encode: %v", data, err)
		}
		again, err := ParseResources(list)
		if err != nil {
			t.Fatalf("the CRDs of %q, as a List, do not parse: %v\n%s", data, err, list)
		}
		a, _ := json.Marshal(again.CRDs)
		if !bytes.Equal(a, mustJSON(t, r.CRDs)) || len(again.Types) != 0 {
			t.Fatalf("the CRDs of %q, as a List, read back as\n%s\nnot\n%s", data, a, mustJSON(t, r.CRDs))
		}
	})
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
