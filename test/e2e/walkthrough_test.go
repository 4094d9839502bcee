package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The request bodies of the curl walkthrough (docs/curl.md), byte for byte.
const (
	walkNamespace = `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"demo"}}`
	walkConfigMap = `{
  "apiVersion": "v1",
  "kind": "ConfigMap",
  "metadata": {"name": "app-config", "labels": {"app": "web", "tier": "frontend"}},
  "data": {"color": "blue", "size": "large"}
}`
	// walkUpdate is completed with the resourceVersion the client last read.
	walkUpdate = `{
  "apiVersion": "v1",
  "kind": "ConfigMap",
  "metadata": {"name": "app-config", "resourceVersion": "%s", "labels": {"app": "web", "tier": "frontend"}},
  "data": {"color": "green", "size": "large"}
}`
	walkMergePatch = `{"data":{"size":"small"}}`
	walkJSONPatch  = `[{"op":"add","path":"/data/shape","value":"round"}]`
	// walkMore is completed with a number 1 to 5.
	walkMore = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%d"},"data":{"n":"%d"}}`
)

// curlUA is the User-Agent curl sends; miniapi pretty-prints JSON for it,
// so the walkthrough gets the very bytes docs/curl.md shows.
const curlUA = "curl/8.5.0"

const (
	walkCMs = "/api/v1/namespaces/demo/configmaps"
	walkCM  = walkCMs + "/app-config"
)

// The server and credentials every curl command of the README and the
// docs names: miniapi's default address, and the files it makes in
// <data-dir>/pki (the default data directory, relative to where it was
// started). TestWalkthrough sends its requests with these very files.
const (
	walkURL  = "https://127.0.0.1:6443"
	walkAuth = "--cacert miniapi-data/pki/ca.crt --cert miniapi-data/pki/admin.crt --key miniapi-data/pki/admin.key"
)

// curlClient is an HTTP client with the TLS settings curl gets from
// walkAuth, its files read from srv's data directory in place of
// miniapi-data, so the walkthrough fails if the docs name a file miniapi
// does not make or credentials it does not accept.
func curlClient(t *testing.T, srv *serverProc) *http.Client {
	t.Helper()
	args := strings.Fields(walkAuth)
	files := map[string]string{}
	for i := 0; i+1 < len(args); i += 2 {
		rel, ok := strings.CutPrefix(args[i+1], "miniapi-data/")
		if !ok {
			t.Fatalf("walkAuth names %s outside miniapi-data", args[i+1])
		}
		files[args[i]] = filepath.Join(srv.DataDir, filepath.FromSlash(rel))
	}
	caPEM, err := os.ReadFile(files["--cacert"])
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		t.Fatalf("%s holds no certificate", files["--cacert"])
	}
	cert, err := tls.LoadX509KeyPair(files["--cert"], files["--key"])
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{cert}},
		ForceAttemptHTTP2: true,
	}
	return &http.Client{Timeout: requestTimeout, Transport: tr}
}

// TestWalkthrough runs the curl walkthrough of docs/curl.md step by step
// and checks each answer is what it shows.
func TestWalkthrough(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	srv := startServer(t, t.TempDir())
	srv.client = curlClient(t, srv)
	ua := []string{"User-Agent", curlUA}
	withUA := func(h ...string) []string { return append(h, ua...) }

	// 1. Create a namespace.
	ns := srv.must(t, 201, "POST", "/api/v1/namespaces", walkNamespace, ua...)
	if ns["kind"] != "Namespace" || str(ns, "metadata.name") != "demo" || str(ns, "status.phase") != "Active" {
		t.Fatalf("namespace: %v", ns)
	}

	// 2. Create a configmap with labels.
	r := srv.do(t, "POST", walkCMs, walkConfigMap, ua...)
	if r.code != 201 {
		t.Fatalf("create configmap = %d: %s", r.code, r.body)
	}
	if !strings.HasPrefix(string(r.body), "{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"ConfigMap\",\n") {
		t.Errorf("curl does not get indented JSON: %s", r.body)
	}
	created := r.object(t)
	want := map[string]string{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata.name": "app-config", "metadata.namespace": "demo",
		"metadata.labels.app": "web", "metadata.labels.tier": "frontend",
		"data.color": "blue", "data.size": "large",
	}
	checkFields(t, created, want)
	for _, f := range []string{"metadata.uid", "metadata.resourceVersion", "metadata.creationTimestamp"} {
		if str(created, f) == "" {
			t.Errorf("created object has no %s: %v", f, created)
		}
	}
	// As in kube-apiserver, a ConfigMap has no generation.
	if g, ok := get(created, "metadata.generation").(float64); ok {
		t.Errorf("generation = %v, want none", g)
	}
	rv1 := str(created, "metadata.resourceVersion")

	// 3. Get it as JSON, then as YAML.
	if got := srv.must(t, 200, "GET", walkCM, nil, ua...); !reflect.DeepEqual(got, created) {
		t.Errorf("GET = %v, want what create answered: %v", got, created)
	}
	r = srv.do(t, "GET", walkCM, nil, withUA("Accept", "application/yaml")...)
	if r.code != 200 || r.header.Get("Content-Type") != "application/yaml" {
		t.Fatalf("GET as YAML = %d %q: %s", r.code, r.header.Get("Content-Type"), r.body)
	}
	if !strings.HasPrefix(string(r.body), "apiVersion: v1\ndata:\n  color: blue\n  size: large\nkind: ConfigMap\nmetadata:\n") {
		t.Errorf("YAML answer does not start as docs/curl.md shows:\n%s", r.body)
	}
	var fromYAML map[string]any
	if err := yaml.Unmarshal(r.body, &fromYAML); err != nil {
		t.Fatalf("YAML answer does not parse: %v\n%s", err, r.body)
	}
	if !reflect.DeepEqual(fromYAML, created) {
		t.Errorf("YAML answer = %v, want %v", fromYAML, created)
	}

	// 4. Update with the resourceVersion just read: 200, a new
	// resourceVersion, still no generation.
	updated := srv.must(t, 200, "PUT", walkCM, fmt.Sprintf(walkUpdate, rv1), ua...)
	checkFields(t, updated, map[string]string{"data.color": "green", "metadata.uid": str(created, "metadata.uid")})
	rv2 := str(updated, "metadata.resourceVersion")
	if rvInt(t, rv2) <= rvInt(t, rv1) {
		t.Errorf("update resourceVersion %s, want above %s", rv2, rv1)
	}
	if g, ok := get(updated, "metadata.generation").(float64); ok {
		t.Errorf("generation after update = %v, want none", g)
	}

	// 5. The same update again: its resourceVersion is now stale.
	st := wantStatus(t, srv.do(t, "PUT", walkCM, fmt.Sprintf(walkUpdate, rv1), ua...), 409, "Conflict")
	const conflictMsg = `Operation cannot be fulfilled on configmaps "app-config": the object has been modified; please apply your changes to the latest version and try again`
	if st["message"] != conflictMsg {
		t.Errorf("conflict message = %q, want %q", st["message"], conflictMsg)
	}
	checkFields(t, st, map[string]string{"details.name": "app-config", "details.kind": "configmaps"})
	if got := srv.must(t, 200, "GET", walkCM, nil); str(got, "metadata.resourceVersion") != rv2 {
		t.Errorf("the conflicting update changed the object: %v", got)
	}

	// 6. Merge patch, then JSON patch.
	merged := srv.must(t, 200, "PATCH", walkCM, walkMergePatch, withUA("Content-Type", "application/merge-patch+json")...)
	checkFields(t, merged, map[string]string{"data.color": "green", "data.size": "small"})
	rv3 := str(merged, "metadata.resourceVersion")
	if rvInt(t, rv3) <= rvInt(t, rv2) {
		t.Errorf("merge patch resourceVersion %s, want above %s", rv3, rv2)
	}
	patched := srv.must(t, 200, "PATCH", walkCM, walkJSONPatch, withUA("Content-Type", "application/json-patch+json")...)
	checkFields(t, patched, map[string]string{"data.color": "green", "data.size": "small", "data.shape": "round"})
	rv4 := str(patched, "metadata.resourceVersion")
	if rvInt(t, rv4) <= rvInt(t, rv3) {
		t.Errorf("JSON patch resourceVersion %s, want above %s", rv4, rv3)
	}

	// 7. List with a label selector.
	list := srv.must(t, 200, "GET", walkCMs+"?labelSelector=app%3Dweb", nil, ua...)
	checkFields(t, list, map[string]string{"apiVersion": "v1", "kind": "ConfigMapList"})
	// A list is at the store's current revision: at least the last write,
	// more when the server's own background writes (APIService
	// registration) came after it.
	if rvInt(t, str(list, "metadata.resourceVersion")) < rvInt(t, rv4) {
		t.Errorf("list resourceVersion %s, want at least %s", str(list, "metadata.resourceVersion"), rv4)
	}
	if n := names(t, list); !reflect.DeepEqual(n, []string{"app-config"}) {
		t.Errorf("labelSelector=app=web lists %v, want [app-config]", n)
	}
	// As kube-apiserver's: a built-in kind's items name no apiVersion or
	// kind; the list does.
	for _, it := range items(t, list) {
		if it["apiVersion"] != nil || it["kind"] != nil {
			t.Errorf("a list item names its apiVersion or kind: %v", it)
		}
	}
	if n := names(t, srv.must(t, 200, "GET", walkCMs+"?labelSelector=app%21%3Dweb", nil)); len(n) != 0 {
		t.Errorf("labelSelector=app!=web lists %v, want none", n)
	}

	// 8. Five more configmaps, then page through all six, two at a time.
	for i := 1; i <= 5; i++ {
		srv.must(t, 201, "POST", walkCMs, fmt.Sprintf(walkMore, i, i), ua...)
	}
	type page struct {
		names     []string
		remaining any // float64 when present
		more      bool
	}
	wantPages := []page{
		{[]string{"app-config", "cm-1"}, 4.0, true},
		{[]string{"cm-2", "cm-3"}, 2.0, true},
		{[]string{"cm-4", "cm-5"}, nil, false},
	}
	path, listRV := walkCMs+"?limit=2", ""
	for i, wp := range wantPages {
		l := srv.must(t, 200, "GET", path, nil, ua...)
		if n := names(t, l); !reflect.DeepEqual(n, wp.names) {
			t.Errorf("page %d lists %v, want %v", i+1, n, wp.names)
		}
		if got := get(l, "metadata.remainingItemCount"); got != wp.remaining {
			t.Errorf("page %d remainingItemCount = %v, want %v", i+1, got, wp.remaining)
		}
		rv := str(l, "metadata.resourceVersion")
		if i == 0 {
			listRV = rv
		} else if rv != listRV {
			t.Errorf("page %d resourceVersion %s, want the first page's %s", i+1, rv, listRV)
		}
		cont := str(l, "metadata.continue")
		if (cont != "") != wp.more {
			t.Fatalf("page %d continue = %q, want more pages: %v", i+1, cont, wp.more)
		}
		path = walkCMs + "?limit=2&continue=" + cont
	}

	// 9. Delete: 200 with a Status naming what went, then it is gone.
	deleted := srv.must(t, 200, "DELETE", walkCM, nil, ua...)
	checkFields(t, deleted, map[string]string{"kind": "Status", "status": "Success", "details.name": "app-config", "details.kind": "configmaps"})
	st = wantStatus(t, srv.do(t, "GET", walkCM, nil, ua...), 404, "NotFound")
	if st["message"] != `configmaps "app-config" not found` {
		t.Errorf("not found message = %q", st["message"])
	}
}

// checkFields fails the test for each dotted path in want whose string
// value in m differs.
func checkFields(t *testing.T, m map[string]any, want map[string]string) {
	t.Helper()
	for path, w := range want {
		if got := get(m, path); got != w {
			t.Errorf("%s = %v, want %q in %v", path, got, w, m)
		}
	}
}

// readDoc reads a documentation file by its path from the repository root.
func readDoc(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(path)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestREADMEShowsTheTestedRequests keeps the README honest: its set-up
// commands are the ones CI runs, and the requests of its curl taste are
// the walkthrough's, which TestWalkthrough sends.
func TestREADMEShowsTheTestedRequests(t *testing.T) {
	readme := readDoc(t, "README.md")
	for name, want := range map[string]string{
		"start command":  "```sh\ngo run ./cmd/miniapi\n```",
		"test command":   "```sh\ngo test -race ./...\n```",
		"namespace body": "-d '" + walkNamespace + "'",
		"configmap body": "-d '" + walkConfigMap + "'",
		"label selector": walkURL + walkCMs + "?labelSelector=app%3Dweb'",
	} {
		if !strings.Contains(readme, want) {
			t.Errorf("README.md does not show the %s the tests use:\n%s", name, want)
		}
	}
}

// TestDocsShowTheTestedRequests keeps the curl walkthrough and the
// resources file example honest: the requests docs/curl.md shows are
// the ones TestWalkthrough sends, and the file docs/resource-types.md
// shows is the one TestResourcesFile serves.
func TestDocsShowTheTestedRequests(t *testing.T) {
	curl := readDoc(t, "docs/curl.md")
	for name, want := range map[string]string{
		"namespace body":    "-d '" + walkNamespace + "'",
		"configmap body":    "-d '" + walkConfigMap + "'",
		"update body":       "-d '" + fmt.Sprintf(walkUpdate, "180") + "'",
		"merge patch":       "-d '" + walkMergePatch + "'",
		"JSON patch":        "-d '" + walkJSONPatch + "'",
		"more configmaps":   "-d '" + strings.ReplaceAll(walkMore, "%d", "'$i'") + "'",
		"label selector":    walkURL + walkCMs + "?labelSelector=app%3Dweb'",
		"first page":        walkURL + walkCMs + "?limit=2'",
		"object URL":        walkURL + walkCM + "\n",
		"conflict message":  `Operation cannot be fulfilled on configmaps \"app-config\": the object has been modified; please apply your changes to the latest version and try again`,
		"not found message": `configmaps \"app-config\" not found`,
	} {
		if !strings.Contains(curl, want) {
			t.Errorf("docs/curl.md does not show the %s the tests use:\n%s", name, want)
		}
	}
	if types := readDoc(t, "docs/resource-types.md"); !strings.Contains(types, "```yaml\n"+widgetsFile+"```\n") {
		t.Errorf("docs/resource-types.md does not show the resources file TestResourcesFile serves:\n%s", widgetsFile)
	}
}

// curlRE matches a curl command in a shell block and what follows it on
// its line.
var curlRE = regexp.MustCompile(`(?m)^\s*curl (.*)$`)

// TestDocsCurlCommandsAuthenticate keeps every curl example of the README
// and the manual usable as shown: each names walkAuth's CA and admin
// credentials, and no page still sends requests to the plain HTTP
// address miniapi served before it authenticated. (docs/security.md
// shows other credentials; TestSecurityExamples checks its examples.)
func TestDocsCurlCommandsAuthenticate(t *testing.T) {
	pages := []string{"README.md", "docs/curl.md", "docs/api.md", "docs/apply.md", "docs/resource-types.md", "docs/operations.md"}
	seen := 0
	for _, page := range pages {
		doc := readDoc(t, page)
		for _, m := range curlRE.FindAllStringSubmatch(doc, -1) {
			seen++
			if !strings.HasPrefix(m[1], "-s "+walkAuth) && !strings.HasPrefix(m[1], "-N "+walkAuth) {
				t.Errorf("%s: curl %s\ndoes not start with -s or -N and %s", page, m[1], walkAuth)
			}
		}
	}
	for _, page := range append(pages, "docs/kubectl.md", "docs/options.md", "docs/testing.md", "docs/differences.md", "docs/architecture.md") {
		if doc := readDoc(t, page); strings.Contains(doc, "http://127.0.0.1:8080") {
			t.Errorf("%s still names http://127.0.0.1:8080; miniapi serves %s", page, walkURL)
		}
	}
	if seen < 20 {
		t.Errorf("found %d curl commands in %v, want at least 20: has curlRE stopped matching?", seen, pages)
	}
}
