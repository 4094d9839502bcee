package storage

import (
	"encoding/json"
	"maps"
	"testing"
)

// TestDefaultAttrsMatchesEncodingJSON checks that DefaultAttrs, through
// scanMetadata or its fallback, reads what encoding/json decodes from
// the whole object, and that the shapes the server stores take the
// scanner's path.
func TestDefaultAttrsMatchesEncodingJSON(t *testing.T) {
	cases := []struct {
		name     string
		metadata string
		scanned  bool // scanMetadata reads it (no fallback)
	}{
		{"stored shape", `{"name":"a","namespace":"ns","uid":"u-1","resourceVersion":"7","creationTimestamp":"2026-01-01T00:00:00Z","labels":{"app":"web","tier":"db"}}`, true},
		{"skipped members of every kind", `{"annotations":{"a":"{\"}","b":"[1,{2}]"},"finalizers":["x"],"generation":3,"deletionGracePeriodSeconds":null,"ownerReferences":[{"controller":true}],"name":"b","managedFields":[{"fieldsV1":{"f:data":{}}}]}`, true},
		{"empty", `{}`, true},
		{"spaces", " {\n \"name\" : \"c\" ,\t\"labels\" : { \"k\" : \"v\" } } ", true},
		{"labels empty", `{"name":"d","labels":{}}`, true},
		{"labels null", `{"name":"e","labels":null}`, true},
		{"name null", `{"name":null,"namespace":"ns"}`, true},
		{"duplicate name: last wins", `{"name":"f","name":"g"}`, true},
		{"escapes", `{"name":"h\u0041\"","labels":{"k\n":"v\\"}}`, true},
		{"non-ASCII", `{"name":"é","labels":{"ключ":"値"}}`, true},
		{"invalid UTF-8", "{\"name\":\"a\xffb\"}", true},
		{"key in other case", `{"Name":"i","NAMESPACE":"ns","Labels":{"k":"v"}}`, false},
		{"duplicate labels merge", `{"labels":{"a":"1"},"labels":{"b":"2"}}`, false},
		{"label value null", `{"labels":{"a":null}}`, false},
		{"name of another type", `{"name":5}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":` + tc.metadata + `,"data":{"k":"v"}}`)
			var want objectMeta
			wantErr := json.Unmarshal(data, &want)
			got, err := DefaultAttrs(data)
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("DefaultAttrs error %v, encoding/json error %v", err, wantErr)
			}
			if err == nil {
				w := attrsOf(&want)
				if !maps.Equal(got.Fields, w.Fields) || !maps.Equal(got.Labels, w.Labels) || (got.Labels == nil) != (w.Labels == nil) {
					t.Errorf("DefaultAttrs = %+v, encoding/json reads %+v", got, w)
				}
			}
			var m objectMeta
			if ok := scanMetadata(MetadataJSON(data), &m); ok != tc.scanned {
				t.Errorf("scanMetadata ok = %v, want %v", ok, tc.scanned)
			}
		})
	}
}

// TestScanMetadataRejectsMalformed checks that scanMetadata gives up on
// spans it cannot read, leaving them to encoding/json.
func TestScanMetadataRejectsMalformed(t *testing.T) {
	for _, span := range []string{
		``, `[]`, `{`, `{"name"}`, `{"name":"a"`, `{"name":"a",}`, `{"name":"a" "x":1}`,
		`{"labels":{"a":"b",}}`, `{"labels":{"a"}}`, `{"labels":[]}`, `{"name":"a"} x`, `{"name":"\x01"}`,
	} {
		var m objectMeta
		if scanMetadata([]byte(span), &m) {
			t.Errorf("scanMetadata(%q) = true, want false", span)
		}
	}
}
