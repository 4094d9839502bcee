package endpoints

import (
	"bytes"
	"net/url"
	"testing"

	"github.com/miniapi/miniapi/registry"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)

// fuzzScaleTypes are the Content-Types of a /scale request: a Scale
// in JSON, YAML or protobuf for PUT, the patch types for PATCH.
var fuzzScaleTypes = []string{
	"application/json", "application/yaml", protobufMedia, "",
	registry.PatchJSON, registry.PatchMerge, registry.PatchStrategicMerge, registry.PatchApply, "text/plain",
}

// FuzzScale sends a Scale (PUT, in JSON, YAML or protobuf) or a patch of
// any type (PATCH) to /scale of a Deployment (kube's rules) or of a
// custom resource (the registry's), with or without dryRun and a
// fieldValidation. A refused or dry-run request leaves the object as it
// was; an accepted one answers a Scale with the object's new replicas.
//
// mode picks the Content-Type (low bits; the first four are PUT), then
// dry run and fieldValidation.
func FuzzScale(f *testing.F) {
	s := newFuzzServer(f)
	scaled := []fuzzObject{fuzzDeployment, fuzzDoohickey}
	for k := range scaled {
		f.Add(uint8(k), uint8(0), []byte(`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"fz","namespace":"ns1"},"spec":{"replicas":4}}`))
		f.Add(uint8(k), uint8(0), []byte(`{"metadata":{"name":"fz","resourceVersion":"1"},"spec":{"replicas":-1}}`))
		f.Add(uint8(k), uint8(1), []byte("kind: Scale\nmetadata: {name: fz}\nspec: {replicas: 0}\nbogus: 1\n"))
		f.Add(uint8(k), uint8(2), scaleProtobuf(f, 7))
		f.Add(uint8(k), uint8(4), []byte(`[{"op":"replace","path":"/spec/replicas","value":9}]`))
		f.Add(uint8(k), uint8(5), []byte(`{"spec":{"replicas":2147483648}}`))
		f.Add(uint8(k), uint8(6), []byte(`{"spec":{"replicas":1},"status":{"replicas":5}}`))
		f.Add(uint8(k), uint8(7), []byte("apiVersion: autoscaling/v1\nkind: Scale\nmetadata: {name: fz}\nspec: {replicas: 6}\n"))
		f.Add(uint8(k), uint8(5+2*len(fuzzScaleTypes)), []byte(`{"spec":{"replicas":3}}`))
		f.Add(uint8(k), uint8(0), []byte(`null`))
		f.Add(uint8(k), uint8(0), []byte(`[]`))
		f.Add(uint8(k), uint8(4), []byte(`[{"op":"replace","path":"","value":null}]`))
	}
	f.Fuzz(func(t *testing.T, kind, mode uint8, body []byte) {
		o := pick(kind, scaled)
		ct := pick(mode, fuzzScaleTypes)
		rest := mode / uint8(len(fuzzScaleTypes))
		dryRun := rest&1 == 1
		q := url.Values{}
		if dryRun {
			q.Set("dryRun", "All")
		}
		if v := pick(rest>>1, fuzzValidation); v != "" {
			q.Set("fieldValidation", v)
		}
		method := "PATCH"
		if int(mode)%len(fuzzScaleTypes) < 4 {
			method = "PUT"
		}
		if ct == registry.PatchApply {
			q.Set("fieldManager", "fuzz")
		}
		var headers []string
		if ct != "" {
			headers = []string{"Content-Type", ct}
		}
		before := s.get(t, o.path())
		r := s.do(t, method, o.path()+"/scale?"+q.Encode(), body, headers...)
		after := s.get(t, o.path())
		if r.code >= 300 || dryRun {
			if !bytes.Equal(after, before) {
				t.Fatalf("a /scale %s answered %d (dry run %v) changed the object\nfrom %s\nto   %s", method, r.code, dryRun, before, after)
			}
			return
		}
		sc := s.get(t, o.path()+"/scale")
		if !sameJSON(r.body, sc) {
			t.Fatalf("a /scale %s answered\n%s\nbut the Scale is now\n%s", method, r.body, sc)
		}
		s.restore(t, o)
	})
}

// scaleProtobuf is a Scale of replicas in protobuf, for seeds.
func scaleProtobuf(f *testing.F, replicas int32) []byte {
	f.Helper()
	s := runtime.NewScheme()
	s.AddKnownTypes(autoscalingv1.SchemeGroupVersion, &autoscalingv1.Scale{})
	metav1.AddToGroupVersion(s, autoscalingv1.SchemeGroupVersion)
	sc := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "fz", Namespace: "ns1"}, Spec: autoscalingv1.ScaleSpec{Replicas: replicas}}
	sc.SetGroupVersionKind(autoscalingv1.SchemeGroupVersion.WithKind("Scale"))
	var buf bytes.Buffer
	if err := protobuf.NewSerializer(s, s).Encode(sc, &buf); err != nil {
		f.Fatal(err)
	}
	return buf.Bytes()
}
