package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/miniapi/miniapi/api"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// BuiltinTypes returns the Kubernetes types miniapi serves without
// configuration: core/v1 Namespace, ConfigMap, Secret and Event, and
// coordination.k8s.io/v1 Lease, with kube-apiserver's names, short names,
// scope, field selectors and validation. Each call returns fresh values
// the caller may modify before adding them to a Registry.
func BuiltinTypes() []Type {
	return []Type{
		namespaceType(),
		configMapType(),
		secretType(),
		eventType(),
		leaseType(),
	}
}

// ageColumn is the column kube-apiserver ends most tables with. Built-in
// types list it explicitly because PrinterColumns, like a CRD's
// additionalPrinterColumns, are the whole table after Name.
var ageColumn = PrinterColumn{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"}

// decodeFields decodes obj's top-level fields (other than apiVersion,
// kind and metadata) into dst, a pointer to a struct whose JSON tags name
// the fields of one built-in kind. Fields dst does not name are ignored.
func decodeFields(obj *api.Object, dst any) error {
	var buf bytes.Buffer
	buf.WriteByte('{')
	first := true
	for k, v := range obj.Fields {
		if len(v) == 0 {
			continue
		}
		if !first {
			buf.WriteByte(',')
		}
		first = false
		writeJSONKey(&buf, k)
		buf.Write(v)
	}
	buf.WriteByte('}')
	return json.Unmarshal(buf.Bytes(), dst)
}

func writeJSONKey(buf *bytes.Buffer, k string) {
	b, _ := json.Marshal(k) // encoding a string cannot fail
	buf.Write(b)
	buf.WriteByte(':')
}

// decodeBuiltin decodes obj into dst and turns a failure into the 400
// kube-apiserver answers when a body does not decode into the kind's Go
// type: a wrong JSON type, bad base64 in a []byte field, a malformed
// timestamp.
func decodeBuiltin(obj *api.Object, kind, version string, dst any) error {
	if err := decodeFields(obj, dst); err != nil {
		return api.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %s", kind, version, kind, decodeErrorText(err)))
	}
	return nil
}

// decodeErrorText words a decode error as kube-apiserver's decoder does,
// naming Go types as Kubernetes' exported ones (ConfigMap.data, not
// configMapFields.data).
func decodeErrorText(err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err.Error()
	}
	if te.Struct == "" || te.Field == "" {
		return fmt.Sprintf("json: cannot unmarshal %s into Go value of type %s", te.Value, goTypeName(te.Type))
	}
	return fmt.Sprintf("json: cannot unmarshal %s into Go struct field %s.%s of type %s",
		te.Value, exported(strings.TrimSuffix(te.Struct, "Fields")), te.Field, goTypeName(te.Type))
}

// goTypeName prints a type as Kubernetes' decoder does: our structs
// stand for types of the "v1" packages (v1.LeaseSpec), predeclared and
// composite types print as they are.
func goTypeName(t reflect.Type) string {
	if t.PkgPath() != "" && t.Name() != "" {
		return "v1." + exported(strings.TrimSuffix(t.Name(), "Fields"))
	}
	return t.String()
}

func exported(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// decodeForValidation decodes obj for a validator. The Normalizer has
// already refused undecodable bodies with a 400, so a failure here means
// the strategy was used without it; it is reported as a field error
// rather than ignored.
func decodeForValidation(obj *api.Object, dst any) field.ErrorList {
	err := decodeFields(obj, dst)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return field.ErrorList{field.Invalid(field.NewPath(te.Field), fmt.Sprintf("<%s>", te.Value), decodeErrorText(err))}
	}
	return field.ErrorList{field.Invalid(field.NewPath(""), "<object>", decodeErrorText(err))}
}

// keepFields drops the top-level fields a built-in kind does not have,
// as kube-apiserver's decoder drops unknown fields (fieldValidation
// Ignore and Warn). Unknown fields nested deeper are kept: dropping them
// too would mean re-encoding every nested value from our structs.
func keepFields(obj *api.Object, known ...string) {
	for k := range obj.Fields {
		if !slices.Contains(known, k) {
			delete(obj.Fields, k)
		}
	}
}

// setField stores v, encoded, as a top-level field, or removes the field
// when remove is true (the omitempty of the Kubernetes Go type).
func setField(obj *api.Object, name string, v any, remove bool) error {
	if remove {
		delete(obj.Fields, name)
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("registry: encode %s: %w", name, err)
	}
	if obj.Fields == nil {
		obj.Fields = map[string]json.RawMessage{}
	}
	obj.Fields[name] = b
	return nil
}

// stringField returns a top-level string field, "" when absent, null or
// not a string.
func stringField(obj *api.Object, name string) string {
	var s string
	if raw, ok := obj.Fields[name]; ok {
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

// rfc3339Micro is metav1.MicroTime's wire layout.
const rfc3339Micro = "2006-01-02T15:04:05.000000Z07:00"

// wireTime is a metav1.Time field: validated as RFC 3339 on decode, kept
// as sent.
type wireTime struct {
	t time.Time
}

// UnmarshalJSON accepts null or an RFC 3339 string, as metav1.Time does.
func (w *wireTime) UnmarshalJSON(b []byte) error { return parseWireTime(b, time.RFC3339, &w.t) }

// IsZero reports whether the field is unset.
func (w wireTime) IsZero() bool { return w.t.IsZero() }

// microTime is a metav1.MicroTime field: RFC 3339 with exactly six
// fractional digits, as kube-apiserver insists.
type microTime struct {
	t time.Time
}

// UnmarshalJSON accepts null or an RFC 3339 string with microseconds.
func (m *microTime) UnmarshalJSON(b []byte) error { return parseWireTime(b, rfc3339Micro, &m.t) }

// IsZero reports whether the field is unset.
func (m microTime) IsZero() bool { return m.t.IsZero() }

func parseWireTime(b []byte, layout string, dst *time.Time) error {
	if string(b) == "null" {
		*dst = time.Time{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	t, err := time.Parse(layout, s)
	if err != nil {
		return err
	}
	*dst = t
	return nil
}
