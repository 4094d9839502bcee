package apiextensions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miniapi/miniapi/apiextensions"
	"github.com/miniapi/miniapi/server"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// start runs a server over dir (a fresh one when empty) and shuts it down
// when the test ends, or earlier through the returned stop.
func start(t *testing.T, dir string) (*server.Server, func()) {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	srv, err := server.Start(context.Background(), server.Config{Listen: "127.0.0.1:0", DataDir: dir, UnsafeNoFsync: true, UnsafePlainHTTP: true, Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}
	t.Cleanup(stop)
	return srv, stop
}

// do sends a request with a JSON body (nil for none) and returns the
// status code and body.
func do(t *testing.T, method, url string, body any) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, ok := body.([]byte)
		if !ok {
			if s, isStr := body.(string); isStr {
				b = []byte(s)
			} else {
				var err error
				if b, err = json.Marshal(body); err != nil {
					t.Fatal(err)
				}
			}
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// eventually polls f every 10ms until it returns nil or d passes.
func eventually(t *testing.T, d time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %v", d, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func wantStatus(code int, body []byte, want int) error {
	if code != want {
		return fmt.Errorf("status %d, want %d: %s", code, want, body)
	}
	return nil
}

const widgetSchema = `{"type":"object","properties":{"spec":{"type":"object","properties":{"color":{"type":"string"},"size":{"type":"integer"}}},"status":{"type":"object","properties":{"ready":{"type":"boolean"}}}}}`

// widgetCRD is a CRD for example.com widgets in the given versions; the
// first is the storage version.
func widgetCRD(versions ...string) map[string]any {
	var vs []any
	for i, v := range versions {
		vs = append(vs, map[string]any{
			"name": v, "served": true, "storage": i == 0,
			"schema":       map[string]any{"openAPIV3Schema": json.RawMessage(widgetSchema)},
			"subresources": map[string]any{"status": map[string]any{}},
			"additionalPrinterColumns": []any{
				map[string]any{"name": "Color", "type": "string", "jsonPath": ".spec.color"},
			},
		})
	}
	return map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.example.com"},
		"spec": map[string]any{
			"group": "example.com", "scope": "Namespaced",
			"names":    map[string]any{"plural": "widgets", "kind": "Widget", "shortNames": []any{"wd"}, "categories": []any{"all"}},
			"versions": vs,
		},
	}
}

const crdURL = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

func getCRD(t *testing.T, base, name string) *apiextensions.CRD {
	t.Helper()
	code, body := do(t, "GET", base+crdURL+"/"+name, nil)
	if code != 200 {
		t.Fatalf("GET CRD %s = %d: %s", name, code, body)
	}
	crd, err := apiextensions.DecodeBytes(body)
	if err != nil {
		t.Fatal(err)
	}
	return crd
}

func decodeMap(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return m
}

func TestCRDServedLive(t *testing.T) {
	srv, _ := start(t, "")
	base := srv.URL()
	code, body := do(t, "POST", base+crdURL, widgetCRD("v1"))
	if code != http.StatusCreated {
		t.Fatalf("create CRD = %d: %s", code, body)
	}
	created := time.Now()
	widgets := base + "/apis/example.com/v1/namespaces/default/widgets"
	eventually(t, time.Second, func() error {
		code, body := do(t, "GET", widgets, nil)
		return wantStatus(code, body, 200)
	})
	t.Logf("served %v after create", time.Since(created))

	// The type is served before it is reported Established, so that a
	// client waiting for the condition can use the type at once.
	var crd *apiextensions.CRD
	eventually(t, time.Second, func() error {
		crd = getCRD(t, base, "widgets.example.com")
		for _, c := range []string{apiextensions.NamesAccepted, apiextensions.Established} {
			cond := crd.Status.Condition(c)
			if cond == nil || cond.Status != "True" || cond.LastTransitionTime == "" || cond.Reason == "" {
				return fmt.Errorf("condition %s = %+v", c, cond)
			}
		}
		return nil
	})
	if got := crd.Status.AcceptedNames; got.Plural != "widgets" || got.Kind != "Widget" || got.ListKind != "WidgetList" || got.Singular != "widget" {
		t.Errorf("acceptedNames = %+v", got)
	}
	if got := crd.Status.StoredVersions; len(got) != 1 || got[0] != "v1" {
		t.Errorf("storedVersions = %v", got)
	}

	// CRUD a custom resource.
	code, body = do(t, "POST", widgets, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"color":"red"}}`)
	if code != http.StatusCreated {
		t.Fatalf("create widget = %d: %s", code, body)
	}
	rv := decodeMap(t, body)["metadata"].(map[string]any)["resourceVersion"].(string)
	// As kube-apiserver: a custom resource's update names the
	// resourceVersion it replaces.
	code, body = do(t, "PUT", widgets+"/w1/status", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1"},"status":{"ready":true}}`)
	if err := wantStatus(code, body, 422); err != nil {
		t.Fatalf("update status without resourceVersion: %v", err)
	}
	code, body = do(t, "PUT", widgets+"/w1/status", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1","resourceVersion":"`+rv+`"},"status":{"ready":true}}`)
	if code != 200 {
		t.Fatalf("update status = %d: %s", code, body)
	}
	code, body = do(t, "GET", widgets+"/w1", nil)
	if code != 200 || !strings.Contains(string(body), `"ready":true`) || !strings.Contains(string(body), `"color":"red"`) {
		t.Fatalf("get widget = %d: %s", code, body)
	}

	// Discovery, legacy and aggregated, and OpenAPI show the type.
	code, body = do(t, "GET", base+"/apis/example.com/v1", nil)
	if code != 200 || !strings.Contains(string(body), `"name":"widgets"`) || !strings.Contains(string(body), `"wd"`) || !strings.Contains(string(body), `"all"`) {
		t.Errorf("discovery = %d: %s", code, body)
	}
	req, _ := http.NewRequest("GET", base+"/apis", nil)
	req.Header.Set("Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	agg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(agg), `"example.com"`) || !strings.Contains(string(agg), `"widgets"`) {
		t.Errorf("aggregated discovery lacks widgets: %.300s", agg)
	}
	code, body = do(t, "GET", base+"/openapi/v3/apis/example.com/v1", nil)
	if code != 200 || !strings.Contains(string(body), "com.example.v1.Widget") {
		t.Errorf("openapi v3 = %d: %.300s", code, body)
	}

	// Table output uses the printer columns.
	req, _ = http.NewRequest("GET", widgets, nil)
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	table, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(table), `"Color"`) || !strings.Contains(string(table), `"red"`) {
		t.Errorf("table = %s", table)
	}
}

// TestCRDTable checks `kubectl get crd` (-o wide) as kube-apiserver
// 1.37 prints it, with apiextensions-apiserver's table convertor: Name,
// Scope, Versions (served ones, the storage version marked), Created At,
// and, wide, Group, Kind, ShortNames and Established.
func TestCRDTable(t *testing.T) {
	srv, _ := start(t, "")
	base := srv.URL()
	crd := widgetCRD("v1", "v2")
	createCRD(t, base, crd)
	var table struct {
		ColumnDefinitions []struct {
			Name     string `json:"name"`
			Priority int    `json:"priority"`
		} `json:"columnDefinitions"`
		Rows []struct {
			Cells []any `json:"cells"`
		} `json:"rows"`
	}
	eventually(t, 2*time.Second, func() error {
		req, _ := http.NewRequest("GET", base+crdURL, nil)
		req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(&table); err != nil {
			return err
		}
		if len(table.Rows) != 1 || len(table.Rows[0].Cells) != 8 || table.Rows[0].Cells[7] != true {
			return fmt.Errorf("rows %v: not one established CRD", table.Rows)
		}
		return nil
	})
	var cols []string
	for _, c := range table.ColumnDefinitions {
		cols = append(cols, fmt.Sprintf("%s/%d", c.Name, c.Priority))
	}
	if want := []string{"Name/0", "Scope/0", "Versions/0", "Created At/0", "Group/1", "Kind/1", "ShortNames/1", "Established/1"}; !slices.Equal(cols, want) {
		t.Errorf("columns %q, want %q", cols, want)
	}
	cells := table.Rows[0].Cells
	if got := fmt.Sprintf("%v %v %v %v %v %v", cells[0], cells[1], cells[2], cells[4], cells[5], cells[6]); got != "widgets.example.com Namespaced v1(storage),v2 example.com Widget wd" {
		t.Errorf("row %v", cells)
	}
}

func TestCRDSchemaEnforced(t *testing.T) {
	srv, _ := start(t, "")
	base := srv.URL()
	code, body := do(t, "POST", base+crdURL, widgetCRD("v1"))
	if code != http.StatusCreated {
		t.Fatalf("create CRD = %d: %s", code, body)
	}
	widgets := base + "/apis/example.com/v1/namespaces/default/widgets"
	eventually(t, time.Second, func() error { c, b := do(t, "GET", widgets, nil); return wantStatus(c, b, 200) })
	code, body = do(t, "POST", widgets, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"bad"},"spec":{"size":"big"}}`)
	if code != http.StatusUnprocessableEntity || !strings.Contains(string(body), `spec.size: Invalid value: \"string\": spec.size in body must be of type integer: \"string\"`) {
		t.Errorf("wrong type = %d: %s", code, body)
	}
	// Unknown fields are pruned.
	code, body = do(t, "POST", widgets, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"ok"},"spec":{"size":3,"extra":1}}`)
	if code != http.StatusCreated || strings.Contains(string(body), "extra") {
		t.Errorf("create = %d: %s", code, body)
	}
}

// testLogger shows the server's logs with MINIAPI_TEST_LOG=1.
func testLogger() *slog.Logger {
	if os.Getenv("MINIAPI_TEST_LOG") == "" {
		return nil
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCRDStrategicMergePatch checks a CustomResourceDefinition takes a
// strategic merge patch, as kube-apiserver (which serves it as a
// built-in kind) does, merged by apiextensions' own Go type.
func TestCRDStrategicMergePatch(t *testing.T) {
	srv, _ := start(t, "")
	base := srv.URL()
	if code, body := do(t, "POST", base+crdURL, widgetCRD("v1")); code != http.StatusCreated {
		t.Fatalf("create CRD = %d: %s", code, body)
	}
	req, err := http.NewRequest("PATCH", base+crdURL+"/widgets.example.com",
		strings.NewReader(`{"metadata":{"labels":{"team":"a"}},"spec":{"names":{"shortNames":["wdg"]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/strategic-merge-patch+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("strategic merge patch = %d: %s", resp.StatusCode, out)
	}
	crd := getCRD(t, base, "widgets.example.com")
	if crd.Metadata.Labels["team"] != "a" || !slices.Equal(crd.Spec.Names.ShortNames, []string{"wdg"}) || crd.Spec.Names.Plural != "widgets" {
		t.Fatalf("patched CRD: labels %v, names %+v", crd.Metadata.Labels, crd.Spec.Names)
	}
}
