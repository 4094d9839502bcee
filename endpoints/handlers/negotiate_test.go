package handlers

import (
	"net/http/httptest"
	"testing"

	"github.com/miniapi/miniapi/registry"
)

// Types negotiation sees: a built-in kind served in protobuf, and a
// custom one that is not.
var (
	builtinKind = &registry.Type{Version: "v1", Kind: "ConfigMap", ListKind: "ConfigMapList", Plural: "configmaps"}
	customKind  = &registry.Type{Group: "example.com", Version: "v1", Kind: "Widget", ListKind: "WidgetList", Plural: "widgets"}
)

// metadataClientAccept is what client-go's metadata client sends for lists.
const metadataClientAccept = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"

func TestNegotiateOutput(t *testing.T) {
	cases := []struct {
		accept string
		want   string // "" means 406
		as     string
		t      *registry.Type
	}{
		{"", mediaJSON, "", nil},
		{"application/json", mediaJSON, "", nil},
		{"*/*", mediaJSON, "", nil},
		{"application/yaml", mediaYAML, "", nil},
		{"application/vnd.kubernetes.protobuf, application/json", mediaJSON, "", nil},
		{"application/vnd.kubernetes.protobuf", "", "", nil},
		{"application/json;q=0.5, application/yaml", mediaYAML, "", nil},
		{"application/json;as=Table;v=v1;g=meta.k8s.io, application/json", mediaJSON, "Table v1", nil},
		{"application/json;as=Table;v=v1;g=meta.k8s.io", mediaJSON, "Table v1", nil},
		{"application/json;as=Table;v=v1beta1;g=meta.k8s.io", mediaJSON, "Table v1beta1", nil},
		{"application/yaml;as=Table;v=v1;g=meta.k8s.io", mediaYAML, "Table v1", nil},
		// kubectl get's header.
		{"application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json", mediaJSON, "Table v1", nil},
		// client-go's metadata client gets protobuf PartialObjectMetadata
		// for any type.
		{metadataClientAccept, mediaProtobuf, "PartialObjectMetadataList v1", builtinKind},
		{metadataClientAccept, mediaProtobuf, "PartialObjectMetadataList v1", customKind},
		// Typed clients get protobuf for built-in kinds only.
		{"application/vnd.kubernetes.protobuf, application/json", mediaProtobuf, "", builtinKind},
		{"application/vnd.kubernetes.protobuf", mediaProtobuf, "", builtinKind},
		{"application/json, application/vnd.kubernetes.protobuf", mediaJSON, "", builtinKind},
		{"application/vnd.kubernetes.protobuf, application/json", mediaJSON, "", customKind},
		{"application/vnd.kubernetes.protobuf", "", "", customKind},
		// Tables are never protobuf.
		{"application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io, application/json", mediaJSON, "", builtinKind},
		{"application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1", mediaJSON, "PartialObjectMetadata v1beta1", nil},
		// Unknown conversions are skipped, as kube-apiserver skips them.
		{"application/json;as=Pod;v=v1;g=meta.k8s.io", "", "", nil},
		{"application/json;as=Table;v=v2;g=meta.k8s.io", "", "", nil},
		{"application/json;as=Table;v=v1;g=example.com", "", "", nil},
		{"application/json;g=meta.k8s.io", "", "", nil},
		{"application/json;as=Bogus;v=v1;g=meta.k8s.io, application/yaml", mediaYAML, "", nil},
		{"text/html", "", "", nil},
		// kube's negotiation, not RFC 9110's (each answer read from
		// kube-apiserver 1.37.1): q=0 is a candidate like any other, a
		// wildcard sorts after the types it could stand for, and only
		// the media types kube serves count.
		{"application/json;q=0", mediaJSON, "", nil},
		{"*/*, application/yaml", mediaYAML, "", nil},
		{"*/*;q=0.5, application/yaml;q=0.1", mediaYAML, "", nil},
		{"text/yaml", "", "", nil},
		{"application/x-yaml", "", "", nil},
		{"application/json-seq", "", "", nil},
		{"application/json;foo=bar", mediaJSON, "", nil},
	}
	for _, tc := range cases {
		t.Run(tc.accept, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/api/v1/configmaps", nil)
			if tc.accept != "" {
				r.Header.Set("Accept", tc.accept)
			}
			out, err := negotiateOutput(r, tc.t)
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

func TestNegotiateStatus(t *testing.T) {
	cases := []struct{ accept, want string }{
		{"", mediaJSON},
		{"application/vnd.kubernetes.protobuf, application/json", mediaProtobuf},
		{"application/yaml", mediaYAML},
		// Conversions do not apply to a Status.
		{metadataClientAccept, mediaJSON},
		{"application/json;as=Table;v=v1;g=meta.k8s.io", mediaJSON},
		// Nothing acceptable still gets the error, as JSON.
		{"text/html", mediaJSON},
	}
	for _, tc := range cases {
		r := httptest.NewRequest("GET", "/api/v1/configmaps", nil)
		r.Header.Set("Accept", tc.accept)
		if got := negotiateStatus(r).mediaType; got != tc.want {
			t.Errorf("Accept %q: Status as %s, want %s", tc.accept, got, tc.want)
		}
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
