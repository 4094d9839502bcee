package endpoints

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/miniapi/miniapi/registry"
	"github.com/miniapi/miniapi/schema"
	"k8s.io/kube-openapi/pkg/spec3"
)

// gadgetSchema is a custom type's structural schema with what CRDs put
// in theirs: defaults, enums, nested objects and lists, validation rules
// and the x-kubernetes extensions.
const gadgetSchema = `{"type":"object","properties":{
	"spec":{"type":"object","required":["size"],
		"x-kubernetes-validations":[{"rule":"self.size <= 10","message":"too big"}],
		"properties":{
			"size":{"type":"integer","format":"int32","minimum":1,"default":1},
			"mode":{"type":"string","enum":["a","b"]},
			"tags":{"type":"array","items":{"type":"string"},"x-kubernetes-list-type":"set"},
			"ports":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],
				"items":{"type":"object","required":["name"],"properties":{"name":{"type":"string"},"port":{"type":"integer"}}}},
			"labels":{"type":"object","additionalProperties":{"type":"string"}},
			"raw":{"x-kubernetes-preserve-unknown-fields":true},
			"quantity":{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}]},
			"name":{"type":"string","pattern":"^[a-z]+$","maxLength":20,"nullable":true},
			"selector":{"type":"object","x-kubernetes-map-type":"atomic","properties":{"app":{"type":"string"}}},
			"template":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true}}},
	"status":{"type":"object","properties":{"ready":{"type":"boolean"}}}}}`

// TestOpenAPIV3RoundTrip reads each group version's OpenAPI v3 document
// into kube-openapi's spec3.OpenAPI, writes it back and compares, as
// Kubernetes' own OpenAPI test does: every field of every document is
// one kube-openapi knows, with the shape it knows, so kubectl and
// client-go lose nothing reading it.
func TestOpenAPIV3RoundTrip(t *testing.T) {
	f := newFixture(t)
	gadgets := registry.Type{Group: "example.org", Version: "v1", Kind: "Gadget", Plural: "gadgets", Namespaced: true,
		Schema: json.RawMessage(gadgetSchema), Strategy: registry.GenericStrategy{Status: true}}
	gadgets.Strategy = registry.SchemaStrategy(schema.MustCompile([]byte(gadgetSchema)), &gadgets)
	// The fixture serves the built-in kinds, CustomResourceDefinitions
	// among them.
	if err := f.reg.Add(gadgets); err != nil {
		t.Fatal(err)
	}
	idx := f.v3Index()
	for _, gv := range []string{"apis/example.org/v1", "apis/apiextensions.k8s.io/v1"} {
		if _, ok := idx[gv]; !ok {
			t.Fatalf("no document for %s in %v", gv, idx)
		}
	}
	paths := make([]string, 0, len(idx))
	for p := range idx {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		t.Run(p, func(t *testing.T) {
			r := f.Do("GET", idx[p], nil)
			if r.Code != 200 {
				t.Fatalf("GET %s = %d", idx[p], r.Code)
			}
			var doc spec3.OpenAPI
			if err := json.Unmarshal(r.Body, &doc); err != nil {
				t.Fatalf("unmarshal into spec3.OpenAPI: %v", err)
			}
			again, err := json.Marshal(&doc)
			if err != nil {
				t.Fatalf("marshal spec3.OpenAPI: %v", err)
			}
			var served, roundTripped any
			if err := json.Unmarshal(r.Body, &served); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(again, &roundTripped); err != nil {
				t.Fatal(err)
			}
			if diffs := jsonDiff("", served, roundTripped, nil); len(diffs) > 0 {
				if len(diffs) > 20 {
					diffs = append(diffs[:20], "...")
				}
				t.Errorf("the document changes through spec3.OpenAPI (served → round-tripped):\n%s", strings.Join(diffs, "\n"))
			}
			var second spec3.OpenAPI
			if err := json.Unmarshal(again, &second); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(doc, second) {
				t.Error("spec3.OpenAPI differs after a second round trip")
			}
		})
	}
}

// jsonDiff lists where two decoded JSON values differ, by path.
func jsonDiff(path string, a, b any, out []string) []string {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			return append(out, path+": object became "+short(b))
		}
		keys := make([]string, 0, len(av)+len(bv))
		for k := range av {
			keys = append(keys, k)
		}
		for k := range bv {
			if _, ok := av[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			x, inA := av[k]
			y, inB := bv[k]
			switch {
			case !inB:
				out = append(out, path+"/"+k+": dropped "+short(x))
			case !inA:
				out = append(out, path+"/"+k+": added "+short(y))
			default:
				out = jsonDiff(path+"/"+k, x, y, out)
			}
		}
		return out
	case []any:
		bv, ok := b.([]any)
		if !ok || len(bv) != len(av) {
			return append(out, path+": "+short(a)+" became "+short(b))
		}
		for i := range av {
			out = jsonDiff(path+"/"+itoa(i), av[i], bv[i], out)
		}
		return out
	}
	if !reflect.DeepEqual(a, b) {
		out = append(out, path+": "+short(a)+" became "+short(b))
	}
	return out
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// short renders a JSON value in at most 100 characters.
func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 100 {
		return string(b[:100]) + "..."
	}
	return string(b)
}
