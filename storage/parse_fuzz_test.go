package storage

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The parsers of list and watch parameters a client sends as they are:
// continue tokens and resourceVersions. Each target checks what a
// backend relies on after a parse succeeds, and that a refusal is an
// Invalid error (a 400 or 422 to the client, never a 500).

// fuzzPrefix is a list prefix as the etcd3 store and the cacher pass it.
const fuzzPrefix = "/registry/core/configmaps/"

// FuzzDecodeContinue feeds DecodeContinue any token. An accepted one
// must name a key under the prefix at a revision (0 for "the latest"),
// and one at a positive revision encode back to a token that decodes to
// the same values; a refused one is Invalid.
func FuzzDecodeContinue(f *testing.F) {
	for _, seed := range []struct {
		key string
		rev int64
	}{{"ns1/a\x00", 5}, {"a", 1}, {"ns/name-with.dots\x00", 1 << 40}} {
		tok, err := EncodeContinue(fuzzPrefix+seed.key, fuzzPrefix, seed.rev)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(tok)
	}
	f.Add("")
	f.Add("not base64!")
	f.Add("eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiIuLi9zZWNyZXRzLyJ9") // start "../secrets/"
	f.Fuzz(func(t *testing.T, token string) {
		key, rev, err := DecodeContinue(token, fuzzPrefix)
		if err != nil {
			if !isInvalid(err) {
				t.Fatalf("DecodeContinue(%q) = %v, want an Invalid error", token, err)
			}
			return
		}
		if rev < 0 || !strings.HasPrefix(key, fuzzPrefix) || len(key) == len(fuzzPrefix) {
			t.Fatalf("DecodeContinue(%q) = %q, %d: not a key under %q at a revision", token, key, rev, fuzzPrefix)
		}
		// The key must stay under the prefix: no way back up the tree.
		if rel := key[len(fuzzPrefix):]; strings.HasPrefix(rel, "/") || strings.Contains("/"+rel+"/", "/../") {
			t.Fatalf("DecodeContinue(%q) = %q: escapes %q", token, key, fuzzPrefix)
		}
		if rev == 0 {
			return // a token for the latest revision: the server hands none out
		}
		again, err := EncodeContinue(key, fuzzPrefix, rev)
		if err != nil {
			t.Fatalf("EncodeContinue(%q) of a decoded token: %v", key, err)
		}
		key2, rev2, err := DecodeContinue(again, fuzzPrefix)
		if err != nil || key2 != key || rev2 != rev {
			t.Fatalf("re-encoded token of %q, %d decodes to %q, %d, %v", key, rev, key2, rev2, err)
		}
	})
}

// FuzzContinueRoundTrip checks the tokens the server hands out: for any
// object the registry accepts (a namespace that is a DNS label, a name
// that is a valid path segment, the loosest rule a kind has), the token
// of a page ending at it decodes to the key just after it and the list's
// revision, whether the list spans one namespace or all of them. Names
// are valid UTF-8: every name is decoded from JSON, which replaces
// anything else.
func FuzzContinueRoundTrip(f *testing.F) {
	f.Add("ns1", "a", int64(7))
	f.Add("kube-system", "system:controller:foo", int64(1))
	f.Add("ns", "a..b", int64(3))
	f.Add("ns", "x.y_z~", int64(1<<62))
	f.Fuzz(func(t *testing.T, ns, name string, rev int64) {
		if rev <= 0 || len(content.IsPathSegmentName(name)) > 0 || name == "" || !utf8.ValidString(name) || len(validation.IsDNS1123Label(ns)) > 0 {
			return
		}
		keys := ResourceKeys{Group: "rbac.authorization.k8s.io", Resource: "roles", Namespaced: true}
		last := keys.Key(ns, name)
		for _, prefix := range []string{keys.Prefix(), keys.NamespacePrefix(ns)} {
			tok, err := EncodeContinue(last+"\x00", prefix, rev)
			if err != nil {
				t.Fatalf("EncodeContinue(%q, %q): %v", last, prefix, err)
			}
			key, got, err := DecodeContinue(tok, prefix)
			if err != nil || key != last+"\x00" || got != rev {
				t.Fatalf("token after %q under %q decodes to %q, %d, %v; want %q, %d", last, prefix, key, got, err, last+"\x00", rev)
			}
		}
	})
}

// FuzzParseResourceVersion feeds ParseResourceVersion any string. It
// accepts what kube-apiserver accepts (strconv.ParseUint: decimal
// digits, no sign); an accepted value within int64 formats back to the
// same number, and the option rules built on it agree with it.
func FuzzParseResourceVersion(f *testing.F) {
	for _, s := range []string{"", "0", "1", "42", "007", "-1", "+5", "-0", "1e3", " 1", "9223372036854775807", "9223372036854775808", "0x10"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseResourceVersion(s)
		if err != nil {
			if !isInvalid(err) {
				t.Fatalf("ParseResourceVersion(%q) = %v, want an Invalid error", s, err)
			}
			if s == "" {
				t.Fatal(`ParseResourceVersion("") failed`)
			}
			if (ListOptions{ResourceVersion: s}).Validate() == nil {
				t.Fatalf("ListOptions with resourceVersion %q validate", s)
			}
			if (WatchOptions{ResourceVersion: s}).SendsInitialEvents() || (ListOptions{ResourceVersion: s, Limit: 1}).Exact() {
				t.Fatalf("an invalid resourceVersion %q selects a behaviour", s)
			}
			return
		}
		if strings.Trim(s, "0123456789") != "" {
			t.Fatalf("ParseResourceVersion(%q) = %d: kube-apiserver refuses anything but digits", s, n)
		}
		if n < 0 {
			t.Fatalf("ParseResourceVersion(%q) = %d", s, n)
		}
		if s != "" && n < math.MaxInt64 { // larger ones read as the largest
			if want := strings.TrimLeft(s, "0"); FormatResourceVersion(n) != want && !(want == "" && n == 0) {
				t.Fatalf("ParseResourceVersion(%q) = %d, which formats as %q", s, n, FormatResourceVersion(n))
			}
		}
		if back, err := ParseResourceVersion(FormatResourceVersion(n)); err != nil || back != n {
			t.Fatalf("resourceVersion %d formats as %q, which parses as %d, %v", n, FormatResourceVersion(n), back, err)
		}
		if err := (ListOptions{ResourceVersion: s}).Validate(); err != nil {
			t.Fatalf("ListOptions with resourceVersion %q: %v", s, err)
		}
		if got := (WatchOptions{ResourceVersion: s}).SendsInitialEvents(); got != (n == 0) {
			t.Fatalf("watch from %q sends initial events: %v", s, got)
		}
		if got := (ListOptions{ResourceVersion: s, Limit: 1}).Exact(); got != (n > 0) {
			t.Fatalf("paged list at %q is exact: %v", s, got)
		}
	})
}

func isInvalid(err error) bool {
	var se *Error
	return errors.As(err, &se) && se.Code == CodeInvalid
}

// FuzzDefaultAttrs checks the hand-written scanner behind DefaultAttrs
// against encoding/json on what storage holds: any JSON value as the
// server encodes it (json.Marshal of what a body decoded to). Both must
// agree on whether the metadata decodes, and on the labels, name and
// namespace.
func FuzzDefaultAttrs(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"ns","labels":{"app":"x","e":"\u00e9"}},"data":{"k":"}"}}`))
	f.Add([]byte(`{"metadata":{"labels":null,"name":null}}`))
	f.Add([]byte(`{"metadata":{"labels":{"a":1}}}`))
	f.Add([]byte(`{"metadata":{"Name":"x","name":"y"}}`))
	f.Add([]byte(`{"metadata":"x"}`))
	f.Add([]byte(`[{"metadata":{}}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var v any
		if json.Unmarshal(data, &v) != nil {
			return
		}
		stored, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var want objectMeta
		wantErr := json.Unmarshal(stored, &want)
		got, err := DefaultAttrs(stored)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("DefaultAttrs(%s) error %v, encoding/json error %v", stored, err, wantErr)
		}
		if err != nil {
			return
		}
		if w := attrsOf(&want); !reflect.DeepEqual(got, w) {
			t.Fatalf("DefaultAttrs(%s) = %+v, encoding/json reads %+v", stored, got, w)
		}
	})
}

// FuzzInjectResourceVersion checks the in-place edits of stored objects:
// injecting a resourceVersion into an object stored without one sets
// exactly metadata.resourceVersion, and removing it again gives back the
// stored bytes.
func FuzzInjectResourceVersion(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"v"}}`), int64(5))
	f.Add([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}`), int64(1))
	f.Add([]byte(`{"kind":"K","metadata":{"name":"a","resourceVersion":"3"}}`), int64(9))
	f.Add([]byte(`{"kind":"K"}`), int64(2))
	f.Fuzz(func(t *testing.T, data []byte, rev int64) {
		if rev <= 0 {
			return
		}
		var obj map[string]any
		if json.Unmarshal(data, &obj) != nil || obj == nil {
			return
		}
		meta, ok := obj["metadata"].(map[string]any)
		if !ok && obj["metadata"] != nil {
			return // not an object storage holds
		}
		if ok {
			delete(meta, "resourceVersion")
		}
		stored, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		out, err := InjectResourceVersion(stored, rev)
		if err != nil {
			t.Fatalf("InjectResourceVersion(%s): %v", stored, err)
		}
		var got map[string]any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("InjectResourceVersion(%s) = %s: %v", stored, out, err)
		}
		gotMeta, _ := got["metadata"].(map[string]any)
		if gotMeta["resourceVersion"] != FormatResourceVersion(rev) {
			t.Fatalf("InjectResourceVersion(%s, %d) = %s", stored, rev, out)
		}
		delete(gotMeta, "resourceVersion")
		if meta == nil {
			obj["metadata"] = map[string]any{}
		}
		if !reflect.DeepEqual(got, obj) {
			t.Fatalf("InjectResourceVersion(%s, %d) = %s: changed more than the resourceVersion", stored, rev, out)
		}
		if ok {
			back, err := SetResourceVersion(out, 0)
			if err != nil || !bytes.Equal(back, stored) {
				t.Fatalf("removing the resourceVersion from %s gives %s, %v; want the stored %s", out, back, err, stored)
			}
		}
	})
}

// FuzzObjectMembers checks ObjectMembers against encoding/json: on any
// valid JSON object it gives each member's key, decoded, and value, as
// written, in order, and it reports true for it.
func FuzzObjectMembers(f *testing.F) {
	f.Add([]byte(`{"name":"a","managedFields":[{"f:x":{"}":1}}],"labels":{"a":"b"}}`))
	f.Add([]byte(` { "n\u0061me" : "a" , "é":null, "a":"b","a":[] } `))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"a":1}x`))
	f.Fuzz(func(t *testing.T, data []byte) {
		type kv struct {
			key   string
			value string
		}
		var got []kv
		ok := ObjectMembers(data, func(key, value []byte) bool {
			got = append(got, kv{string(key), string(value)})
			return true
		})
		if !json.Valid(data) {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			if ok {
				t.Fatalf("ObjectMembers(%q) walked a value that is not an object", data)
			}
			return
		}
		var want []kv
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				t.Fatal(err)
			}
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
			want = append(want, kv{tok.(string), string(v)})
		}
		if !ok {
			t.Fatalf("ObjectMembers(%q) reported false for a valid object", data)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("ObjectMembers(%q) = %q, encoding/json reads %q", data, got, want)
		}
		for _, m := range got {
			s, ok := JSONString([]byte(m.value))
			if isString := m.value[0] == '"'; ok != isString {
				t.Fatalf("JSONString(%s) reports %v", m.value, ok)
			}
			var w string
			if err := json.Unmarshal([]byte(m.value), &w); ok && (err != nil || s != w) {
				t.Fatalf("JSONString(%s) = %q; encoding/json reads %q, %v", m.value, s, w, err)
			}
		}
	})
}
