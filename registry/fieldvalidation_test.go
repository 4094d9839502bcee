package registry

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/miniapi/miniapi/api"
)

// widgetSchema declares spec.color, spec.sizes (an array of objects with
// a value), spec.labels (a map of strings), spec.extra (preserving unknown
// fields, with one declared field), spec.raw ({type: object}: free-form)
// and spec.template (an embedded resource), partly through a $ref.
const widgetSchema = `{
  "type": "object",
  "properties": {
    "apiVersion": {"type": "string"},
    "kind": {"type": "string"},
    "metadata": {"type": "object"},
    "spec": {"$ref": "#/definitions/spec"},
    "status": {"allOf": [{"type": "object", "properties": {"phase": {"type": "string"}}}]}
  },
  "definitions": {
    "spec": {
      "type": "object",
      "properties": {
        "color": {"type": "string"},
        "sizes": {"type": "array", "items": {"type": "object", "properties": {"value": {"type": "integer"}}}},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"known": {"type": "object", "properties": {"a": {"type": "string"}}}}},
        "raw": {"type": "object"},
        "template": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {"spec": {"type": "object", "properties": {"x": {"type": "string"}}}}},
        "self": {"$ref": "#/definitions/spec"}
      }
    }
  }
}`

func TestScanFields(t *testing.T) {
	root, err := compileFieldSchema([]byte(widgetSchema))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		doc  string
		want []string
	}{
		{"known fields", `{"apiVersion":"v1","kind":"W","metadata":{"name":"a","labels":{"x":"y"}},"spec":{"color":"red","sizes":[{"value":1}],"labels":{"any":"thing"}}}`, nil},
		{"unknown top-level", `{"apiVersion":"v1","spek":{}}`, []string{`unknown field "spek"`}},
		{"unknown nested", `{"spec":{"colour":"red","color":"red"}}`, []string{`unknown field "spec.colour"`}},
		{"unknown in array element", `{"spec":{"sizes":[{"value":1},{"valeu":2}]}}`, []string{`unknown field "spec.sizes[1].valeu"`}},
		{"unknown value not searched", `{"spec":{"bogus":{"a":1,"a":2}}}`, []string{`unknown field "spec.bogus"`}},
		{"unknown metadata", `{"metadata":{"name":"a","nmae":"b","ownerReferences":[{"uid":"u","kind":"K","x":1}]}}`,
			[]string{`unknown field "metadata.nmae"`, `unknown field "metadata.ownerReferences[0].x"`}},
		{"managedFields are free-form", `{"metadata":{"managedFields":[{"manager":"m","fieldsV1":{"f:data":{}}}]}}`, nil},
		{"preserve-unknown-fields", `{"spec":{"extra":{"anything":{"deep":1},"known":{"a":"x","b":"y"}}}}`, []string{`unknown field "spec.extra.known.b"`}},
		{"type object without fields is free-form", `{"spec":{"raw":{"x":{"y":1}}}}`, nil},
		{"embedded resource", `{"spec":{"template":{"apiVersion":"v1","kind":"K","metadata":{"name":"n","x":1},"spec":{"x":"a","y":"b"}}}}`,
			[]string{`unknown field "spec.template.metadata.x"`, `unknown field "spec.template.spec.y"`}},
		{"embedded resource metadata is ObjectMeta", `{"spec":{"template":{"metadata":{"labels":{"a":"b"},"ownerReferences":[{"uid":"u","x":1}]}}}}`,
			[]string{`unknown field "spec.template.metadata.ownerReferences[0].x"`}},
		{"recursive ref", `{"spec":{"self":{"self":{"color":"a","hue":"b"}}}}`, []string{`unknown field "spec.self.self.hue"`}},
		{"allOf", `{"status":{"phase":"A","stage":"B"}}`, []string{`unknown field "status.stage"`}},
		{"duplicates", `{"metadata":{"name":"a","name":"b"},"spec":{"labels":{"k":"1","k":"2"}},"spec":{}}`,
			[]string{`duplicate field "metadata.name"`, `duplicate field "spec.labels.k"`, `duplicate field "spec"`}},
		{"escaped keys", `{"spec":{"col\u006fr":"x","c\"d":1}}`, []string{`unknown field "spec.c\"d"`}},
		{"whitespace and scalars", " {\n \"spec\" : { \"sizes\" : [ 1 , true , null , \"s\" , -1.5e3 ] } } ", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !json.Valid([]byte(tc.doc)) {
				t.Fatalf("test document is not JSON: %s", tc.doc)
			}
			r, err := scanFields([]byte(tc.doc), root, true)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(r.errs, tc.want) {
				t.Errorf("errors\n got %q\nwant %q", r.errs, tc.want)
			}
		})
	}
}

func TestScanFieldsWithoutSchema(t *testing.T) {
	r, err := scanFields([]byte(`{"spec":{"anything":{"a":1,"a":2}},"metadata":{"bogus":1}}`), nil, true)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`duplicate field "spec.anything.a"`, `unknown field "metadata.bogus"`}
	if !reflect.DeepEqual(r.errs, want) {
		t.Errorf("got %q, want %q", r.errs, want)
	}
}

func TestScanFieldsManyKeys(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"data":{`)
	for i := range 100 {
		b.WriteString(`"k` + string(rune('a'+i%26)) + strings.Repeat("x", i/26) + `":"v",`)
	}
	b.WriteString(`"kc":"dup"}}`)
	r, err := scanFields([]byte(b.String()), nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{`duplicate field "data.kc"`}; !reflect.DeepEqual(r.errs, want) {
		t.Errorf("got %q, want %q", r.errs, want)
	}
}

func TestScanFieldsMalformed(t *testing.T) {
	for _, doc := range []string{`{"a":`, `{"a" 1}`, `{"a":1`, `[1,2`, `{"a":"x}`} {
		if _, err := scanFields([]byte(doc), nil, false); err == nil {
			t.Errorf("scanFields(%s) succeeded, want an error", doc)
		}
	}
}

func TestRewrite(t *testing.T) {
	root, err := compileFieldSchema([]byte(widgetSchema))
	if err != nil {
		t.Fatal(err)
	}
	doc := `{"apiVersion":"v1","metadata":{"name":"a"},"spec":{"color":"<b>","color":"red","big":12345678901234567890,"sizes":[{"value":1,"x":2}],"template":{"metadata":{"name":"t","x":1}}},"spek":1}`
	r, err := scanFields([]byte(doc), root, true)
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.rewrite([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"apiVersion":"v1","metadata":{"name":"a"},"spec":{"color":"red","sizes":[{"value":1}],"template":{"metadata":{"name":"t"}}}}`
	if string(out) != want {
		t.Errorf("rewrite\n got %s\nwant %s", out, want)
	}
}

func TestCheckFields(t *testing.T) {
	s := &Store{t: &Type{Version: "v1", Kind: "Widget", Schema: json.RawMessage(widgetSchema)}}
	body := []byte(`{"apiVersion":"v1","kind":"Widget","metadata":{"name":"a"},"spec":{"color":"red","foo":1},"x":1,"x":2}`)

	t.Run("Strict", func(t *testing.T) {
		ctx, w := api.WithWarnings(context.Background())
		_, err := s.CheckFields(ctx, body, FieldValidationStrict, []string{"line 3: key \"a\" already set in map"})
		var se *api.StatusError
		if !asStatus(err, &se) || se.ErrStatus.Code != http.StatusBadRequest || se.ErrStatus.Reason != api.ReasonBadRequest {
			t.Fatalf("err = %v, want 400 BadRequest", err)
		}
		want := `Widget in version "v1" cannot be handled as a Widget: strict decoding error: line 3: key "a" already set in map, unknown field "spec.foo", unknown field "x", duplicate field "x"`
		if se.ErrStatus.Message != want {
			t.Errorf("message\n got %s\nwant %s", se.ErrStatus.Message, want)
		}
		if len(w.Messages()) != 0 {
			t.Errorf("warnings %q in Strict mode", w.Messages())
		}
	})
	t.Run("Warn", func(t *testing.T) {
		ctx, w := api.WithWarnings(context.Background())
		out, err := s.CheckFields(ctx, body, FieldValidationWarn, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{`unknown field "spec.foo"`, `unknown field "x"`, `duplicate field "x"`}; !reflect.DeepEqual(w.Messages(), want) {
			t.Errorf("warnings %q, want %q", w.Messages(), want)
		}
		if want := `{"apiVersion":"v1","kind":"Widget","metadata":{"name":"a"},"spec":{"color":"red"}}`; string(out) != want {
			t.Errorf("stored form %s, want %s", out, want)
		}
	})
	t.Run("Ignore", func(t *testing.T) {
		ctx, w := api.WithWarnings(context.Background())
		out, err := s.CheckFields(ctx, body, FieldValidationIgnore, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(w.Messages()) != 0 {
			t.Errorf("warnings %q in Ignore mode", w.Messages())
		}
		if want := `{"apiVersion":"v1","kind":"Widget","metadata":{"name":"a"},"spec":{"color":"red"}}`; string(out) != want {
			t.Errorf("stored form %s, want %s (unknown fields are dropped)", out, want)
		}
	})
	t.Run("clean body", func(t *testing.T) {
		ctx, w := api.WithWarnings(context.Background())
		out, err := s.CheckFields(ctx, []byte(`{"spec":{"color":"red"}}`), FieldValidationStrict, nil)
		if err != nil || out != nil || len(w.Messages()) != 0 {
			t.Errorf("got %s, %v, warnings %q; want nothing", out, err, w.Messages())
		}
	})
	t.Run("no schema", func(t *testing.T) {
		noSchema := &Store{t: &Type{Version: "v1", Kind: "Thing"}}
		ctx, w := api.WithWarnings(context.Background())
		out, err := noSchema.CheckFields(ctx, []byte(`{"spec":{"anything":1}}`), FieldValidationStrict, nil)
		if err != nil || out != nil || len(w.Messages()) != 0 {
			t.Errorf("got %s, %v, warnings %q; want nothing", out, err, w.Messages())
		}
	})
}

func TestPatchFieldCheck(t *testing.T) {
	s := &Store{t: &Type{Version: "v1", Kind: "Widget", Schema: json.RawMessage(widgetSchema)}}
	patched := []byte(`{"apiVersion":"v1","kind":"Widget","metadata":{"name":"a"},"spec":{"color":"red","foo":1}}`)

	t.Run("merge patch, Strict", func(t *testing.T) {
		check := s.patchFieldCheck(PatchMerge, []byte(`{"spec":{"foo":1,"color":"a","color":"red"}}`), FieldValidationStrict)
		_, err := check(context.Background(), patched)
		var se *api.StatusError
		if !asStatus(err, &se) || se.ErrStatus.Code != http.StatusUnprocessableEntity {
			t.Fatalf("err = %v, want 422", err)
		}
		if !strings.HasSuffix(se.ErrStatus.Message, `: strict decoding error: duplicate field "spec.color", unknown field "spec.foo"`) ||
			!strings.HasPrefix(se.ErrStatus.Message, ` "" is invalid: patch: Invalid value: "{`) {
			t.Errorf("message %s", se.ErrStatus.Message)
		}
	})
	t.Run("json patch, Warn", func(t *testing.T) {
		check := s.patchFieldCheck(PatchJSON, []byte(`[{"op":"add","path":"/spec/foo","value":1,"valeu":2}]`), FieldValidationWarn)
		ctx, w := api.WithWarnings(context.Background())
		out, err := check(ctx, patched)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{`json patch unknown field "[0].valeu"`, `unknown field "spec.foo"`}; !reflect.DeepEqual(w.Messages(), want) {
			t.Errorf("warnings %q, want %q", w.Messages(), want)
		}
		if want := `{"apiVersion":"v1","kind":"Widget","metadata":{"name":"a"},"spec":{"color":"red"}}`; string(out) != want {
			t.Errorf("stored form %s, want %s", out, want)
		}
	})
	t.Run("strategic merge patch, Strict", func(t *testing.T) {
		check := s.patchFieldCheck(PatchStrategicMerge, []byte(`{"spec":{"foo":1}}`), FieldValidationStrict)
		_, err := check(context.Background(), patched)
		var se *api.StatusError
		if !asStatus(err, &se) || !strings.Contains(se.ErrStatus.Message, `Invalid value: "map[spec:map[foo:1]]": strict decoding error: unknown field "spec.foo"`) {
			t.Fatalf("err = %v", err)
		}
	})
}

func asStatus(err error, target **api.StatusError) bool {
	se, ok := err.(*api.StatusError)
	if ok {
		*target = se
	}
	return ok
}

// BenchmarkScanFields measures the check every create and update pays in
// Warn mode, on a ConfigMap-sized object, against decoding the same bytes
// into an api.Object (the work the write path already does) as baseline.
func BenchmarkScanFields(b *testing.B) {
	root, err := compileFieldSchema([]byte(widgetSchema))
	if err != nil {
		b.Fatal(err)
	}
	doc := []byte(`{"apiVersion":"v1","kind":"Widget","metadata":{"name":"bench","namespace":"default","labels":{"app":"bench","tier":"backend"},"annotations":{"note":"a fairly ordinary annotation value"}},"spec":{"color":"red","sizes":[{"value":1},{"value":2},{"value":3}],"labels":{"a":"1","b":"2","c":"3","d":"4"}}}`)
	b.Run("scan", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			if _, err := scanFields(doc, root, true); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("baseline=decode", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			var obj api.Object
			if err := json.Unmarshal(doc, &obj); err != nil {
				b.Fatal(err)
			}
		}
	})
}
