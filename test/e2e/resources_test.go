package e2e

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// widgetsFile is the resources file example of docs/resource-types.md,
// byte for byte.
const widgetsFile = `resources:
- group: example.com
  version: v1                      # required
  kind: Widget                     # required
  plural: widgets                  # required: the name in URLs, lower case
  namespaced: true                 # false: cluster-scoped
  shortNames: [wd]                 # advertised in discovery
  statusSubresource: true          # serve widgets/status
  selectableFields: [spec.color]   # fields usable in fieldSelector
  printerColumns:                  # columns for table output
  - {name: Color, type: string, jsonPath: .spec.color}
`

// TestResourcesFile serves a type declared in a --resources file and
// drives it like a built-in one: CRUD, a field selector on its declared
// field, its /status subresource and discovery.
func TestResourcesFile(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	file := filepath.Join(t.TempDir(), "resources.yaml")
	if err := os.WriteFile(file, []byte(widgetsFile), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, t.TempDir(), "--resources", file)

	// Discovery lists the type and its subresource.
	rl := srv.must(t, 200, "GET", "/apis/example.com/v1", nil)
	if rl["kind"] != "APIResourceList" || rl["groupVersion"] != "example.com/v1" {
		t.Fatalf("discovery: %v", rl)
	}
	found := map[string]map[string]any{}
	for _, r := range rl["resources"].([]any) {
		m := r.(map[string]any)
		found[str(m, "name")] = m
	}
	w, ok := found["widgets"]
	if !ok || w["kind"] != "Widget" || w["namespaced"] != true || !reflect.DeepEqual(w["shortNames"], []any{"wd"}) {
		t.Errorf("discovery entry for widgets: %v", w)
	}
	if _, ok := found["widgets/status"]; !ok {
		t.Errorf("discovery does not list widgets/status: %v", rl["resources"])
	}
	if gl := srv.must(t, 200, "GET", "/apis", nil); !strings.Contains(string(mustJSON(t, gl)), `"example.com"`) {
		t.Errorf("/apis does not list example.com: %v", gl)
	}

	// CRUD.
	srv.must(t, 201, "POST", "/api/v1/namespaces", namespace("shop"))
	const widgets = "/apis/example.com/v1/namespaces/shop/widgets"
	widget := func(name, color string) map[string]any {
		return map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": name},
			"spec": map[string]any{"color": color}}
	}
	red := srv.must(t, 201, "POST", widgets, widget("red-one", "red"))
	checkFields(t, red, map[string]string{"apiVersion": "example.com/v1", "kind": "Widget", "spec.color": "red", "metadata.namespace": "shop"})
	srv.must(t, 201, "POST", widgets, widget("blue-one", "blue"))
	srv.must(t, 201, "POST", widgets, widget("red-two", "red"))
	if got := srv.must(t, 200, "GET", widgets+"/red-one", nil); !reflect.DeepEqual(got, red) {
		t.Errorf("GET = %v, want %v", got, red)
	}
	upd := widget("red-one", "crimson")
	upd["metadata"].(map[string]any)["resourceVersion"] = str(red, "metadata.resourceVersion")
	updated := srv.must(t, 200, "PUT", widgets+"/red-one", upd)
	if str(updated, "spec.color") != "crimson" || get(updated, "metadata.generation") != 2.0 {
		t.Errorf("update: %v", updated)
	}
	srv.must(t, 200, "PATCH", widgets+"/red-one", `{"spec":{"color":"red"}}`, "Content-Type", "application/merge-patch+json")
	wantStatus(t, srv.do(t, "PATCH", widgets+"/red-one", `{"spec":{"color":"red"}}`, "Content-Type", "application/strategic-merge-patch+json"),
		415, "UnsupportedMediaType")

	// The declared field selects, on its own and with the built-in ones,
	// in a namespace and across all of them.
	for path, want := range map[string][]string{
		widgets + "?fieldSelector=spec.color%3Dred":                          {"red-one", "red-two"},
		widgets + "?fieldSelector=spec.color%21%3Dred":                       {"blue-one"},
		widgets + "?fieldSelector=spec.color%3Dred,metadata.name%3Dred-two":  {"red-two"},
		"/apis/example.com/v1/widgets?fieldSelector=spec.color%3D%3Dblue":    {"blue-one"},
		"/apis/example.com/v1/widgets?fieldSelector=metadata.namespace%3Dno": nil,
	} {
		l := srv.must(t, 200, "GET", path, nil)
		if l["kind"] != "WidgetList" {
			t.Errorf("GET %s: kind %v, want WidgetList", path, l["kind"])
		}
		got := names(t, l)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("GET %s lists %v, want %v", path, got, want)
		}
	}
	wantStatus(t, srv.do(t, "GET", widgets+"?fieldSelector=spec.size%3D1", nil), 400, "BadRequest")

	// /status changes only status; the main resource never does.
	before := srv.must(t, 200, "GET", widgets+"/blue-one", nil)
	st := srv.must(t, 200, "PUT", widgets+"/blue-one/status", map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "blue-one"},
		"spec": map[string]any{"color": "green"}, "status": map[string]any{"phase": "Ready"},
	})
	checkFields(t, st, map[string]string{"spec.color": "blue", "status.phase": "Ready"})
	if get(st, "metadata.generation") != get(before, "metadata.generation") {
		t.Errorf("a status update changed generation: %v -> %v", get(before, "metadata.generation"), get(st, "metadata.generation"))
	}
	if rvInt(t, str(st, "metadata.resourceVersion")) <= rvInt(t, str(before, "metadata.resourceVersion")) {
		t.Errorf("status update did not move the resourceVersion: %v", st)
	}
	main := srv.must(t, 200, "PATCH", widgets+"/blue-one", `{"spec":{"color":"navy"},"status":{"phase":"Broken"}}`,
		"Content-Type", "application/merge-patch+json")
	checkFields(t, main, map[string]string{"spec.color": "navy", "status.phase": "Ready"})
	if got := srv.must(t, 200, "GET", widgets+"/blue-one/status", nil); str(got, "status.phase") != "Ready" {
		t.Errorf("GET status: %v", got)
	}

	// Delete.
	srv.must(t, 200, "DELETE", widgets+"/red-two", nil)
	wantStatus(t, srv.do(t, "GET", widgets+"/red-two", nil), 404, "NotFound")
	if got := names(t, srv.must(t, 200, "GET", widgets, nil)); !slices.Equal(got, []string{"blue-one", "red-one"}) {
		t.Errorf("widgets left: %v", got)
	}
}

// TestResourcesFileInvalid checks a bad resources file stops the binary
// with a non-zero exit and a message, before it serves.
func TestResourcesFileInvalid(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	file := filepath.Join(t.TempDir(), "resources.yaml")
	if err := os.WriteFile(file, []byte(strings.Replace(widgetsFile, "plural:", "plurl:", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := runToExit(t, "--listen", "127.0.0.1:0", "--data-dir", t.TempDir(), "--unsafe-no-fsync", "--resources", file)
	if code == 0 || !strings.Contains(out, "plurl") {
		t.Errorf("with a misspelt field in --resources: exit code %d, output:\n%s", code, out)
	}
}
