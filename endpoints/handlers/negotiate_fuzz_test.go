package handlers

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzNegotiate feeds any Accept header to the negotiation (kube's, with
// miniapi's restrictions) and to the router's check: negotiation picks
// one of the formats miniapi writes, whatever the header, converting only
// to what can be written; the router's check passes or is a 406 Status;
// and an error's Status is always writable.
func FuzzNegotiate(f *testing.F) {
	for _, h := range []string{
		"", "*/*", "application/json", "application/json;as=Table;v=v1;g=meta.k8s.io, application/json",
		"application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1",
		"application/com.github.proto-openapi.spec.v2@v1.0+protobuf; q=0.9, application/json;q=0.1",
		"text/html, application/yaml;q=0.5, */*;q=0", "application/json;q=NaN, application/yaml;q=Inf",
		`application/json; x="a;b", ;;, /, a/, /b`, "APPLICATION/JSON;Q=0.5;PRETTY=1",
		"application/json;stream=watch;sv=v1", "*/*, application/yaml", "application/*;as=Table;g=meta.k8s.io;v=v1",
	} {
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, header string) {
		r := httptest.NewRequest(http.MethodGet, "/api/v1/configmaps", nil)
		r.Header.Set("Accept", header)
		out, err := negotiateOutput(r, nil)
		switch {
		case err != nil:
			if _, ok := err.(statusCarrier); !ok {
				t.Fatalf("negotiateOutput(%q) = %v: not a Status", header, err)
			}
		case out.mediaType != mediaJSON && out.mediaType != mediaYAML && out.mediaType != mediaProtobuf:
			t.Fatalf("negotiateOutput(%q) = %+v", header, out)
		case out.mediaType == mediaProtobuf && out.as != asPartial && out.as != asPartialList:
			t.Fatalf("negotiateOutput(%q) = %+v: protobuf for a type not served in it", header, out)
		}
		if st := negotiateStatus(r); st.as != "" || (st.mediaType != mediaJSON && st.mediaType != mediaYAML && st.mediaType != mediaProtobuf) {
			t.Fatalf("negotiateStatus(%q) = %+v", header, st)
		}
		if err := RouteNotAcceptable(r, routeListMedia); err != nil {
			if st, ok := err.(statusCarrier); !ok || st.Status().Code != http.StatusNotAcceptable {
				t.Fatalf("RouteNotAcceptable(%q) = %v: not a 406 Status", header, err)
			}
		}
	})
}

// FuzzParseResourcePath feeds any path after /api/v1/ (or
// /apis/<group>/<version>/) to ParseResourcePath. What it accepts names
// a resource, segments without slashes, and no subresource of a legacy
// watch; written back as a path, it parses to the same request.
func FuzzParseResourcePath(f *testing.F) {
	for _, p := range []string{
		"configmaps", "namespaces/ns1/configmaps/a", "namespaces/ns1", "namespaces/ns1/status", "namespaces/ns1/finalize",
		"watch/namespaces/ns1/configmaps", "namespaces/ns1/pods/p/proxy/a/b/", "nodes/n/proxy", "pods//x", "watch/pods/p/log",
		"namespaces/ns1/deployments/d/scale/", "/a/b/c/d",
	} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, rest string) {
		info, ok := ParseResourcePath("apps", "v1", rest)
		if !ok {
			return
		}
		if info.Resource == "" || (info.Subresource != "" && info.Name == "") || (info.Watch && info.Subresource != "") {
			t.Fatalf("ParseResourcePath(%q) = %+v", rest, info)
		}
		for _, s := range []string{info.Namespace, info.Resource, info.Name, info.Subresource} {
			if strings.Contains(s, "/") {
				t.Fatalf("ParseResourcePath(%q) = %+v: a segment with a slash", rest, info)
			}
		}
		if info.NamespacedPath && info.Namespace == "" {
			t.Fatalf("ParseResourcePath(%q) = %+v: an empty namespace", rest, info)
		}
		if info.Subresource == "proxy" {
			return // the path after it is passed on as it came
		}
		var b strings.Builder
		if info.Watch {
			b.WriteString("watch/")
		}
		if info.NamespacedPath {
			b.WriteString("namespaces/" + info.Namespace + "/")
		}
		b.WriteString(info.Resource)
		for _, s := range []string{info.Name, info.Subresource} {
			if s != "" {
				b.WriteString("/" + s)
			}
		}
		again, ok := ParseResourcePath("apps", "v1", b.String())
		if !ok || again != info {
			t.Fatalf("ParseResourcePath(%q) = %+v, written back as %q parses to %+v, %v", rest, info, b.String(), again, ok)
		}
	})
}
