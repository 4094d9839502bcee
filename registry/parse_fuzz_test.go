package registry

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/miniapi/miniapi/api"
)

// FuzzParseResourceFile feeds any document to the resources-file
// parser (--resources in the old format). An accepted file must declare
// valid types, and writing them back out in the same format must read
// back as the same types.
func FuzzParseResourceFile(f *testing.F) {
	f.Add([]byte(`resources:
- group: example.com
  version: v1
  kind: Widget
  plural: widgets
  namespaced: true
  shortNames: [wd]
  statusSubresource: true
  scale:
    specReplicasPath: .spec.replicas
    statusReplicasPath: .status.replicas
    labelSelectorPath: .status.selector
  selectableFields: [spec.color]
  printerColumns:
  - {name: Color, type: string, jsonPath: .spec.color}
`))
	f.Add([]byte(`{"resources":[{"version":"v1","kind":"Thing","plural":"things","listKind":"ThingCollection","singular":"thing"}]}`))
	f.Add([]byte("resources: []\n"))
	f.Add([]byte("resources:\n- {version: v1, kind: A, plural: as, bogus: 1}\n"))
	f.Add([]byte("resources:\n- {version: v1, kind: A, plural: as, scale: {specReplicasPath: spec}}\n"))
	f.Add([]byte("a: &a [*a]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		types, err := ParseResourceFile(data)
		if err != nil {
			return
		}
		var back ResourceFile
		for _, typ := range types {
			if _, err := typ.withDefaults(); err != nil {
				t.Fatalf("ParseResourceFile(%q) accepted an invalid type: %v", data, err)
			}
			st, _ := typ.Strategy.(GenericStrategy)
			back.Resources = append(back.Resources, ResourceSpec{
				Group: typ.Group, Version: typ.Version, Kind: typ.Kind, ListKind: typ.ListKind, Plural: typ.Plural,
				Singular: typ.Singular, ShortNames: typ.ShortNames, Categories: typ.Categories, Namespaced: typ.Namespaced,
				StatusSubresource: st.Status, SelectableFields: typ.SelectableFields, PrinterColumns: typ.PrinterColumns, Scale: typ.Scale,
			})
		}
		out, err := json.Marshal(back)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseResourceFile(out)
		if err != nil {
			t.Fatalf("the types of %q, written out as %s, do not parse: %v", data, out, err)
		}
		if len(types) == 0 && len(again) == 0 {
			return
		}
		if !reflect.DeepEqual(again, types) {
			t.Fatalf("the types of %q, written out as %s, read back as\n%+v\nnot\n%+v", data, out, again, types)
		}
	})
}

// FuzzDecodeScale feeds any JSON to what reads a Scale sent to /scale:
// the fieldValidation check and the decoder. Both refuse with a Status
// a client sees as 400 (never a bare error, a 500); a decoded Scale
// encodes and decodes again to itself.
func FuzzDecodeScale(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"a","namespace":"ns","resourceVersion":"5"},"spec":{"replicas":3},"status":{"replicas":2,"selector":"app=a"}}`))
	f.Add([]byte(`{"spec":{"replicas":-1,"bogus":true},"spec":{}}`))
	f.Add([]byte(`{"spec":{"replicas":2147483648}}`))
	f.Add([]byte(`{"spec":{"replicas":1.5}}`))
	f.Add([]byte(`{"metadata":{"labels":{"a":1}}}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(` null `))
	f.Add([]byte(`{"spec":`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, directive := range []string{FieldValidationStrict, FieldValidationWarn} {
			if err := CheckScaleFields(context.Background(), data, directive); err != nil {
				checkClientError(t, "CheckScaleFields", data, err)
			}
		}
		sc, err := DecodeScale(data)
		if err != nil {
			checkClientError(t, "DecodeScale", data, err)
			return
		}
		out, err := json.Marshal(sc)
		if err != nil {
			t.Fatalf("DecodeScale(%s) does not encode: %v", data, err)
		}
		again, err := DecodeScale(out)
		if err != nil || !reflect.DeepEqual(again, sc) {
			t.Fatalf("DecodeScale(%s) = %+v, encoded %s, decodes to %+v, %v", data, sc, out, again, err)
		}
	})
}

// checkClientError fails unless err is a Status a client gets as 400.
func checkClientError(t *testing.T, what string, data []byte, err error) {
	t.Helper()
	var se *api.StatusError
	if !errors.As(err, &se) || se.ErrStatus.Code != 400 {
		t.Fatalf("%s(%s) = %v: want a 400 Status", what, data, err)
	}
}
