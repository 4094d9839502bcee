package storage

import (
	"encoding/json"
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
	if _, err := SetResourceVersion([]byte(`[1]`), 3); err == nil {
		t.Fatal("want an error for a non-object")
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
