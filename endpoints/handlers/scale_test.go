package handlers

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/miniapi/miniapi/api"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestScaleBodyToJSON checks the encodings a Scale may be sent in.
func TestScaleBodyToJSON(t *testing.T) {
	sc := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "w"}, Spec: autoscalingv1.ScaleSpec{Replicas: 3}}
	sc.SetGroupVersionKind(autoscalingv1.SchemeGroupVersion.WithKind("Scale"))
	var pb bytes.Buffer
	if err := scaleCodec().serializer.Encode(sc, &pb); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, contentType string
		body              []byte
		typed             bool
		code              int32 // of the error, 0 for success
	}{
		{"json", "application/json", []byte(`{"spec":{"replicas":3}}`), false, 0},
		{"no-content-type", "", []byte(`{"spec":{"replicas":3}}`), false, 0},
		{"yaml", "application/yaml", []byte("spec:\n  replicas: 3\n"), false, 0},
		{"protobuf", "application/vnd.kubernetes.protobuf", pb.Bytes(), true, 0},
		{"protobuf-garbage", "application/vnd.kubernetes.protobuf", []byte("nope"), false, http.StatusBadRequest},
		{"empty", "application/json", []byte("  "), false, http.StatusBadRequest},
		{"unsupported", "text/plain", []byte("x"), false, http.StatusUnsupportedMediaType},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("PUT", "/x/scale", bytes.NewReader(tc.body))
			if tc.contentType != "" {
				r.Header.Set("Content-Type", tc.contentType)
			}
			j, typed, err := scaleBodyToJSON(r, tc.body)
			if tc.code != 0 {
				se, ok := err.(*api.StatusError)
				if !ok || se.ErrStatus.Code != tc.code {
					t.Fatalf("error %v, want %d", err, tc.code)
				}
				return
			}
			if err != nil || typed != tc.typed {
				t.Fatalf("typed %v, error %v", typed, err)
			}
			var got struct {
				Spec struct{ Replicas int32 } `json:"spec"`
			}
			if err := json.Unmarshal(j, &got); err != nil || got.Spec.Replicas != 3 {
				t.Fatalf("JSON %s (%v)", j, err)
			}
		})
	}
}

// TestScaleProtobufRoundTrip checks a Scale's JSON survives protobuf.
func TestScaleProtobufRoundTrip(t *testing.T) {
	in := `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"w","namespace":"ns","uid":"u","resourceVersion":"7"},"spec":{"replicas":2},"status":{"replicas":1,"selector":"a=b"}}`
	pb, err := scaleCodec().fromJSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	out, err := scaleCodec().toJSON(pb)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"name":"w"`, `"resourceVersion":"7"`, `"spec":{"replicas":2}`, `"selector":"a=b"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("%s lacks %s", out, want)
		}
	}
}
