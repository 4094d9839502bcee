package storage

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestInjectResourceVersion(t *testing.T) {
	cases := []struct {
		name   string
		stored string
	}{
		{"canonical", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"ns"},"data":{"k":"v"}}`},
		{"empty metadata", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{},"data":{}}`},
		{"escaped quote in kind", `{"apiVersion":"v1","kind":"A\"metadata\":{","metadata":{"name":"a"}}`},
		{"other key order", `{"kind":"ConfigMap","metadata":{"name":"a"},"apiVersion":"v1"}`},
		{"no metadata", `{"apiVersion":"v1","kind":"ConfigMap"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := InjectResourceVersion([]byte(tc.stored), 42)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Kind     string `json:"kind"`
				Metadata struct {
					Name            string `json:"name"`
					ResourceVersion string `json:"resourceVersion"`
				} `json:"metadata"`
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("result is not JSON: %v: %s", err, out)
			}
			if got.Metadata.ResourceVersion != "42" {
				t.Fatalf("resourceVersion = %q in %s", got.Metadata.ResourceVersion, out)
			}
			var in, res map[string]any
			json.Unmarshal([]byte(tc.stored), &in)
			json.Unmarshal(out, &res)
			if in["kind"] != res["kind"] || in["apiVersion"] != res["apiVersion"] {
				t.Fatalf("type changed: %s", out)
			}
		})
	}
}

func TestSetResourceVersionReplacesAndRemoves(t *testing.T) {
	in := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"7"},"data":{"x":"1"}}`
	out, err := SetResourceVersion([]byte(in), 9)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"9"},"data":{"x":"1"}}`
	if string(out) != want {
		t.Fatalf("got %s\nwant %s", out, want)
	}
	out, err = SetResourceVersion([]byte(in), 0)
	if err != nil {
		t.Fatal(err)
	}
	want = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"x":"1"}}`
	if string(out) != want {
		t.Fatalf("got %s\nwant %s", out, want)
	}
	for _, bad := range []string{`[1]`, `null`, `{"metadata":`, `{"metadata":5}`} {
		if _, err := SetResourceVersion([]byte(bad), 3); err == nil {
			t.Fatalf("want an error for %s", bad)
		}
	}
}

func TestSetResourceVersionKeepsLayout(t *testing.T) {
	cases := []struct {
		name, in string
		rev      int64
		want     string
	}{
		{"remove first", `{"apiVersion":"v1","kind":"K","metadata":{"resourceVersion":"3","uid":"u","name":"a"}}`, 0,
			`{"apiVersion":"v1","kind":"K","metadata":{"uid":"u","name":"a"}}`},
		{"remove middle", `{"metadata":{"uid":"u","resourceVersion":"3","name":"a"},"kind":"K"}`, 0,
			`{"metadata":{"uid":"u","name":"a"},"kind":"K"}`},
		{"remove last", `{"metadata":{"uid":"u", "resourceVersion" : "3" },"x":[1,{"}":"]"}]}`, 0,
			`{"metadata":{"uid":"u" },"x":[1,{"}":"]"}]}`},
		{"remove only", `{"metadata":{"resourceVersion":"3"}}`, 0, `{"metadata":{}}`},
		{"remove absent", `{"metadata":{"name":"a"}}`, 0, `{"metadata":{"name":"a"}}`},
		{"replace", `{"spec":{"metadata":{"resourceVersion":"1"}},"metadata":{"uid":"u","resourceVersion":"3"}}`, 12,
			`{"spec":{"metadata":{"resourceVersion":"1"}},"metadata":{"uid":"u","resourceVersion":"12"}}`},
		{"insert", `{"metadata":{"uid":"u"}}`, 5, `{"metadata":{"resourceVersion":"5","uid":"u"}}`},
		{"insert empty", `{"metadata":{ }}`, 5, `{"metadata":{"resourceVersion":"5" }}`},
		{"no metadata", `{"kind":"K"}`, 5, `{"kind":"K","metadata":{"resourceVersion":"5"}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := SetResourceVersion([]byte(tc.in), tc.rev)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tc.want {
				t.Fatalf("got  %s\nwant %s", out, tc.want)
			}
		})
	}
}

func TestStripInjectedResourceVersionRoundTrips(t *testing.T) {
	for _, stored := range []string{
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"ns","uid":"u"},"data":{"k":"v"}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{},"data":{}}`,
		`{"kind":"ConfigMap","metadata":{"name":"a"},"apiVersion":"v1"}`,
	} {
		withRV, err := InjectResourceVersion([]byte(stored), 42)
		if err != nil {
			t.Fatal(err)
		}
		back, err := SetResourceVersion(withRV, 0)
		if err != nil {
			t.Fatal(err)
		}
		if string(back) != stored {
			t.Errorf("strip(inject(x)) = %s, want %s", back, stored)
		}
	}
}

func TestContinueTokenRoundTrip(t *testing.T) {
	tok, err := EncodeContinue("/registry/core/configmaps/ns/b\x00", "/registry/core/configmaps/", 17)
	if err != nil {
		t.Fatal(err)
	}
	key, rev, err := DecodeContinue(tok, "/registry/core/configmaps/")
	if err != nil || rev != 17 || key != "/registry/core/configmaps/ns/b\x00" {
		t.Fatalf("got %q %d %v", key, rev, err)
	}
	for _, bad := range []string{"", "!!!", "e30", "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MCwic3RhcnQiOiJhIn0"} {
		if _, _, err := DecodeContinue(bad, "/p/"); !IsInvalid(err) {
			t.Errorf("DecodeContinue(%q) = %v, want Invalid", bad, err)
		}
	}
}

func TestResourceKeys(t *testing.T) {
	cases := []struct {
		name       string
		keys       ResourceKeys
		ns, obj    string
		wantKey    string
		wantPrefix string
	}{
		{"core namespaced", ResourceKeys{Resource: "configmaps", Namespaced: true}, "default", "a", "/registry/core/configmaps/default/a", "/registry/core/configmaps/default/"},
		{"group cluster", ResourceKeys{Root: "/x/", Group: "example.com", Resource: "widgets"}, "", "w", "/x/example.com/widgets/w", "/x/example.com/widgets/"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.keys.Key(tc.ns, tc.obj); got != tc.wantKey {
				t.Fatalf("Key = %q, want %q", got, tc.wantKey)
			}
			if got := tc.keys.NamespacePrefix(tc.ns); got != tc.wantPrefix {
				t.Fatalf("NamespacePrefix = %q, want %q", got, tc.wantPrefix)
			}
			ns, name, err := tc.keys.Parse(tc.wantKey)
			if err != nil || ns != tc.ns || name != tc.obj {
				t.Fatalf("Parse = %q %q %v", ns, name, err)
			}
		})
	}
	k := ResourceKeys{Resource: "configmaps", Namespaced: true}
	for _, bad := range []string{"/registry/core/configmaps/ns", "/registry/core/secrets/ns/a", "/registry/core/configmaps/ns/a/b"} {
		if _, _, err := k.Parse(bad); err == nil {
			t.Errorf("Parse(%q) succeeded", bad)
		}
	}
}

func TestDefaultAttrsFastAndSlowPathsAgree(t *testing.T) {
	cases := []string{
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"ns","labels":{"x":"}{\"y"}},"data":{"k":"{{{"}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"resourceVersion":"5","name":"b","annotations":{"a":"[1,{2}]"}},"data":{}}`,
		`{"kind":"ConfigMap","metadata":{"name":"c","labels":{"k":"v"}},"apiVersion":"v1"}`, // not canonical: slow path
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}`,
	}
	for _, in := range cases {
		fast, err := DefaultAttrs([]byte(in))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		var full objectMeta
		if err := json.Unmarshal([]byte(in), &full); err != nil {
			t.Fatal(err)
		}
		want := attrsOf(&full)
		if fast.Fields["metadata.name"] != want.Fields["metadata.name"] || fast.Fields["metadata.namespace"] != want.Fields["metadata.namespace"] ||
			len(fast.Labels) != len(want.Labels) || fast.Labels["x"] != want.Labels["x"] || fast.Labels["k"] != want.Labels["k"] {
			t.Fatalf("%s: fast %+v, want %+v", in, fast, want)
		}
	}
	if _, err := DefaultAttrs([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":`)); err == nil {
		t.Fatal("truncated object decoded")
	}
}

func BenchmarkDefaultAttrs(b *testing.B) {
	data := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"resourceVersion":"5","name":"b","namespace":"ns","labels":{"app":"web"}},"data":{"k":"` + strings.Repeat("x", 1000) + `"}}`)
	b.Run("metadata-span", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DefaultAttrs(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The baseline: what DefaultAttrs did before, decoding the whole object.
	b.Run("whole-object", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m objectMeta
			if err := json.Unmarshal(data, &m); err != nil {
				b.Fatal(err)
			}
			_ = attrsOf(&m)
		}
	})
}

func TestMetadataJSON(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"canonical", `{"apiVersion":"v1","kind":"K","metadata":{"name":"a","labels":{"x":"}"}},"data":{"k":"v"}}`, `{"name":"a","labels":{"x":"}"}}`},
		{"sorted keys", `{"apiVersion":"v1","data":{"m":"{\"metadata\":1}"},"kind":"K","metadata":{"name":"b"}}`, `{"name":"b"}`},
		{"spaces", "{ \"spec\" : [1, {\"a\": true}] ,\n \"metadata\" : {\"name\":\"c\"} }", `{"name":"c"}`},
		{"no metadata", `{"apiVersion":"v1","kind":"K"}`, ``},
		{"not an object", `[1,2]`, ``},
		{"truncated", `{"apiVersion":"v1","data":{"k":`, ``},
		{"unterminated string", `{"apiVersion":"v1`, ``},
		{"empty", ``, ``},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(MetadataJSON([]byte(tc.in))); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func FuzzMetadataJSON(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"v1","kind":"K","metadata":{"name":"a"}}`))
	f.Add([]byte(`{"metadata":{"name":"a"},"x":[1,2,{"y":"]"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		span := MetadataJSON(data) // must not panic
		if span != nil && json.Valid(data) && !json.Valid(span) {
			t.Fatalf("span %q of valid %q is not valid JSON", span, data)
		}
	})
}
