package builtin

import (
	"encoding/json"
	"strings"
	"testing"
)

// A body is decoded through the internal version, as kube-apiserver
// decodes it, so managedFields record the fields conversion changes: a
// Secret's stringData merged into data, a DaemonSet's template generation
// annotation (kube-apiserver 1.37 answers both so).
func TestDecodeConvertsThroughInternal(t *testing.T) {
	reg := newRegistry(t)
	create(t, storeFor(t, reg, "", "v1", "namespaces"), "", `{"metadata":{"name":"default"}}`)
	fields := func(t *testing.T, body string, s string) string {
		t.Helper()
		parts := strings.SplitN(s, "/", 3)
		obj := create(t, storeFor(t, reg, parts[0], parts[1], parts[2]), "default", body)
		if len(obj.Metadata.ManagedFields) != 1 {
			t.Fatalf("managedFields %+v", obj.Metadata.ManagedFields)
		}
		b, err := json.Marshal(obj.Metadata.ManagedFields[0].FieldsV1)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	got := fields(t, `{"metadata":{"name":"s"},"stringData":{"username":"admin"}}`, "/v1/secrets")
	if want := `{"f:data":{".":{},"f:username":{}},"f:type":{}}`; got != want {
		t.Errorf("secret managedFields %s, want %s", got, want)
	}

	ds := `{"metadata":{"name":"ds"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"x"}]}}}}`
	got = fields(t, ds, "apps/v1/daemonsets")
	if want := `"f:metadata":{"f:annotations":{".":{},"f:deprecated.daemonset.template.generation":{}}}`; !strings.Contains(got, want) {
		t.Errorf("daemonset managedFields %s, want them to hold %s", got, want)
	}
}
