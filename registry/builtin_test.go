package registry

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/miniapi/miniapi/api"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// builtin returns the built-in type with the given kind.
func builtin(t *testing.T, kind string) Type {
	t.Helper()
	for _, typ := range BuiltinTypes() {
		if typ.Kind == kind {
			return typ
		}
	}
	t.Fatalf("no built-in type %s", kind)
	return Type{}
}

// applyWrite runs a strategy the way the Store does on a write: defaults,
// normalization, then metadata and strategy validation. old is nil for a
// create.
func applyWrite(typ Type, obj, old *api.Object) (field.ErrorList, error) {
	if d, ok := typ.Strategy.(Defaulter); ok {
		d.Default(obj)
	}
	if n, ok := typ.Strategy.(Normalizer); ok {
		if err := n.Normalize(obj); err != nil {
			return nil, err
		}
	}
	if p, ok := typ.Strategy.(CreatePreparer); ok && old == nil {
		p.PrepareForCreate(obj)
	}
	errs := ValidateObjectMeta(&obj.Metadata, typ.Namespaced, typ.NameValidation)
	if old == nil {
		if v, ok := typ.Strategy.(CreateValidator); ok {
			errs = append(errs, v.ValidateCreate(obj)...)
		}
		return errs, nil
	}
	errs = append(errs, ValidateObjectMetaUpdate(&obj.Metadata, &old.Metadata)...)
	if v, ok := typ.Strategy.(UpdateValidator); ok {
		errs = append(errs, v.ValidateUpdate(obj, old)...)
	}
	return errs, nil
}

// writeCase is one write of a built-in type and what it must produce:
// a 400 with badRequest as message, the field errors in invalid, or
// success with the top-level fields in fields (compact JSON; "" means
// absent).
type writeCase struct {
	name       string
	old        string // for updates: an object that must be accepted on create
	body       string
	badRequest string
	invalid    []string
	fields     map[string]string
}

func runWriteCases(t *testing.T, kind string, cases []writeCase) {
	t.Helper()
	typ := builtin(t, kind)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var old *api.Object
			if tc.old != "" {
				old = mustObject(t, tc.old)
				errs, err := applyWrite(typ, old, nil)
				if err != nil || len(errs) > 0 {
					t.Fatalf("old object refused: %v %v", err, errs)
				}
			}
			obj := mustObject(t, tc.body)
			if old != nil {
				obj.Metadata.UID = old.Metadata.UID
				obj.Metadata.CreationTimestamp = old.Metadata.CreationTimestamp
			}
			errs, err := applyWrite(typ, obj, old)
			if tc.badRequest != "" {
				var se *api.StatusError
				if !errors.As(err, &se) || se.ErrStatus.Code != http.StatusBadRequest || se.ErrStatus.Reason != api.ReasonBadRequest {
					t.Fatalf("err = %v, want a 400 BadRequest", err)
				}
				if se.ErrStatus.Message != tc.badRequest {
					t.Errorf("message:\n got  %q\n want %q", se.ErrStatus.Message, tc.badRequest)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			assertErrors(t, errs, tc.invalid)
			for name, want := range tc.fields {
				if got := string(obj.Fields[name]); got != want {
					t.Errorf("field %s = %s, want %s", name, got, want)
				}
			}
		})
	}
}

func TestBuiltinTypes(t *testing.T) {
	want := []struct {
		group, kind, plural string
		short               []string
		namespaced          bool
		rule                NameRule
		fields              []string
		status              bool
	}{
		{"", "Namespace", "namespaces", []string{"ns"}, false, NameLabel, []string{"status.phase"}, true},
		{"", "ConfigMap", "configmaps", []string{"cm"}, true, NameSubdomain, nil, false},
		{"", "Secret", "secrets", nil, true, NameSubdomain, []string{"type"}, false},
		{"", "Event", "events", []string{"ev"}, true, NamePathSegment, []string{
			"involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
			"involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath",
			"reason", "reportingComponent", "source", "type",
		}, false},
		{"coordination.k8s.io", "Lease", "leases", nil, true, NameSubdomain, nil, false},
	}
	got := BuiltinTypes()
	if len(got) != len(want) {
		t.Fatalf("%d types, want %d", len(got), len(want))
	}
	for i, w := range want {
		typ := got[i]
		t.Run(w.kind, func(t *testing.T) {
			if typ.Group != w.group || typ.Version != "v1" || typ.Kind != w.kind || typ.Plural != w.plural {
				t.Errorf("names = %s/%s %s %s", typ.Group, typ.Version, typ.Kind, typ.Plural)
			}
			if typ.Singular != strings.ToLower(w.kind) {
				t.Errorf("singular = %q", typ.Singular)
			}
			if !slices.Equal(typ.ShortNames, w.short) || len(typ.Categories) != 0 {
				t.Errorf("shortNames = %v, categories = %v", typ.ShortNames, typ.Categories)
			}
			if typ.Namespaced != w.namespaced || typ.NameValidation != w.rule {
				t.Errorf("namespaced = %v, name rule = %v", typ.Namespaced, typ.NameValidation)
			}
			if !slices.Equal(typ.SelectableFields, w.fields) {
				t.Errorf("selectable fields = %v", typ.SelectableFields)
			}
			if hasStatus(typ.Strategy) != w.status {
				t.Errorf("status subresource = %v", hasStatus(typ.Strategy))
			}
			if _, err := typ.withDefaults(); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestConfigMapWrites(t *testing.T) {
	const meta = `"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"game","namespace":"default"}`
	keyMsg := `a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`
	big := strings.Repeat("x", 600*1024)
	runWriteCases(t, "ConfigMap", []writeCase{
		{
			name: "manifest from the docs",
			body: `{` + meta + `,"data":{"player_initial_lives":"3","game.properties":"enemy.types=aliens,monsters\nplayer.maximum-lives=5\n"},"binaryData":{"logo.png":"iVBORw0KGgo="}}`,
			fields: map[string]string{
				"data":       `{"game.properties":"enemy.types=aliens,monsters\nplayer.maximum-lives=5\n","player_initial_lives":"3"}`,
				"binaryData": `{"logo.png":"iVBORw0KGgo="}`,
			},
		},
		{
			name:   "unknown fields, empty maps and null immutable are dropped",
			body:   `{` + meta + `,"data":{},"binaryData":null,"immutable":null,"spec":{"x":1}}`,
			fields: map[string]string{"data": "", "binaryData": "", "immutable": "", "spec": ""},
		},
		{
			name:   "null data value is an empty string",
			body:   `{` + meta + `,"data":{"a":null}}`,
			fields: map[string]string{"data": `{"a":""}`},
		},
		{
			name:    "invalid key",
			body:    `{` + meta + `,"data":{"a b":"x"},"binaryData":{"c/d":"eA=="}}`,
			invalid: []string{`data[a b]: Invalid value: "a b": ` + keyMsg, `binaryData[c/d]: Invalid value: "c/d": ` + keyMsg},
		},
		{
			name:    "key in both data and binaryData",
			body:    `{` + meta + `,"data":{"k":"x"},"binaryData":{"k":"eA=="}}`,
			invalid: []string{`data[k]: Invalid value: "k": duplicate of key present in binaryData`},
		},
		{
			name:    "over 1 MiB in total",
			body:    `{` + meta + `,"data":{"a":"` + big + `","b":"` + big + `"}}`,
			invalid: []string{`[]: Too long: may not be more than 1048576 bytes`}, // kube-apiserver's own rendering of the root path
		},
		{
			name:       "number value",
			body:       `{` + meta + `,"data":{"a":1}}`,
			badRequest: `ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string`,
		},
		{
			name:       "data not an object",
			body:       `{` + meta + `,"data":["a"]}`,
			badRequest: `ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal array into Go struct field ConfigMap.data of type map[string]string`,
		},
		{
			name:       "binaryData not base64",
			body:       `{` + meta + `,"binaryData":{"a":"not base64!"}}`,
			badRequest: `ConfigMap in version "v1" cannot be handled as a ConfigMap: illegal base64 data at input byte 3`,
		},
		{
			name:       "immutable not a bool",
			body:       `{` + meta + `,"immutable":"yes"}`,
			badRequest: `ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal string into Go struct field ConfigMap.immutable of type bool`,
		},
		{
			name:   "update of a mutable config map",
			old:    `{` + meta + `,"data":{"a":"1"}}`,
			body:   `{` + meta + `,"data":{"a":"2"},"immutable":true}`,
			fields: map[string]string{"data": `{"a":"2"}`, "immutable": "true"},
		},
		{
			name: "immutable: labels may change",
			old:  `{` + meta + `,"data":{"a":"1"},"immutable":true}`,
			body: `{"metadata":{"name":"game","namespace":"default","labels":{"x":"y"}},"data":{"a":"1"},"immutable":true}`,
		},
		{
			name:    "immutable: data, binaryData and immutable may not",
			old:     `{` + meta + `,"data":{"a":"1"},"immutable":true}`,
			body:    `{` + meta + `,"data":{"a":"2"},"binaryData":{"b":"eA=="}}`,
			invalid: []string{"data: Forbidden: field is immutable when `immutable` is set", "binaryData: Forbidden: field is immutable when `immutable` is set", "immutable: Forbidden: field is immutable when `immutable` is set"},
		},
	})
}

func TestSecretWrites(t *testing.T) {
	const meta = `"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"default"}`
	b64 := func(s string) string {
		b, _ := json.Marshal([]byte(s))
		return string(b)
	}
	big := strings.Repeat("x", 700*1024)
	runWriteCases(t, "Secret", []writeCase{
		{
			name:   "opaque manifest; type defaults",
			body:   `{` + meta + `,"data":{"username":"YWRtaW4=","password":"MWYyZDFlMmU2N2Rm"}}`,
			fields: map[string]string{"data": `{"password":"MWYyZDFlMmU2N2Rm","username":"YWRtaW4="}`, "type": `"Opaque"`},
		},
		{
			name:   "empty type defaults",
			body:   `{` + meta + `,"type":""}`,
			fields: map[string]string{"type": `"Opaque"`, "data": ""},
		},
		{
			name:   "stringData merges into data and wins",
			body:   `{` + meta + `,"data":{"a":"eA==","c":"eQ=="},"stringData":{"a":"override","b":"plain"}}`,
			fields: map[string]string{"data": `{"a":` + b64("override") + `,"b":` + b64("plain") + `,"c":"eQ=="}`, "stringData": ""},
		},
		{
			name:   "stringData alone",
			body:   `{` + meta + `,"stringData":{"config.yaml":"a: 1\n"}}`,
			fields: map[string]string{"data": `{"config.yaml":` + b64("a: 1\n") + `}`, "stringData": ""},
		},
		{
			name:   "base64 with line breaks is stored canonical",
			body:   `{` + meta + `,"data":{"a":"YWJj\nZGVm"}}`,
			fields: map[string]string{"data": `{"a":"YWJjZGVm"}`},
		},
		{
			name:       "data not base64",
			body:       `{` + meta + `,"data":{"a":"abc!"}}`,
			badRequest: `Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 3`,
		},
		{
			name:       "stringData value not a string",
			body:       `{` + meta + `,"stringData":{"a":true}}`,
			badRequest: `Secret in version "v1" cannot be handled as a Secret: json: cannot unmarshal bool into Go struct field Secret.stringData of type string`,
		},
		{
			name:    "invalid key",
			body:    `{` + meta + `,"stringData":{"a:b":"x"}}`,
			invalid: []string{`data[a:b]: Invalid value: "a:b": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`},
		},
		{
			name:    "over 1 MiB in total",
			body:    `{` + meta + `,"stringData":{"a":"` + big + `","b":"` + big + `"}}`,
			invalid: []string{`data: Too long: may not be more than 1048576 bytes`},
		},
		{
			name: "tls with both keys",
			body: `{` + meta + `,"type":"kubernetes.io/tls","data":{"tls.crt":"eA==","tls.key":"eQ=="}}`,
		},
		{
			name:    "tls without keys",
			body:    `{` + meta + `,"type":"kubernetes.io/tls"}`,
			invalid: []string{`data[tls.crt]: Required value`, `data[tls.key]: Required value`},
		},
		{
			name: "dockerconfigjson",
			body: `{` + meta + `,"type":"kubernetes.io/dockerconfigjson","stringData":{".dockerconfigjson":"{\"auths\":{}}"}}`,
		},
		{
			name:    "dockerconfigjson missing",
			body:    `{` + meta + `,"type":"kubernetes.io/dockerconfigjson"}`,
			invalid: []string{`data[.dockerconfigjson]: Required value`},
		},
		{
			name:    "dockerconfigjson not JSON",
			body:    `{` + meta + `,"type":"kubernetes.io/dockerconfigjson","stringData":{".dockerconfigjson":"not json"}}`,
			invalid: []string{`data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": invalid character 'o' in literal null (expecting 'u')`},
		},
		{
			name:    "dockercfg missing",
			body:    `{` + meta + `,"type":"kubernetes.io/dockercfg"}`,
			invalid: []string{`data[.dockercfg]: Required value`},
		},
		{
			name: "basic-auth with an empty password only",
			body: `{` + meta + `,"type":"kubernetes.io/basic-auth","stringData":{"password":""}}`,
		},
		{
			name:    "basic-auth with neither",
			body:    `{` + meta + `,"type":"kubernetes.io/basic-auth"}`,
			invalid: []string{`data[username]: Required value`, `data[password]: Required value`},
		},
		{
			name:    "ssh-auth with an empty key",
			body:    `{` + meta + `,"type":"kubernetes.io/ssh-auth","stringData":{"ssh-privatekey":""}}`,
			invalid: []string{`data[ssh-privatekey]: Required value`},
		},
		{
			name:    "service-account-token without the account name",
			body:    `{` + meta + `,"type":"kubernetes.io/service-account-token"}`,
			invalid: []string{`metadata.annotations[kubernetes.io/service-account.name]: Required value`},
		},
		{
			name: "service-account-token with the account name",
			body: `{"metadata":{"name":"s","namespace":"default","annotations":{"kubernetes.io/service-account.name":"build"}},"type":"kubernetes.io/service-account-token"}`,
		},
		{
			name: "custom type has no required keys",
			body: `{` + meta + `,"type":"example.com/thing"}`,
		},
		{
			name:   "update: data may change and stringData still merges",
			old:    `{` + meta + `,"data":{"a":"eA=="}}`,
			body:   `{` + meta + `,"stringData":{"a":"y"}}`,
			fields: map[string]string{"data": `{"a":"eQ=="}`, "type": `"Opaque"`},
		},
		{
			name: "update: absent type means the default, unchanged",
			old:  `{` + meta + `,"type":"Opaque"}`,
			body: `{` + meta + `}`,
		},
		{
			name:    "update: type is immutable",
			old:     `{` + meta + `,"data":{"tls.crt":"eA==","tls.key":"eA=="}}`,
			body:    `{` + meta + `,"type":"kubernetes.io/tls","data":{"tls.crt":"eA==","tls.key":"eA=="}}`,
			invalid: []string{`type: Invalid value: "kubernetes.io/tls": field is immutable`},
		},
		{
			name:    "update: immutable secret",
			old:     `{` + meta + `,"data":{"a":"eA=="},"immutable":true}`,
			body:    `{` + meta + `,"stringData":{"a":"changed"},"immutable":false}`,
			invalid: []string{"data: Forbidden: field is immutable when `immutable` is set", "immutable: Forbidden: field is immutable when `immutable` is set"},
		},
	})
}

func TestSecretTypeSelector(t *testing.T) {
	typ := builtin(t, "Secret")
	attrs := AttrFunc(&typ)
	for body, want := range map[string]string{
		`{"metadata":{"name":"a","namespace":"ns"}}`:                            "Opaque",
		`{"metadata":{"name":"a","namespace":"ns"},"type":""}`:                  "Opaque",
		`{"metadata":{"name":"a","namespace":"ns"},"type":"kubernetes.io/tls"}`: "kubernetes.io/tls",
	} {
		a, err := attrs([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		if got := a.Fields["type"]; got != want {
			t.Errorf("%s: type = %q, want %q", body, got, want)
		}
	}
}
