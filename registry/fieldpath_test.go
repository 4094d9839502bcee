package registry

import (
	"encoding/json"
	"testing"

	"github.com/miniapi/miniapi/api"
	"k8s.io/apimachinery/pkg/fields"
)

func mustObject(t testing.TB, s string) *api.Object {
	t.Helper()
	var obj api.Object
	if err := json.Unmarshal([]byte(s), &obj); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return &obj
}

const podJSON = `{"apiVersion":"v1","kind":"Pod",
	"metadata":{"name":"web","namespace":"default","uid":"u1","generation":3,"labels":{"app":"web"}},
	"spec":{"nodeName":"node-1","hostNetwork":true,"priority":100,"ratio":1.50,"containers":[{"name":"c"}],"empty":"","nothing":null},
	"type":"Opaque"}`

func TestReadFieldPath(t *testing.T) {
	obj := mustObject(t, podJSON)
	cases := []struct {
		path string
		want string
		ok   bool
	}{
		{"metadata.name", "web", true},
		{"metadata.namespace", "default", true},
		{"metadata.uid", "u1", true},
		{"metadata.generation", "3", true},
		{"metadata.labels.app", "web", true},
		{"metadata.generateName", "", false},
		{"metadata.labels.missing", "", false},
		{"type", "Opaque", true},
		{"spec.nodeName", "node-1", true},
		{"spec.hostNetwork", "true", true},
		{"spec.priority", "100", true},
		{"spec.ratio", "1.50", true}, // the JSON text, not a reformatted float
		{"spec.empty", "", true},
		{"spec.nothing", "", false},
		{"spec.containers", "", false},
		{"spec", "", false},
		{"spec.nodeName.deeper", "", false},
		{"spec.missing", "", false},
		{"status.phase", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			got, ok := ReadFieldPath(obj, tc.path)
			if got != tc.want || ok != tc.ok {
				t.Errorf("ReadFieldPath(%q) = %q, %v; want %q, %v", tc.path, got, ok, tc.want, tc.ok)
			}
		})
	}
}

// typeReader reports "type" with Kubernetes' default when it is unset.
type typeReader struct{}

func (typeReader) SelectableFieldValue(obj *api.Object, path string) (string, bool) {
	if path != "type" {
		return "", false
	}
	if v, ok := ReadFieldPath(obj, "type"); ok && v != "" {
		return v, true
	}
	return "Opaque", true
}

func TestAttrFunc(t *testing.T) {
	cases := []struct {
		name  string
		typ   Type
		obj   string
		want  fields.Set
		label string
	}{
		{
			name:  "metadata only",
			typ:   Type{},
			obj:   podJSON,
			want:  fields.Set{"metadata.name": "web", "metadata.namespace": "default"},
			label: "web",
		},
		{
			name: "declared fields, present and missing",
			typ:  Type{SelectableFields: []string{"spec.nodeName", "spec.hostNetwork", "spec.priority", "status.phase", "metadata.name"}},
			obj:  podJSON,
			want: fields.Set{
				"metadata.name": "web", "metadata.namespace": "default",
				"spec.nodeName": "node-1", "spec.hostNetwork": "true", "spec.priority": "100", "status.phase": "",
			},
			label: "web",
		},
		{
			name:  "metadata beyond name and namespace",
			typ:   Type{SelectableFields: []string{"metadata.uid"}},
			obj:   podJSON,
			want:  fields.Set{"metadata.name": "web", "metadata.namespace": "default", "metadata.uid": "u1"},
			label: "web",
		},
		{
			name: "field reader default",
			typ:  Type{SelectableFields: []string{"type"}, Strategy: typeReader{}},
			obj:  `{"metadata":{"name":"s","namespace":"ns"}}`,
			want: fields.Set{"metadata.name": "s", "metadata.namespace": "ns", "type": "Opaque"},
		},
		{
			name: "field reader value",
			typ:  Type{SelectableFields: []string{"type"}, Strategy: typeReader{}},
			obj:  `{"metadata":{"name":"s","namespace":"ns"},"type":"kubernetes.io/tls"}`,
			want: fields.Set{"metadata.name": "s", "metadata.namespace": "ns", "type": "kubernetes.io/tls"},
		},
		{
			name: "shared subtree",
			typ:  Type{SelectableFields: []string{"involvedObject.kind", "involvedObject.name", "involvedObject.uid"}},
			obj:  `{"metadata":{"name":"e"},"involvedObject":{"kind":"Pod","name":"web"}}`,
			want: fields.Set{"metadata.name": "e", "metadata.namespace": "", "involvedObject.kind": "Pod", "involvedObject.name": "web", "involvedObject.uid": ""},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			attrs, err := AttrFunc(&tc.typ)([]byte(tc.obj))
			if err != nil {
				t.Fatal(err)
			}
			if len(attrs.Fields) != len(tc.want) {
				t.Errorf("fields = %v, want %v", attrs.Fields, tc.want)
			}
			for k, v := range tc.want {
				if got, ok := attrs.Fields[k]; !ok || got != v {
					t.Errorf("field %s = %q (present %v), want %q", k, got, ok, v)
				}
			}
			if got := attrs.Labels["app"]; got != tc.label {
				t.Errorf("label app = %q, want %q", got, tc.label)
			}
		})
	}
}

// TestAttrFuncSelectors checks the Kubernetes behaviour of selectors on a
// field an object lacks: "f=" and "f!=x" match it, "f=x" does not.
func TestAttrFuncSelectors(t *testing.T) {
	typ := Type{SelectableFields: []string{"spec.nodeName"}}
	attrs, err := AttrFunc(&typ)([]byte(`{"metadata":{"name":"a"},"spec":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	for sel, want := range map[string]bool{
		"spec.nodeName=":         true,
		"spec.nodeName!=node-1":  true,
		"spec.nodeName=node-1":   false,
		"metadata.name=a":        true,
		"metadata.namespace!=ns": true,
	} {
		s, err := fields.ParseSelector(sel)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Matches(attrs.Fields); got != want {
			t.Errorf("%s matches = %v, want %v", sel, got, want)
		}
	}
}

func TestAttrFuncBadJSON(t *testing.T) {
	typ := Type{SelectableFields: []string{"spec.nodeName"}}
	if _, err := AttrFunc(&typ)([]byte(`{"metadata":`)); err == nil {
		t.Fatal("want an error for truncated JSON")
	}
}

func BenchmarkAttrFunc(b *testing.B) {
	typ := Type{SelectableFields: []string{
		"involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
		"involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath",
		"reason", "reportingComponent", "source", "type",
	}}
	data := []byte(`{"apiVersion":"v1","kind":"Event","metadata":{"name":"web.17a","namespace":"default","uid":"u","resourceVersion":"12","creationTimestamp":"2024-01-01T00:00:00Z","managedFields":[{"manager":"kubelet","operation":"Update","apiVersion":"v1","time":"2024-01-01T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:count":{},"f:message":{}}}]},
		"involvedObject":{"kind":"Pod","namespace":"default","name":"web","uid":"p","apiVersion":"v1","resourceVersion":"10","fieldPath":"spec.containers{web}"},
		"reason":"Pulled","message":"Successfully pulled image \"nginx\" in 1.2s","source":{"component":"kubelet","host":"node-1"},"firstTimestamp":"2024-01-01T00:00:00Z","lastTimestamp":"2024-01-01T00:00:00Z","count":1,"type":"Normal","reportingComponent":"kubelet","reportingInstance":"node-1"}`)
	f := AttrFunc(&typ)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f(data); err != nil {
			b.Fatal(err)
		}
	}
}
