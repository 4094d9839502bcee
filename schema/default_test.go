package schema

import (
	"encoding/json"
	"slices"
	"testing"
)

func encode(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDefault(t *testing.T) {
	s := MustCompile([]byte(`{"type":"object","properties":{"spec":{"type":"object","default":{},"properties":{
		"replicas":{"type":"integer","default":1},
		"mode":{"type":"string","default":"fast"},
		"nn":{"type":"string"},
		"ports":{"type":"array","items":{"type":"object","properties":{"protocol":{"type":"string","default":"TCP"},"port":{"type":"integer"}}}},
		"limits":{"type":"object","additionalProperties":{"type":"object","properties":{"unit":{"type":"string","default":"Mi"}}}}
	}}}}`))
	for _, tc := range []struct{ name, in, want string }{
		{"absent object gets its default, then its properties'", `{}`,
			`{"spec":{"mode":"fast","replicas":1}}`},
		{"set values stay", `{"spec":{"replicas":3,"mode":"slow"}}`,
			`{"spec":{"mode":"slow","replicas":3}}`},
		{"array items", `{"spec":{"ports":[{"port":80},{"port":53,"protocol":"UDP"}]}}`,
			`{"spec":{"mode":"fast","ports":[{"port":80,"protocol":"TCP"},{"port":53,"protocol":"UDP"}],"replicas":1}}`},
		{"additionalProperties values", `{"spec":{"limits":{"mem":{}}}}`,
			`{"spec":{"limits":{"mem":{"unit":"Mi"}},"mode":"fast","replicas":1}}`},
		{"null replaced by default, dropped without one", `{"spec":{"mode":null,"nn":null}}`,
			`{"spec":{"mode":"fast","replicas":1}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := decode(t, tc.in)
			s.Default(obj)
			if got := encode(t, obj); got != tc.want {
				t.Errorf("Default(%s) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}

func TestPrune(t *testing.T) {
	s := MustCompile([]byte(`{"type":"object","properties":{"spec":{"type":"object","properties":{
		"name":{"type":"string"},
		"free":{"type":"object","x-kubernetes-preserve-unknown-fields":true},
		"items":{"type":"array","items":{"type":"object","properties":{"a":{"type":"string"}}}},
		"tmpl":{"type":"object","x-kubernetes-embedded-resource":true,"properties":{"spec":{"type":"object","properties":{"x":{"type":"string"}}}}}
	}}}}`))
	for _, tc := range []struct {
		name, in, want string
		paths          []string
	}{
		{"nothing unknown", `{"apiVersion":"v1","kind":"W","metadata":{"name":"a"},"spec":{"name":"n"}}`,
			`{"apiVersion":"v1","kind":"W","metadata":{"name":"a"},"spec":{"name":"n"}}`, nil},
		{"unknown fields at each depth", `{"extra":1,"spec":{"name":"n","bad":true,"items":[{"a":"x","b":"y"}]}}`,
			`{"spec":{"items":[{"a":"x"}],"name":"n"}}`, []string{"extra", "spec.bad", "spec.items[0].b"}},
		{"preserve-unknown-fields keeps a subtree", `{"spec":{"free":{"anything":{"goes":1}}}}`,
			`{"spec":{"free":{"anything":{"goes":1}}}}`, nil},
		{"embedded resource keeps type and ObjectMeta only", `{"spec":{"tmpl":{"apiVersion":"v1","kind":"Pod",
			"metadata":{"name":"p","labels":{"a":"b"},"bogus":1},"spec":{"x":"1","y":"2"},"status":{}}}}`,
			`{"spec":{"tmpl":{"apiVersion":"v1","kind":"Pod","metadata":{"labels":{"a":"b"},"name":"p"},"spec":{"x":"1"}}}}`,
			[]string{"spec.tmpl.metadata.bogus", "spec.tmpl.spec.y", "spec.tmpl.status"}},
		// Root metadata is the store's: it decodes ObjectMeta itself.
		{"root metadata left alone", `{"metadata":{"name":"a","bogus":1}}`, `{"metadata":{"bogus":1,"name":"a"}}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := decode(t, tc.in)
			paths := s.Prune(obj)
			if got := encode(t, obj); got != encode(t, decode(t, tc.want)) {
				t.Errorf("Prune(%s) left %s, want %s", tc.in, got, tc.want)
			}
			if !slices.Equal(paths, tc.paths) {
				t.Errorf("Prune(%s) paths = %q, want %q", tc.in, paths, tc.paths)
			}
		})
	}
}
