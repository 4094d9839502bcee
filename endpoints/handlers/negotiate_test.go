package handlers

import (
	"net/http/httptest"
	"testing"
)

func TestNegotiateOutput(t *testing.T) {
	cases := []struct {
		accept string
		want   string // "" means 406
		as     string
	}{
		{"", mediaJSON, ""},
		{"application/json", mediaJSON, ""},
		{"*/*", mediaJSON, ""},
		{"application/yaml", mediaYAML, ""},
		{"application/vnd.kubernetes.protobuf, application/json", mediaJSON, ""},
		{"application/vnd.kubernetes.protobuf", "", ""},
		{"application/json;q=0.5, application/yaml", mediaYAML, ""},
		{"application/json;as=Table;v=v1;g=meta.k8s.io, application/json", mediaJSON, "Table v1"},
		{"application/json;as=Table;v=v1;g=meta.k8s.io", mediaJSON, "Table v1"},
		{"application/json;as=Table;v=v1beta1;g=meta.k8s.io", mediaJSON, "Table v1beta1"},
		{"application/yaml;as=Table;v=v1;g=meta.k8s.io", mediaYAML, "Table v1"},
		// kubectl get's header.
		{"application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json", mediaJSON, "Table v1"},
		// client-go's metadata client: protobuf is skipped, the JSON
		// conversion wins over plain JSON.
		{"application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json", mediaJSON, "PartialObjectMetadataList v1"},
		{"application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1", mediaJSON, "PartialObjectMetadata v1beta1"},
		// Unknown conversions are skipped, as kube-apiserver skips them.
		{"application/json;as=Pod;v=v1;g=meta.k8s.io", "", ""},
		{"application/json;as=Table;v=v2;g=meta.k8s.io", "", ""},
		{"application/json;as=Table;v=v1;g=example.com", "", ""},
		{"application/json;g=meta.k8s.io", "", ""},
		{"application/json;as=Bogus;v=v1;g=meta.k8s.io, application/yaml", mediaYAML, ""},
		{"text/html", "", ""},
		{"application/json;q=0", "", ""},
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
			as := ""
			if out.as != "" {
				as = out.as + " " + out.asVersion
			}
			if as != tc.as {
				t.Fatalf("conversion %q, want %q", as, tc.as)
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
