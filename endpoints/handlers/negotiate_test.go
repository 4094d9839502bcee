package handlers

import (
	"net/http/httptest"
	"testing"
)

func TestNegotiateOutput(t *testing.T) {
	cases := []struct {
		accept string
		want   string // "" means 406
	}{
		{"", mediaJSON},
		{"application/json", mediaJSON},
		{"*/*", mediaJSON},
		{"application/yaml", mediaYAML},
		{"application/vnd.kubernetes.protobuf, application/json", mediaJSON},
		{"application/vnd.kubernetes.protobuf", ""},
		{"application/json;q=0.5, application/yaml", mediaYAML},
		{"application/json;as=Table;v=v1;g=meta.k8s.io, application/json", mediaJSON},
		{"application/json;as=Table;v=v1;g=meta.k8s.io", ""},
		{"text/html", ""},
		{"application/json;q=0", ""},
	}
	for _, tc := range cases {
		t.Run(tc.accept, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/api/v1/configmaps", nil)
			if tc.accept != "" {
				r.Header.Set("Accept", tc.accept)
			}
			out, err := negotiateOutput(r)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("got %s, want 406", out.mediaType)
				}
				return
			}
			if err != nil || out.mediaType != tc.want {
				t.Fatalf("got %q %v, want %q", out.mediaType, err, tc.want)
			}
		})
	}
}

func TestWantsPretty(t *testing.T) {
	cases := []struct {
		url, ua string
		want    bool
	}{
		{"/x", "curl/8.0", true},
		{"/x", "kubectl/v1.37.0", false},
		{"/x?pretty=true", "kubectl/v1.37.0", true},
		{"/x?pretty=false", "curl/8.0", false},
	}
	for _, tc := range cases {
		r := httptest.NewRequest("GET", tc.url, nil)
		r.Header.Set("User-Agent", tc.ua)
		if got := wantsPretty(r); got != tc.want {
			t.Errorf("wantsPretty(%s, %s) = %v", tc.url, tc.ua, got)
		}
	}
}
