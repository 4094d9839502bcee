package handlers

import (
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzParseAccept feeds any Accept header to ParseAccept and to the
// negotiation built on it. Clauses come out best first with a positive
// quality and a lower-case type and subtype; negotiation picks one of
// the formats miniapi writes, whatever the header, and an error's Status
// is always writable.
func FuzzParseAccept(f *testing.F) {
	for _, h := range []string{
		"", "*/*", "application/json", "application/json;as=Table;v=v1;g=meta.k8s.io, application/json",
		"application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1",
		"application/com.github.proto-openapi.spec.v2@v1.0+protobuf; q=0.9, application/json;q=0.1",
		"text/html, application/yaml;q=0.5, */*;q=0", "application/json;q=NaN, application/yaml;q=Inf",
		`application/json; x="a;b", ;;, /, a/, /b`, "APPLICATION/JSON;Q=0.5;PRETTY=1",
	} {
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, header string) {
		clauses := ParseAccept(header)
		for i, c := range clauses {
			if c.Type == "" || c.Subtype == "" || c.Type != strings.ToLower(c.Type) || c.Subtype != strings.ToLower(c.Subtype) {
				t.Fatalf("ParseAccept(%q)[%d] = %+v: not a lower-case type/subtype", header, i, c)
			}
			if !(c.Q > 0) || math.IsNaN(c.Q) {
				t.Fatalf("ParseAccept(%q)[%d] has quality %v", header, i, c.Q)
			}
			if i > 0 && c.Q > clauses[i-1].Q {
				t.Fatalf("ParseAccept(%q) is not best first: %+v", header, clauses)
			}
			if _, ok := c.Params["q"]; ok {
				t.Fatalf("ParseAccept(%q)[%d] keeps q among the parameters", header, i)
			}
		}
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
