package server

import (
	"net/http"
	"testing"
)

// TestNamespaceLifecycle: kube's NamespaceLifecycle admission plugin
// judges writes into namespaces as kube-apiserver's does, before the
// other plugins and the kind's validation, and protects the system
// namespaces from deletion.
func TestNamespaceLifecycle(t *testing.T) {
	srv := start(t, Config{})
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	base := srv.URL() + "/api/v1/namespaces"

	// A namespace that does not exist: 404 for it, even for an object
	// the pod rules would refuse and the ServiceAccount plugin could
	// not admit (no default ServiceAccount).
	code, st := call(t, c, "POST", base+"/nope/pods", `{"metadata":{"name":"p"},"spec":{"containers":[]}}`, "application/json")
	if code != 404 || st["message"] != `namespaces "nope" not found` {
		t.Errorf("pod in a missing namespace = %d %v", code, st)
	}

	// The namespaces kube-apiserver keeps.
	for _, n := range []string{"default", "kube-system", "kube-public"} {
		query := ""
		if n == "default" {
			query = "?dryRun=All"
		}
		code, st := call(t, c, "DELETE", base+"/"+n+query, "", "")
		if code != 403 || st["message"] != `namespaces "`+n+`" is forbidden: this namespace may not be deleted` {
			t.Errorf("DELETE %s%s = %d %v", n, query, code, st)
		}
	}
	code, ns := call(t, c, "GET", base+"/kube-public", "", "")
	if meta, _ := ns["metadata"].(map[string]any); code != 200 || meta["deletionTimestamp"] != nil {
		t.Errorf("kube-public after its delete was refused = %d %v", code, meta)
	}

	// Objects made right after their namespace.
	for _, n := range []string{"a", "b", "c"} {
		post(t, c, base, `{"metadata":{"name":"`+n+`"}}`)
		post(t, c, base+"/"+n+"/configmaps", `{"metadata":{"name":"first"}}`)
	}

	// A namespace being deleted (held by its content's finalizer) takes
	// nothing new, with the cause clients and kube's controllers look
	// for; updates still go through.
	post(t, c, base, `{"metadata":{"name":"team"}}`)
	post(t, c, base+"/team/configmaps", `{"metadata":{"name":"held","finalizers":["example.com/hold"]}}`)
	if code, _ := call(t, c, "DELETE", base+"/team", "", ""); code != 200 {
		t.Fatalf("DELETE namespace = %d", code)
	}
	code, st = call(t, c, "POST", base+"/team/configmaps", `{"metadata":{"name":"late"}}`, "application/json")
	details, _ := st["details"].(map[string]any)
	causes, _ := details["causes"].([]any)
	var cause map[string]any
	if len(causes) == 1 {
		cause, _ = causes[0].(map[string]any)
	}
	if code != 403 || st["message"] != "configmaps \"late\" is forbidden: unable to create new content in namespace team because it is being terminated" ||
		cause["reason"] != "NamespaceTerminating" || cause["field"] != "metadata.namespace" || cause["message"] != "namespace team is being terminated" {
		t.Errorf("create in a terminating namespace = %d %v", code, st)
	}
	if code, _ := call(t, c, "PATCH", base+"/team/configmaps/held", `{"data":{"k":"v"}}`, "application/merge-patch+json"); code != 200 {
		t.Errorf("update in a terminating namespace = %d", code)
	}
}

// TestNamespaceLifecycleDisabled: with the plugin off, as with
// kube-apiserver's --disable-admission-plugins=NamespaceLifecycle,
// nothing checks an object's namespace.
func TestNamespaceLifecycleDisabled(t *testing.T) {
	srv := start(t, Config{DisableAdmissionPlugins: []string{"NamespaceLifecycle"}})
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	post(t, c, srv.URL()+"/api/v1/namespaces/nope/configmaps", `{"metadata":{"name":"c"}}`)
	for _, q := range []string{"kube-public", "default?dryRun=All"} {
		if code, st := call(t, c, "DELETE", srv.URL()+"/api/v1/namespaces/"+q, "", ""); code != 200 {
			t.Errorf("DELETE %s = %d %v", q, code, st)
		}
	}
}
