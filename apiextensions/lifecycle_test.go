package apiextensions_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miniapi/miniapi/apiextensions"
)

// putCRD replaces the CRD with crd, carrying over the stored
// resourceVersion, and retries when the controller's status write wins
// the race (409), as clients do.
func putCRD(t *testing.T, base string, crd map[string]any) {
	t.Helper()
	for attempt := 0; ; attempt++ {
		code, body := do(t, "GET", base+crdURL+"/widgets.example.com", nil)
		if code != 200 {
			t.Fatalf("get CRD = %d: %s", code, body)
		}
		meta := decodeMap(t, body)["metadata"].(map[string]any)
		crd["metadata"] = map[string]any{"name": "widgets.example.com", "resourceVersion": meta["resourceVersion"]}
		code, body = do(t, "PUT", base+crdURL+"/widgets.example.com", crd)
		if code == http.StatusConflict && attempt < 10 {
			continue
		}
		if code != 200 {
			t.Fatalf("update CRD = %d: %s", code, body)
		}
		return
	}
}

func createCRD(t *testing.T, base string, crd map[string]any) {
	t.Helper()
	code, body := do(t, "POST", base+crdURL, crd)
	if code != http.StatusCreated {
		t.Fatalf("create CRD = %d: %s", code, body)
	}
}

func apiVersionOf(t *testing.T, body []byte) string {
	t.Helper()
	v, _ := decodeMap(t, body)["apiVersion"].(string)
	return v
}

func TestCRDVersions(t *testing.T) {
	srv, _ := start(t, "")
	base := srv.URL()
	createCRD(t, base, widgetCRD("v1"))
	v1 := base + "/apis/example.com/v1/namespaces/default/widgets"
	v2 := base + "/apis/example.com/v2/namespaces/default/widgets"
	eventually(t, time.Second, func() error { c, b := do(t, "GET", v1, nil); return wantStatus(c, b, 200) })
	if c, b := do(t, "POST", v1, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a"},"spec":{"color":"red"}}`); c != 201 {
		t.Fatalf("create = %d: %s", c, b)
	}
	if c, _ := do(t, "GET", v2, nil); c != 404 {
		t.Fatalf("v2 before it exists = %d, want 404", c)
	}

	// Add v2 (v1 stays the storage version) and a printer column: live.
	crd := widgetCRD("v1", "v2")
	version(crd["spec"].(map[string]any)["versions"].([]any), 0)["additionalPrinterColumns"] = []any{
		map[string]any{"name": "Colour", "type": "string", "jsonPath": ".spec.color"},
	}
	putCRD(t, base, crd)
	eventually(t, time.Second, func() error { c, b := do(t, "GET", v2+"/a", nil); return wantStatus(c, b, 200) })
	_, body := do(t, "GET", v2+"/a", nil)
	if got := apiVersionOf(t, body); got != "example.com/v2" {
		t.Errorf("v2 read apiVersion = %q", got)
	}
	eventually(t, time.Second, func() error {
		req, _ := http.NewRequest("GET", v1, nil)
		req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var tbl struct {
			Columns []struct{ Name string } `json:"columnDefinitions"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&tbl); err != nil {
			return err
		}
		for _, c := range tbl.Columns {
			if c.Name == "Colour" {
				return nil
			}
		}
		return fmt.Errorf("columns %v lack Colour", tbl.Columns)
	})

	// Write through v2: stored in v1, read back as each version asks.
	if c, b := do(t, "POST", v2, `{"apiVersion":"example.com/v2","kind":"Widget","metadata":{"name":"b"},"spec":{"color":"blue"}}`); c != 201 || apiVersionOf(t, b) != "example.com/v2" {
		t.Fatalf("create through v2 = %d: %s", c, b)
	}
	_, body = do(t, "GET", v1+"/b", nil)
	if got := apiVersionOf(t, body); got != "example.com/v1" {
		t.Errorf("v1 read of a v2 write: apiVersion %q", got)
	}
	_, body = do(t, "GET", v2, nil)
	var list struct {
		Items []struct {
			APIVersion string `json:"apiVersion"`
		} `json:"items"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 2 {
		t.Fatalf("v2 list has %d items: %s", len(list.Items), body)
	}
	for _, it := range list.Items {
		if it.APIVersion != "example.com/v2" {
			t.Errorf("v2 list item apiVersion %q", it.APIVersion)
		}
	}

	// Make v2 the storage version and stop serving v1.
	crd = widgetCRD("v2", "v1")
	version(crd["spec"].(map[string]any)["versions"].([]any), 1)["served"] = false
	putCRD(t, base, crd)
	eventually(t, 5*time.Second, func() error { c, b := do(t, "GET", v1, nil); return wantStatus(c, b, 404) })
	got := getCRD(t, base, "widgets.example.com").Status.StoredVersions
	if !slices.Equal(got, []string{"v1", "v2"}) {
		t.Errorf("storedVersions = %v, want [v1 v2]", got)
	}
	_, b := do(t, "GET", v2+"/a", nil)
	rv := decodeMap(t, b)["metadata"].(map[string]any)["resourceVersion"].(string)
	if c, b := do(t, "PUT", v2+"/a", `{"apiVersion":"example.com/v2","kind":"Widget","metadata":{"name":"a","resourceVersion":"`+rv+`"},"spec":{"color":"green"}}`); c != 200 || apiVersionOf(t, b) != "example.com/v2" {
		t.Fatalf("update through v2 = %d: %s", c, b)
	}
}

func TestCRDDelete(t *testing.T) {
	srv, _ := start(t, "")
	base := srv.URL()
	createCRD(t, base, widgetCRD("v1"))
	widgets := base + "/apis/example.com/v1/namespaces/default/widgets"
	eventually(t, time.Second, func() error { c, b := do(t, "GET", widgets, nil); return wantStatus(c, b, 200) })
	if c, b := do(t, "POST", base+"/api/v1/namespaces", `{"metadata":{"name":"other"}}`); c != 201 {
		t.Fatalf("namespace = %d: %s", c, b)
	}
	for _, ns := range []string{"default", "other"} {
		for i := range 3 {
			url := base + "/apis/example.com/v1/namespaces/" + ns + "/widgets"
			if c, b := do(t, "POST", url, fmt.Sprintf(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w%d"}}`, i)); c != 201 {
				t.Fatalf("create = %d: %s", c, b)
			}
		}
	}
	if c, b := do(t, "DELETE", base+crdURL+"/widgets.example.com", nil); c != 200 && c != 202 {
		t.Fatalf("delete CRD = %d: %s", c, b)
	}
	eventually(t, 5*time.Second, func() error {
		c, b := do(t, "GET", base+crdURL+"/widgets.example.com", nil)
		return wantStatus(c, b, 404)
	})
	if c, _ := do(t, "GET", widgets, nil); c != 404 {
		t.Errorf("widgets after CRD deletion = %d, want 404", c)
	}
	if _, body := do(t, "GET", base+"/apis", nil); strings.Contains(string(body), "example.com") {
		t.Errorf("discovery still has example.com: %s", body)
	}
	// The objects are gone from storage: a new CRD of the same name
	// finds none.
	createCRD(t, base, widgetCRD("v1"))
	eventually(t, time.Second, func() error {
		c, b := do(t, "GET", base+"/apis/example.com/v1/widgets", nil)
		return wantStatus(c, b, 200)
	})
	_, body := do(t, "GET", base+"/apis/example.com/v1/widgets", nil)
	if items, _ := decodeMap(t, body)["items"].([]any); len(items) != 0 {
		t.Errorf("recreated CRD lists %d old objects", len(items))
	}
}

func TestCRDRestart(t *testing.T) {
	dir := t.TempDir()
	srv, stop := start(t, dir)
	createCRD(t, srv.URL(), widgetCRD("v1"))
	widgets := srv.URL() + "/apis/example.com/v1/namespaces/default/widgets"
	eventually(t, time.Second, func() error { c, b := do(t, "GET", widgets, nil); return wantStatus(c, b, 200) })
	if c, b := do(t, "POST", widgets, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"}}`); c != 201 {
		t.Fatalf("create = %d: %s", c, b)
	}
	stop()

	srv, _ = start(t, dir)
	widgets = srv.URL() + "/apis/example.com/v1/namespaces/default/widgets"
	// No waiting: served as soon as Start returns.
	if c, b := do(t, "GET", widgets+"/w", nil); c != 200 {
		t.Fatalf("widget right after restart = %d: %s", c, b)
	}
}

func TestCRDNameConflicts(t *testing.T) {
	srv, _ := start(t, "")
	base := srv.URL()
	createCRD(t, base, widgetCRD("v1"))
	eventually(t, time.Second, func() error {
		if !getCRD(t, base, "widgets.example.com").Status.IsTrue(apiextensions.Established) {
			return fmt.Errorf("not established")
		}
		return nil
	})
	// Same group, another plural, but the kind and short name are taken.
	gadget := widgetCRD("v1")
	gadget["metadata"] = map[string]any{"name": "gadgets.example.com"}
	gadget["spec"].(map[string]any)["names"] = map[string]any{"plural": "gadgets", "kind": "Widget", "listKind": "GadgetList"}
	createCRD(t, base, gadget)
	eventually(t, time.Second, func() error {
		crd := getCRD(t, base, "gadgets.example.com")
		c := crd.Status.Condition(apiextensions.NamesAccepted)
		if c == nil || c.Status != "False" || c.Reason != "KindConflict" || c.Message != `"Widget" is already in use` {
			return fmt.Errorf("NamesAccepted = %+v", c)
		}
		if e := crd.Status.Condition(apiextensions.Established); e == nil || e.Status != "False" || e.Reason != "NotAccepted" {
			return fmt.Errorf("Established = %+v", e)
		}
		return nil
	})
	if c, _ := do(t, "GET", base+"/apis/example.com/v1/gadgets", nil); c != 404 {
		t.Errorf("conflicting CRD served: %d", c)
	}
	// A CRD claiming a built-in's name in the built-in's group.
	cm := widgetCRD("v1")
	// kube-apiserver requires the approval annotation of a CRD in a
	// *.k8s.io group.
	cm["metadata"] = map[string]any{"name": "leases.coordination.k8s.io",
		"annotations": map[string]any{"api-approved.kubernetes.io": "unapproved, testing only"}}
	cm["spec"].(map[string]any)["group"] = "coordination.k8s.io"
	cm["spec"].(map[string]any)["names"] = map[string]any{"plural": "leases", "kind": "MyLease"}
	createCRD(t, base, cm)
	eventually(t, time.Second, func() error {
		c := getCRD(t, base, "leases.coordination.k8s.io").Status.Condition(apiextensions.NamesAccepted)
		if c == nil || c.Status != "False" || c.Reason != "PluralConflict" {
			return fmt.Errorf("NamesAccepted = %+v", c)
		}
		return nil
	})
}

// A default added to the schema later applies to stored objects when they
// are read, as kube-apiserver defaults what it reads from etcd.
func TestCRDDefaultsOnRead(t *testing.T) {
	srv, _ := start(t, "")
	base := srv.URL()
	createCRD(t, base, widgetCRD("v1"))
	widgets := base + "/apis/example.com/v1/namespaces/default/widgets"
	eventually(t, time.Second, func() error { c, b := do(t, "GET", widgets, nil); return wantStatus(c, b, 200) })
	if c, b := do(t, "POST", widgets, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"old"},"spec":{"color":"red"}}`); c != 201 {
		t.Fatalf("create = %d: %s", c, b)
	}
	crd := widgetCRD("v1")
	version(crd["spec"].(map[string]any)["versions"].([]any), 0)["schema"] = map[string]any{"openAPIV3Schema": json.RawMessage(
		`{"type":"object","properties":{"spec":{"type":"object","properties":{"color":{"type":"string"},"size":{"type":"integer","default":5}}}}}`)}
	putCRD(t, base, crd)
	eventually(t, time.Second, func() error {
		_, body := do(t, "GET", widgets+"/old", nil)
		if !strings.Contains(string(body), `"size":5`) {
			return fmt.Errorf("not defaulted on read: %s", body)
		}
		return nil
	})
	_, body := do(t, "GET", widgets, nil)
	if !strings.Contains(string(body), `"size":5`) {
		t.Errorf("list not defaulted: %s", body)
	}
	// Created after the change: defaulted on write.
	if c, b := do(t, "POST", widgets, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"new"},"spec":{}}`); c != 201 || !strings.Contains(string(b), `"size":5`) {
		t.Errorf("create = %d: %s", c, b)
	}
}

// subresources.scale maps onto the type's /scale.
func TestCRDScale(t *testing.T) {
	srv, _ := start(t, "")
	base := srv.URL()
	crd := widgetCRD("v1")
	v := version(crd["spec"].(map[string]any)["versions"].([]any), 0)
	v["schema"] = map[string]any{"openAPIV3Schema": json.RawMessage(
		`{"type":"object","properties":{"spec":{"type":"object","properties":{"replicas":{"type":"integer"}}},"status":{"type":"object","properties":{"replicas":{"type":"integer"}}}}}`)}
	v["subresources"] = map[string]any{"status": map[string]any{}, "scale": map[string]any{"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}
	createCRD(t, base, crd)
	widgets := base + "/apis/example.com/v1/namespaces/default/widgets"
	eventually(t, time.Second, func() error { c, b := do(t, "GET", widgets, nil); return wantStatus(c, b, 200) })
	if c, b := do(t, "POST", widgets, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"replicas":3}}`); c != 201 {
		t.Fatalf("create = %d: %s", c, b)
	}
	c, body := do(t, "GET", widgets+"/w/scale", nil)
	if c != 200 || !strings.Contains(string(body), `"kind":"Scale"`) || !strings.Contains(string(body), `"replicas":3`) {
		t.Errorf("GET scale = %d: %s", c, body)
	}
}

// A CRD deleted while its objects are held by finalizers stays, its type
// served, until they go, across a restart too.
func TestCRDDeleteWaitsForFinalizersAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	srv, stop := start(t, dir)
	base := srv.URL()
	createCRD(t, base, widgetCRD("v1"))
	widgets := base + "/apis/example.com/v1/namespaces/default/widgets"
	eventually(t, time.Second, func() error { c, b := do(t, "GET", widgets, nil); return wantStatus(c, b, 200) })
	if c, b := do(t, "POST", widgets, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"held","finalizers":["example.com/hold"]}}`); c != 201 {
		t.Fatalf("create = %d: %s", c, b)
	}
	if c, b := do(t, "DELETE", base+crdURL+"/widgets.example.com", nil); c != 200 {
		t.Fatalf("delete CRD = %d: %s", c, b)
	}
	// As kube-apiserver's CRD storage marks it: generation kept, no
	// grace period.
	if m := getCRD(t, base, "widgets.example.com").Metadata; m.Generation != 1 || m.DeletionGracePeriodSeconds != nil || m.DeletionTimestamp == nil {
		t.Errorf("deleted CRD: generation %d, deletionGracePeriodSeconds %v, deletionTimestamp %v; want 1, none, set", m.Generation, m.DeletionGracePeriodSeconds, m.DeletionTimestamp)
	}
	eventually(t, 2*time.Second, func() error {
		c := getCRD(t, base, "widgets.example.com").Status.Condition(apiextensions.Terminating)
		if c == nil || c.Status != "True" || c.Reason != "InstanceDeletionInProgress" {
			return fmt.Errorf("Terminating = %+v", c)
		}
		return nil
	})
	// Existing objects stay readable; new ones are refused, as kube does.
	if c, b := do(t, "GET", widgets+"/held", nil); c != 200 {
		t.Fatalf("get held widget while terminating = %d: %s", c, b)
	}
	c, b := do(t, "POST", widgets, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"late"}}`)
	if c != 405 || !strings.Contains(string(b), "create not allowed while custom resource definition is terminating") {
		t.Fatalf("create while terminating = %d: %s", c, b)
	}
	stop()

	srv, _ = start(t, dir)
	base = srv.URL()
	widgets = base + "/apis/example.com/v1/namespaces/default/widgets"
	crd := getCRD(t, base, "widgets.example.com")
	if !slices.Contains(crd.Metadata.Finalizers, apiextensions.CleanupFinalizer) {
		t.Fatalf("finalizers = %v", crd.Metadata.Finalizers)
	}
	req, _ := http.NewRequest("PATCH", widgets+"/held", strings.NewReader(`{"metadata":{"finalizers":null}}`))
	req.Header.Set("Content-Type", "application/merge-patch+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("remove finalizer = %d", resp.StatusCode)
	}
	eventually(t, 10*time.Second, func() error {
		c, b := do(t, "GET", base+crdURL+"/widgets.example.com", nil)
		return wantStatus(c, b, 404)
	})
	if c, _ := do(t, "GET", widgets, nil); c != 404 {
		t.Errorf("widgets after CRD deletion = %d", c)
	}
}

// selectableFields become field selectors.
func TestCRDSelectableFields(t *testing.T) {
	srv, _ := start(t, "")
	base := srv.URL()
	crd := widgetCRD("v1")
	version(crd["spec"].(map[string]any)["versions"].([]any), 0)["selectableFields"] = []any{map[string]any{"jsonPath": ".spec.color"}}
	createCRD(t, base, crd)
	widgets := base + "/apis/example.com/v1/namespaces/default/widgets"
	eventually(t, time.Second, func() error { c, b := do(t, "GET", widgets, nil); return wantStatus(c, b, 200) })
	for _, w := range []string{`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"r"},"spec":{"color":"red"}}`, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"b"},"spec":{"color":"blue"}}`} {
		if c, b := do(t, "POST", widgets, w); c != 201 {
			t.Fatalf("create = %d: %s", c, b)
		}
	}
	c, body := do(t, "GET", widgets+"?fieldSelector=spec.color%3Dred", nil)
	items, _ := decodeMap(t, body)["items"].([]any)
	if c != 200 || len(items) != 1 || !strings.Contains(string(body), `"name":"r"`) {
		t.Errorf("field selector = %d: %s", c, body)
	}
	if c, _ := do(t, "GET", widgets+"?fieldSelector=spec.size%3D1", nil); c != 400 {
		t.Errorf("unselectable field = %d, want 400", c)
	}
}
