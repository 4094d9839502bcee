package endpoints

import (
	"net/http"
	"testing"
)

// connectObjects are the objects the streaming subresources are tried on:
// pods on no node, on a missing node, on a node without addresses and on
// one whose kubelet (at 192.0.2.10:10250) nothing answers, a Service with
// an EndpointSlice and one without.
var connectObjects = []struct{ path, body string }{
	{"/api/v1/namespaces", `{"metadata":{"name":"conn"}}`},
	{"/api/v1/nodes", `{"metadata":{"name":"bare"}}`},
	{"/api/v1/nodes", `{"metadata":{"name":"n1"},"status":{"addresses":[{"type":"InternalIP","address":"192.0.2.10"}]}}`},
	{"/api/v1/nodes", `{"metadata":{"name":"local"},"status":{"addresses":[{"type":"InternalIP","address":"127.0.0.1"}],"daemonEndpoints":{"kubeletEndpoint":{"Port":1}}}}`},
	{"/api/v1/namespaces/conn/pods", `{"metadata":{"name":"unsched"},"spec":{"containers":[{"name":"c1","image":"busybox"}]}}`},
	{"/api/v1/namespaces/conn/pods", `{"metadata":{"name":"two"},"spec":{"nodeName":"ghost",
		"initContainers":[{"name":"init1","image":"busybox"}],"containers":[{"name":"c1","image":"busybox"},{"name":"c2","image":"busybox"}]}}`},
	{"/api/v1/namespaces/conn/pods", `{"metadata":{"name":"onbare"},"spec":{"nodeName":"bare","containers":[{"name":"c1","image":"busybox"}]}}`},
	{"/api/v1/namespaces/conn/pods", `{"metadata":{"name":"web"},"spec":{"nodeName":"n1","containers":[{"name":"c1","image":"busybox","ports":[{"containerPort":8080}]}]},
		"status":{"podIP":"192.0.2.20","podIPs":[{"ip":"192.0.2.20"}]}}`},
	{"/api/v1/namespaces/conn/pods", `{"metadata":{"name":"onlocal"},"spec":{"nodeName":"local","containers":[{"name":"c1","image":"busybox"}]}}`},
	{"/api/v1/namespaces/conn/services", `{"metadata":{"name":"lonely"},"spec":{"ports":[{"name":"http","port":80}]}}`},
	{"/api/v1/namespaces/conn/services", `{"metadata":{"name":"websvc"},"spec":{"ports":[{"name":"http","port":80,"targetPort":8080}]}}`},
	{"/apis/discovery.k8s.io/v1/namespaces/conn/endpointslices", `{"metadata":{"name":"websvc-1","labels":{"kubernetes.io/service-name":"websvc"}},
		"addressType":"IPv4","ports":[{"name":"http","port":8080,"protocol":"TCP"}],
		"endpoints":[{"addresses":["192.0.2.20"],"targetRef":{"kind":"Pod","namespace":"conn","name":"web"}}]}`},
}

// TestConnectSubresources checks the answers of the streaming
// subresources where kube-apiserver would reach a kubelet or an endpoint
// and miniapi has none: each case was compared with kube-apiserver 1.37
// for the same objects and request (its refused connections answer as
// kube's do when nothing listens at the address).
func TestConnectSubresources(t *testing.T) {
	f := newFixture(t)
	for _, o := range connectObjects {
		f.Must(http.StatusCreated, http.MethodPost, o.path, o.body)
	}
	// Objects are created with status dropped; the pod's IP is status.
	f.Must(http.StatusOK, http.MethodPatch, "/api/v1/namespaces/conn/pods/web/status",
		`{"status":{"podIP":"192.0.2.20","podIPs":[{"ip":"192.0.2.20"}]}}`, "Content-Type", "application/merge-patch+json")
	f.Must(http.StatusOK, http.MethodPatch, "/api/v1/nodes/n1/status",
		`{"status":{"addresses":[{"type":"InternalIP","address":"192.0.2.10"}]}}`, "Content-Type", "application/merge-patch+json")
	f.Must(http.StatusOK, http.MethodPatch, "/api/v1/nodes/local/status",
		`{"status":{"addresses":[{"type":"InternalIP","address":"127.0.0.1"}],"daemonEndpoints":{"kubeletEndpoint":{"Port":1}}}}`,
		"Content-Type", "application/merge-patch+json")

	spdy := []string{"Connection", "Upgrade", "Upgrade", "SPDY/3.1", "X-Stream-Protocol-Version", "v4.channel.k8s.io"}
	const pods = "/api/v1/namespaces/conn/pods/"
	cases := []struct {
		name, method, path string
		headers            []string
		code               int
		reason, message    string
	}{
		// pods/log: kube's PodLogOptions, container choice and kubelet.
		{"log missing pod", "GET", pods + "nosuch/log", nil, 404, "NotFound", `pods "nosuch" not found`},
		{"log which container", "GET", pods + "two/log", nil, 400, "BadRequest",
			"a container name must be specified for pod two, choose one of: [init1 c1 c2]"},
		{"log bad container", "GET", pods + "two/log?container=zz", nil, 400, "BadRequest", "container zz is not valid for pod two"},
		{"log missing node", "GET", pods + "two/log?container=init1", nil, 404, "NotFound", `pods "ghost" not found`},
		{"log node without address", "GET", pods + "onbare/log", nil, 500, "", "no preferred addresses found; known addresses: []"},
		{"log kubelet unreachable", "GET", pods + "web/log?follow=true&tailLines=3&timestamps=true", nil, 500, "",
			`Get "https://192.0.2.10:10250/containerLogs/conn/web/c1?follow=true&tailLines=3&timestamps=true": dial tcp 192.0.2.10:10250: connect: connection refused`},
		{"log kubelet port", "GET", pods + "onlocal/log", nil, 500, "",
			`Get "https://127.0.0.1:1/containerLogs/conn/onlocal/c1": dial tcp 127.0.0.1:1: connect: connection refused`},
		{"log negative tailLines", "GET", pods + "web/log?tailLines=-1", nil, 422, "Invalid",
			`PodLogOptions "web" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0`},
		{"log tailLines not a number", "GET", pods + "web/log?tailLines=abc", nil, 400, "BadRequest", `strconv.ParseInt: parsing "abc": invalid syntax`},
		{"log since both ways", "GET", pods + "web/log?sinceSeconds=1&sinceTime=2020-01-01T00:00:00Z", nil, 422, "Invalid",
			"PodLogOptions \"web\" is invalid: []: Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified"},
		{"log limitBytes zero", "GET", pods + "web/log?limitBytes=0", nil, 422, "Invalid",
			`PodLogOptions "web" is invalid: limitBytes: Invalid value: 0: must be greater than 0`},
		{"log timeout is not the server's", "GET", pods + "onlocal/log?timeout=abc", nil, 500, "",
			`Get "https://127.0.0.1:1/containerLogs/conn/onlocal/c1": dial tcp 127.0.0.1:1: connect: connection refused`},
		{"log POST", "POST", pods + "web/log", nil, 405, "MethodNotAllowed", "the server does not allow this method on the requested resource"},

		// exec, attach, portforward: checked before the upgrade, which
		// they require.
		{"exec missing pod", "POST", pods + "nosuch/exec?command=ls", nil, 404, "NotFound", `pods "nosuch" not found`},
		{"exec no host", "POST", pods + "unsched/exec?command=ls", nil, 400, "BadRequest", "pod unsched does not have a host assigned"},
		{"exec which container", "POST", pods + "two/exec?command=ls", nil, 400, "BadRequest",
			"a container name must be specified for pod two, choose one of: [init1 c1 c2]"},
		{"exec missing node", "POST", pods + "two/exec?command=ls&container=c2", nil, 404, "NotFound", `pods "ghost" not found`},
		{"exec not upgraded", "POST", pods + "web/exec?command=ls", nil, 400, "BadRequest", "Upgrade request required"},
		{"exec dry run", "POST", pods + "web/exec?command=ls&dryRun=All", nil, 400, "BadRequest", "dryRun is not supported"},
		{"exec upgraded", "POST", pods + "web/exec?command=ls", spdy, 500, "", "error dialing backend: dial tcp 192.0.2.10:10250: connect: connection refused"},
		{"exec PUT", "PUT", pods + "web/exec", nil, 405, "MethodNotAllowed", "the server does not allow this method on the requested resource"},
		{"attach upgraded", "POST", pods + "web/attach?stdout=true", spdy, 500, "", "error dialing backend: dial tcp 192.0.2.10:10250: connect: connection refused"},
		{"attach no host", "GET", pods + "unsched/attach", nil, 400, "BadRequest", "pod unsched does not have a host assigned"},
		{"portforward bad port", "POST", pods + "web/portforward?ports=abc", nil, 400, "BadRequest",
			`cannot convert to []int32: strconv.ParseUint: parsing "abc": invalid syntax`},
		{"portforward upgraded", "POST", pods + "web/portforward?ports=8080", spdy, 500, "",
			"error dialing backend: dial tcp 192.0.2.10:10250: connect: connection refused"},

		// proxies: the pod's IP, the node's kubelet, a Service endpoint.
		{"pod proxy", "GET", pods + "web/proxy/healthz", nil, 503, "ServiceUnavailable",
			"error trying to reach service: dial tcp 192.0.2.20:8080: connect: connection refused"},
		{"pod proxy port", "PUT", pods + "web:9090/proxy/a/", nil, 503, "ServiceUnavailable",
			"error trying to reach service: dial tcp 192.0.2.20:9090: connect: connection refused"},
		{"pod proxy no IP", "GET", pods + "unsched/proxy/", nil, 400, "BadRequest", "address not allowed"},
		{"pod proxy bad name", "GET", pods + "a:b:c:d/proxy/", nil, 400, "BadRequest", `invalid pod request "a:b:c:d"`},
		{"node proxy", "GET", "/api/v1/nodes/n1/proxy/stats", nil, 503, "ServiceUnavailable",
			"error trying to reach service: dial tcp 192.0.2.10:10250: connect: connection refused"},
		{"node proxy loopback", "GET", "/api/v1/nodes/local/proxy/", nil, 400, "BadRequest", "address not allowed"},
		{"node proxy missing", "DELETE", "/api/v1/nodes/ghost/proxy/", nil, 404, "NotFound", `nodes "ghost" not found`},
		{"service proxy no endpoints", "GET", "/api/v1/namespaces/conn/services/lonely/proxy/", nil, 503, "ServiceUnavailable",
			`no endpoints available for service "lonely"`},
		{"service proxy no port", "GET", "/api/v1/namespaces/conn/services/lonely:81/proxy/", nil, 503, "ServiceUnavailable",
			`no service port 81 found for service "lonely"`},
		{"service proxy missing", "GET", "/api/v1/namespaces/conn/services/nosvc:80/proxy/", nil, 404, "NotFound", `services "nosvc" not found`},
		{"service proxy endpoint", "POST", "/api/v1/namespaces/conn/services/websvc:http/proxy/x", nil, 503, "ServiceUnavailable",
			"error trying to reach service: dial tcp 192.0.2.20:8080: connect: connection refused"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := f.Do(c.method, c.path, nil, c.headers...)
			if r.Code != c.code {
				t.Fatalf("code %d, want %d: %s", r.Code, c.code, r.Body)
			}
			st := r.Obj(t)
			if st["kind"] != "Status" || st["status"] != "Failure" || int(st["code"].(float64)) != c.code {
				t.Fatalf("not a %d failure Status: %s", c.code, r.Body)
			}
			if reason, _ := st["reason"].(string); reason != c.reason {
				t.Errorf("reason %q, want %q", reason, c.reason)
			}
			if st["message"] != c.message {
				t.Errorf("message %q\nwant    %q", st["message"], c.message)
			}
		})
	}

	t.Run("log of an unscheduled pod", func(t *testing.T) {
		// There is no log yet: 204 and no body, as kube-apiserver.
		r := f.Do("GET", pods+"unsched/log", nil)
		if r.Code != http.StatusNoContent || len(r.Body) != 0 {
			t.Fatalf("%d %q, want 204 and no body", r.Code, r.Body)
		}
	})
	t.Run("proxy redirects to its root", func(t *testing.T) {
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := client.Get(f.url + "/api/v1/nodes/n1/proxy?x=1")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != "/api/v1/nodes/n1/proxy/?x=1" {
			t.Fatalf("%d Location %q, want 301 to /api/v1/nodes/n1/proxy/?x=1", resp.StatusCode, resp.Header.Get("Location"))
		}
	})
}
