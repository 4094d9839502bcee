package controllers

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// storedConfigMap is a ConfigMap as the server stores it: most of its
// metadata's bytes are managedFields, which the collector skips.
const storedConfigMap = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"creationTimestamp":"2026-11-29T14:00:00Z",` +
	`"managedFields":[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:k":{}}},"manager":"kubectl","operation":"Update","time":"2026-11-29T14:00:00Z"}],` +
	`"name":"cm-00001","namespace":"fx","resourceVersion":"12345","uid":"4b0e0a6e-4c1e-4c1a-9f0e-000000000000"},"data":{"k":"v"}}`

// FuzzDecodeMeta checks scanMeta against encoding/json: whenever it
// reads a valid metadata object, it reads what encoding/json reads
// (when it does not, decodeMeta decodes with encoding/json itself).
func FuzzDecodeMeta(f *testing.F) {
	f.Add([]byte(`{"name":"a","namespace":"ns","uid":"u","finalizers":["x"],"ownerReferences":[{"apiVersion":"v1","kind":"K","name":"o","uid":"ou","controller":true,"blockOwnerDeletion":true}],"managedFields":[{"f:x":"}"}]}`))
	f.Add([]byte(`{"deletionTimestamp":"2026-11-29T14:00:00Z","finalizers":null,"name":null}`))
	f.Add([]byte(` { "n\u0061me" : "\u00e9" , "deletionTimestamp" : null } `))
	f.Add([]byte(`{"NAME":"a","name":"b"}`))
	f.Add([]byte(`{"name":1}`))
	f.Add([]byte(`{"ownerReferences":[{"uid":"a","name":"x"}],"ownerReferences":[{"uid":"b"}]}`))
	f.Fuzz(func(t *testing.T, span []byte) {
		var got storedMeta
		if !scanMeta(span, &got) || !json.Valid(span) {
			return
		}
		var want storedMeta
		if err := json.Unmarshal(span, &want); err != nil {
			t.Fatalf("scanMeta read %q, which encoding/json refuses: %v", span, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("scanMeta(%q) = %+v, encoding/json reads %+v", span, got, want)
		}
	})
}

// TestDecodeMeta: what the collector reads of stored objects, through
// scanMeta and through its fallbacks.
func TestDecodeMeta(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		want       meta
		wantErr    bool
	}{
		{name: "stored", data: storedConfigMap, want: meta{Namespace: "fx", Name: "cm-00001", UID: "4b0e0a6e-4c1e-4c1a-9f0e-000000000000"}},
		{name: "owned and deleting", data: `{"metadata":{"name":"p","deletionTimestamp":"2026-11-29T14:00:00Z","finalizers":["foregroundDeletion"],` +
			`"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"r1","controller":true}]}}`,
			want: meta{Name: "p", Deleting: true, Finalizers: []string{"foregroundDeletion"}}},
		{name: "a key in another case, as encoding/json matches it", data: `{"metadata":{"name":"a","NAME":"b"}}`, want: meta{Name: "b"}},
		{name: "metadata not first", data: `{"kind":"K","spec":{"metadata":{"name":"no"}},"metadata":{"name":"yes"}}`, want: meta{Name: "yes"}},
		{name: "a name of another type", data: `{"metadata":{"name":1}}`, wantErr: true},
		{name: "no object", data: `[]`, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeMeta([]byte(tc.data))
			if (err != nil) != tc.wantErr {
				t.Fatalf("decodeMeta: %+v, %v; want an error: %v", got, err, tc.wantErr)
			}
			if err != nil {
				return
			}
			owners := got.OwnerReferences
			got.OwnerReferences = nil
			if !reflect.DeepEqual(*got, tc.want) {
				t.Errorf("decodeMeta = %+v, want %+v", *got, tc.want)
			}
			if strings.Contains(tc.data, "ownerReferences") && (len(owners) != 1 || owners[0].UID != "r1" || owners[0].Controller == nil || !*owners[0].Controller) {
				t.Errorf("owner references %+v, want the ReplicaSet r1 as controller", owners)
			}
		})
	}
}

func BenchmarkDecodeMeta(b *testing.B) {
	data := []byte(storedConfigMap)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeMeta(data); err != nil {
			b.Fatal(err)
		}
	}
}
