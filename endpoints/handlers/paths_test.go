package handlers

import (
	"testing"
)

func TestParseResourcePath(t *testing.T) {
	cases := []struct {
		name string
		rest string
		want RequestInfo
		ok   bool
	}{
		{"collection", "configmaps", RequestInfo{Resource: "configmaps"}, true},
		{"namespaced collection", "namespaces/ns1/configmaps", RequestInfo{Resource: "configmaps", Namespace: "ns1", NamespacedPath: true}, true},
		{"namespaced object", "namespaces/ns1/configmaps/a", RequestInfo{Resource: "configmaps", Namespace: "ns1", NamespacedPath: true, Name: "a"}, true},
		{"subresource", "namespaces/ns1/widgets/a/status", RequestInfo{Resource: "widgets", Namespace: "ns1", NamespacedPath: true, Name: "a", Subresource: "status"}, true},
		{"namespace object", "namespaces/ns1", RequestInfo{Resource: "namespaces", Name: "ns1"}, true},
		{"namespace status", "namespaces/ns1/status", RequestInfo{Resource: "namespaces", Name: "ns1", Subresource: "status"}, true},
		{"namespace finalize", "namespaces/ns1/finalize", RequestInfo{Resource: "namespaces", Name: "ns1", Subresource: "finalize"}, true},
		{"legacy watch", "watch/namespaces/ns1/configmaps", RequestInfo{Resource: "configmaps", Namespace: "ns1", NamespacedPath: true, Watch: true}, true},
		{"legacy watch object", "watch/namespaces/ns1/configmaps/a", RequestInfo{Resource: "configmaps", Namespace: "ns1", NamespacedPath: true, Name: "a", Watch: true}, true},
		{"legacy watch all", "watch/configmaps", RequestInfo{Resource: "configmaps", Watch: true}, true},
		{"proxy", "namespaces/ns1/pods/a/proxy", RequestInfo{Resource: "pods", Namespace: "ns1", NamespacedPath: true, Name: "a", Subresource: "proxy"}, true},
		{"proxy slash", "namespaces/ns1/pods/a/proxy/", RequestInfo{Resource: "pods", Namespace: "ns1", NamespacedPath: true, Name: "a", Subresource: "proxy", SubPath: "/"}, true},
		{"proxy path", "nodes/n:8080/proxy/a//b", RequestInfo{Resource: "nodes", Name: "n:8080", Subresource: "proxy", SubPath: "/a//b"}, true},
		{"proxy path slash", "nodes/n/proxy/a/b/", RequestInfo{Resource: "nodes", Name: "n", Subresource: "proxy", SubPath: "/a/b/"}, true},
		{"too deep", "namespaces/ns1/configmaps/a/b/c", RequestInfo{}, false},
		{"empty", "", RequestInfo{}, false},
		{"watch only", "watch", RequestInfo{}, false},
		{"empty segment", "namespaces/ns1/configmaps//x", RequestInfo{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ParseResourcePath("", "v1", tc.rest)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v (%+v)", ok, tc.ok, got)
			}
			if !ok {
				return
			}
			tc.want.Version = "v1"
			if got != tc.want {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
