package server

import (
	"fmt"
	"net/http"
	"testing"
)

const apiServicesURL = "/apis/apiregistration.k8s.io/v1/apiservices"

// apiService reads one APIService, nil when there is none.
func apiService(t *testing.T, c *http.Client, srv *Server, name string) map[string]any {
	t.Helper()
	code, obj := call(t, c, http.MethodGet, srv.URL()+apiServicesURL+"/"+name, "", "")
	if code == http.StatusNotFound {
		return nil
	}
	if code != http.StatusOK {
		t.Fatalf("GET apiservice %s = %d: %v", name, code, obj)
	}
	return obj
}

// available is an APIService's Available condition as "status reason:
// message".
func available(obj map[string]any) string {
	st, _ := obj["status"].(map[string]any)
	conds, _ := st["conditions"].([]any)
	for _, c := range conds {
		c := c.(map[string]any)
		if c["type"] == "Available" {
			return fmt.Sprintf("%v %v: %v", c["status"], c["reason"], c["message"])
		}
	}
	return ""
}

// TestAPIServicesRegistered checks the APIServices kube-apiserver keeps
// are kept: one per built-in group-version with kube-apiserver's
// priorities, one per served version of a CRD while it exists, and an
// APIService of a Service says what kube-apiserver finds of it.
func TestAPIServicesRegistered(t *testing.T) {
	srv := start(t, Config{})
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	spec := func(obj map[string]any) string {
		s := obj["spec"].(map[string]any)
		labels, _ := obj["metadata"].(map[string]any)["labels"].(map[string]any)
		return fmt.Sprintf("%v/%v %v/%v %v", s["group"], s["version"], s["groupPriorityMinimum"], s["versionPriority"],
			labels["kube-aggregator.kubernetes.io/automanaged"])
	}

	// As kube-apiserver 1.37's (`kubectl get apiservice v1.apps -o yaml`).
	for name, want := range map[string]string{
		"v1.":                             "<nil>/v1 18000/1 onstart",
		"v1.apps":                         "apps/v1 17800/15 onstart",
		"v2.autoscaling":                  "autoscaling/v2 17500/30 onstart",
		"v1.apiextensions.k8s.io":         "apiextensions.k8s.io/v1 16700/15 onstart",
		"v1.flowcontrol.apiserver.k8s.io": "flowcontrol.apiserver.k8s.io/v1 16100/21 onstart",
		"v1.resource.k8s.io":              "resource.k8s.io/v1 16200/21 onstart",
	} {
		var obj map[string]any
		waitFor(t, "APIService "+name, func() bool { obj = apiService(t, c, srv, name); return obj != nil })
		if got := spec(obj); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
		if got := available(obj); got != "True Local: Local APIServices are always available" {
			t.Errorf("%s: Available %s", name, got)
		}
	}
	// kube-apiserver registers none for its own aggregator's group.
	if apiService(t, c, srv, "v1.apiregistration.k8s.io") != nil {
		t.Error("v1.apiregistration.k8s.io registered")
	}

	crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"gizmos.as.example.com"},
		"spec":{"group":"as.example.com","names":{"kind":"Gizmo","plural":"gizmos"},"scope":"Namespaced","versions":[
		{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}},
		{"name":"v2","served":false,"storage":false,"schema":{"openAPIV3Schema":{"type":"object"}}}]}}`
	post(t, c, srv.URL()+"/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
	var obj map[string]any
	waitFor(t, "the CRD's APIService", func() bool { obj = apiService(t, c, srv, "v1.as.example.com"); return obj != nil })
	if got := spec(obj); got != "as.example.com/v1 1000/100 true" {
		t.Errorf("v1.as.example.com: %s", got)
	}
	if apiService(t, c, srv, "v2.as.example.com") != nil {
		t.Error("an APIService for a version that is not served")
	}
	if code, _ := call(t, c, http.MethodDelete, srv.URL()+"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gizmos.as.example.com", "", ""); code != http.StatusOK {
		t.Fatalf("delete CRD = %d", code)
	}
	waitFor(t, "the CRD's APIService to go", func() bool { return apiService(t, c, srv, "v1.as.example.com") == nil })

	// An APIService of a Service: what kube-apiserver's availability
	// check finds, step by step.
	post(t, c, srv.URL()+apiServicesURL, `{"metadata":{"name":"v1.agg.example.com"},"spec":{"group":"agg.example.com","version":"v1",
		"groupPriorityMinimum":100,"versionPriority":10,"insecureSkipTLSVerify":true,"service":{"namespace":"default","name":"agg"}}}`)
	status := func(want string) {
		t.Helper()
		waitFor(t, want, func() bool { return available(apiService(t, c, srv, "v1.agg.example.com")) == want })
	}
	status(`False ServiceNotFound: service/agg in "default" is not present`)
	post(t, c, srv.URL()+"/api/v1/namespaces/default/services", `{"metadata":{"name":"agg"},"spec":{"clusterIP":"10.0.0.200","ports":[{"name":"https","port":443}]}}`)
	status(`False EndpointsNotFound: cannot find endpointslices for service/agg in "default"`)
	post(t, c, srv.URL()+"/apis/discovery.k8s.io/v1/namespaces/default/endpointslices", `{"metadata":{"name":"agg-1","labels":{"kubernetes.io/service-name":"agg"}},
		"addressType":"IPv4","ports":[{"name":"https","port":8443}],"endpoints":[{"addresses":["192.0.2.30"]}]}`)
	status(`False FailedDiscoveryCheck: failing or missing response from https://10.0.0.200:443/apis/agg.example.com/v1: ` +
		`Get "https://10.0.0.200:443/apis/agg.example.com/v1": dial tcp 10.0.0.200:443: connect: connection refused`)
}
