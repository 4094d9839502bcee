package builtin

import (
	"bytes"
	"encoding/json"
	"maps"
	"math/rand"
	"testing"

	"github.com/miniapi/miniapi/api"
	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	kubefuzzer "k8s.io/kubernetes/pkg/api/testing"
)

// TestObjectsMatchJSONRoundTrip checks the field-wise crossing between
// kube's Go objects and the Store's (objectOf, decodeInto) gives what a
// whole-object JSON round trip gives, for every built-in kind, on
// objects kube's own fuzzer fills.
func TestObjectsMatchJSONRoundTrip(t *testing.T) {
	f := fuzzer.FuzzerFor(kubefuzzer.FuzzerFuncs, rand.NewSource(1), serializer.NewCodecFactory(scheme))
	for _, r := range resources(Config{}) {
		if r.virtual != 0 {
			continue
		}
		k := newKind(r)
		t.Run(k.gvk.String(), func(t *testing.T) {
			for i := range 20 {
				v := k.newVersioned()
				f.Fill(v)
				v.GetObjectKind().SetGroupVersionKind(k.gvk)
				want, err := slowObjectOf(v)
				if err != nil {
					t.Fatal(err)
				}
				got, err := objectOf(v)
				if err != nil {
					t.Fatal(err)
				}
				wantJSON, gotJSON := marshal(t, want), marshal(t, got)
				if !bytes.Equal(wantJSON, gotJSON) {
					t.Fatalf("fill %d: objectOf differs from the JSON round trip:\n got %s\nwant %s", i, gotJSON, wantJSON)
				}
				// Back, both through the remembered value and through
				// the fields' bytes.
				for _, obj := range []*api.Object{got, want} {
					back, err := decodeInto(obj, k.newVersioned())
					if err != nil {
						t.Fatal(err)
					}
					again, err := slowObjectOf(back)
					if err != nil {
						t.Fatal(err)
					}
					if b := marshal(t, again); !bytes.Equal(b, wantJSON) {
						t.Fatalf("fill %d: decodeInto differs from the JSON round trip:\n got %s\nwant %s", i, b, wantJSON)
					}
				}
			}
		})
	}
}

func marshal(t *testing.T, obj *api.Object) []byte {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestAttrsMatchKube checks the attributes a kind's caches select on
// are those kube's GetAttrs gives for the kind, also where the kind
// scans metadata instead of decoding the object (metadataAttrs).
func TestAttrsMatchKube(t *testing.T) {
	f := fuzzer.FuzzerFor(kubefuzzer.FuzzerFuncs, rand.NewSource(2), serializer.NewCodecFactory(scheme))
	for _, r := range resources(Config{}) {
		if r.attrs == nil || len(r.selectable) > 0 || r.virtual != 0 {
			continue
		}
		k := newKind(r)
		t.Run(k.gvk.String(), func(t *testing.T) {
			for i := range 10 {
				v := k.newVersioned()
				f.Fill(v)
				v.GetObjectKind().SetGroupVersionKind(k.gvk)
				obj, err := slowObjectOf(v)
				if err != nil {
					t.Fatal(err)
				}
				data := marshal(t, obj)
				got, err := k.Attrs(data)
				if err != nil {
					t.Fatal(err)
				}
				in, err := k.internalOf(v)
				if err != nil {
					t.Fatal(err)
				}
				ls, fs, err := r.attrs(in)
				if err != nil {
					t.Fatal(err)
				}
				if !maps.Equal(got.Labels, ls) || !maps.Equal(got.Fields, fs) {
					t.Fatalf("fill %d: attrs %v %v, kube's %v %v", i, got.Labels, got.Fields, ls, fs)
				}
			}
		})
	}
}
