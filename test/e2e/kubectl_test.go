package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// kubectlVersion is the version the test kubectl reports: the
// k8s.io/kubectl module it is built from.
const kubectlVersion = "v1.37.2"

// kubectlTimeout bounds one kubectl command.
const kubectlTimeout = time.Minute

var (
	kubectlOnce sync.Once
	kubectlDir  string // holds the built kubectl; removed by TestMain
	kubectlBin  string
	kubectlErr  error
)

// kubectlPath builds kubectl from k8s.io/kubectl (test/e2e/kubectl) the
// first time a test needs it, and returns its path. The build is not
// raced: it is a tool here, not code under test.
func kubectlPath(t *testing.T) string {
	t.Helper()
	kubectlOnce.Do(func() {
		root, err := moduleRoot()
		if err != nil {
			kubectlErr = err
			return
		}
		if kubectlDir, err = os.MkdirTemp("", "miniapi-e2e-kubectl-"); err != nil {
			kubectlErr = err
			return
		}
		bin := filepath.Join(kubectlDir, "kubectl")
		ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
		defer cancel()
		// kubectl version reads its own version from component-base;
		// without these it is an unparsable placeholder.
		ldflags := fmt.Sprintf("-X k8s.io/component-base/version.gitVersion=%[1]s -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37"+
			" -X k8s.io/client-go/pkg/version.gitVersion=%[1]s -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=37", kubectlVersion)
		cmd := exec.CommandContext(ctx, "go", "build", "-tags", "e2e_kubectl", "-ldflags", ldflags, "-o", bin, "./test/e2e/kubectl")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			kubectlErr = fmt.Errorf("go build ./test/e2e/kubectl: %w\n%s", err, out)
			return
		}
		kubectlBin = bin
	})
	if kubectlErr != nil {
		t.Fatal(kubectlErr)
	}
	return kubectlBin
}

// removeKubectl deletes the built kubectl, if any; TestMain calls it
// once every test has run.
func removeKubectl() {
	if kubectlDir != "" {
		os.RemoveAll(kubectlDir)
	}
}

// kubectlResult is what one kubectl command printed and how it exited.
type kubectlResult struct {
	stdout, stderr string
	err            error
}

// kubectlEnv is the environment kubectl runs in: the server's kubeconfig
// and nothing of the user's (a private HOME keeps its discovery cache
// per test).
func kubectlEnv(t *testing.T, srv *serverProc, extra ...string) []string {
	home := t.TempDir()
	return append([]string{"KUBECONFIG=" + srv.kubeconfigPath(t), "HOME=" + home, "PATH=" + os.Getenv("PATH")}, extra...)
}

// runKubectl runs kubectl with args against srv (through the kubeconfig
// it wrote), with stdin if not empty, bounded by kubectlTimeout.
func runKubectl(t *testing.T, srv *serverProc, stdin string, env []string, args ...string) kubectlResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), kubectlTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectlPath(t), args...)
	cmd.Env = append(kubectlEnv(t, srv), env...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("kubectl %s did not finish within %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), kubectlTimeout, &stdout, &stderr)
	}
	return kubectlResult{stdout: stdout.String(), stderr: stderr.String(), err: err}
}

// kubectl runs kubectl and fails the test unless it exits 0; it returns
// stdout.
func kubectl(t *testing.T, srv *serverProc, args ...string) string {
	t.Helper()
	r := runKubectl(t, srv, "", nil, args...)
	if r.err != nil {
		t.Fatalf("kubectl %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.err, r.stdout, r.stderr)
	}
	return r.stdout
}

// tableRows splits kubectl's table output into rows of fields; the
// first row is the header.
func tableRows(out string) [][]string {
	var rows [][]string
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if line != "" {
			rows = append(rows, strings.Fields(line))
		}
	}
	return rows
}

// column returns the values of the named column of a table, by row.
func column(t *testing.T, out, name string) []string {
	t.Helper()
	rows := tableRows(out)
	if len(rows) == 0 {
		t.Fatalf("no table in output:\n%s", out)
	}
	i := slices.Index(rows[0], name)
	if i < 0 {
		t.Fatalf("no column %s in header %v", name, rows[0])
	}
	var vals []string
	for _, r := range rows[1:] {
		if i < len(r) {
			vals = append(vals, r[i])
		}
	}
	return vals
}

// kubectlServer starts a server with the widgets resources file for the
// kubectl tests, without the simulated cluster: they were compared with
// kube-apiserver alone.
func kubectlServer(t *testing.T) *serverProc {
	t.Helper()
	file := filepath.Join(t.TempDir(), "resources.yaml")
	if err := os.WriteFile(file, []byte(widgetsFile), 0o644); err != nil {
		t.Fatal(err)
	}
	kubectlPath(t) // build first, so the server's clock starts with the test
	return startServer(t, t.TempDir(), append([]string{"--resources", file}, bareServer...)...)
}

// TestKubectlDiscovery runs kubectl version, api-versions and
// api-resources.
func TestKubectlDiscovery(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	srv := kubectlServer(t)

	out := kubectl(t, srv, "version")
	for _, want := range []string{"Client Version: " + kubectlVersion, "Server Version: v1.37.0+miniapi-"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl version lacks %q:\n%s", want, out)
		}
	}
	var v struct {
		ServerVersion struct{ Major, Minor, GitVersion string }
	}
	if err := json.Unmarshal([]byte(kubectl(t, srv, "version", "-o", "json")), &v); err != nil || v.ServerVersion.Major != "1" || v.ServerVersion.Minor != "37" {
		t.Errorf("kubectl version -o json: %+v, %v", v, err)
	}

	versions := strings.Fields(kubectl(t, srv, "api-versions"))
	for _, want := range []string{"v1", "coordination.k8s.io/v1", "example.com/v1"} {
		if !slices.Contains(versions, want) {
			t.Errorf("api-versions %v lack %s", versions, want)
		}
	}
	if !slices.IsSorted(versions) {
		t.Errorf("api-versions not sorted: %v", versions)
	}

	out = kubectl(t, srv, "api-resources")
	rows := map[string][]string{}
	for _, r := range tableRows(out)[1:] {
		rows[r[0]] = r
	}
	want := map[string][]string{
		"configmaps": {"configmaps", "cm", "v1", "true", "ConfigMap"},
		"namespaces": {"namespaces", "ns", "v1", "false", "Namespace"},
		"secrets":    {"secrets", "v1", "true", "Secret"},
		"leases":     {"leases", "coordination.k8s.io/v1", "true", "Lease"},
		"widgets":    {"widgets", "wd", "example.com/v1", "true", "Widget"},
	}
	for name, w := range want {
		if !slices.Equal(rows[name], w) {
			t.Errorf("api-resources row %s = %v, want %v\n%s", name, rows[name], w, out)
		}
	}
	// Cluster-scoped: as in kube-apiserver.
	out = kubectl(t, srv, "api-resources", "--namespaced=false", "-o", "name")
	for _, want := range []string{"namespaces", "nodes", "persistentvolumes", "customresourcedefinitions.apiextensions.k8s.io",
		"clusterroles.rbac.authorization.k8s.io", "storageclasses.storage.k8s.io", "priorityclasses.scheduling.k8s.io"} {
		if !slices.Contains(strings.Fields(out), want) {
			t.Errorf("cluster-scoped resources lack %s:\n%s", want, out)
		}
	}
	if slices.Contains(strings.Fields(out), "configmaps") {
		t.Errorf("configmaps listed as cluster-scoped:\n%s", out)
	}
}

// seedConfigMaps creates n ConfigMaps named <prefix>-NN in ns over plain
// HTTP, labelled batch=<prefix>.
func seedConfigMaps(t *testing.T, srv *serverProc, ns, prefix string, n int) {
	t.Helper()
	for i := range n {
		srv.must(t, 201, "POST", "/api/v1/namespaces/"+ns+"/configmaps",
			configMap(fmt.Sprintf("%s-%02d", prefix, i), map[string]string{"batch": prefix}, map[string]string{"i": fmt.Sprint(i)}))
	}
}

// TestKubectlGet runs kubectl get in each output format, with label
// selectors, across namespaces and in chunks.
func TestKubectlGet(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	srv := kubectlServer(t)
	for _, ns := range []string{"shop", "office"} {
		srv.must(t, 201, "POST", "/api/v1/namespaces", namespace(ns))
	}
	srv.must(t, 201, "POST", "/api/v1/namespaces/shop/configmaps", configMap("front", map[string]string{"tier": "web"}, map[string]string{"a": "1", "b": "2"}))
	srv.must(t, 201, "POST", "/api/v1/namespaces/shop/configmaps", configMap("back", map[string]string{"tier": "db"}, map[string]string{"a": "1"}))
	srv.must(t, 201, "POST", "/api/v1/namespaces/office/configmaps", configMap("desk", map[string]string{"tier": "web"}, nil))
	srv.must(t, 201, "POST", "/apis/example.com/v1/namespaces/shop/widgets",
		map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "gear"}, "spec": map[string]any{"color": "red"}})

	t.Run("table", func(t *testing.T) {
		out := kubectl(t, srv, "get", "configmaps", "-n", "shop")
		if names := column(t, out, "NAME"); !slices.Equal(names, []string{"back", "front"}) {
			t.Errorf("names %v:\n%s", names, out)
		}
		if h := tableRows(out)[0]; !slices.Equal(h, []string{"NAME", "DATA", "AGE"}) {
			t.Errorf("header %v, want NAME DATA AGE as kubectl shows configmaps", h)
		}
		// A type's printer columns: the widget's color.
		out = kubectl(t, srv, "get", "wd", "-n", "shop")
		if c := column(t, out, "COLOR"); !slices.Equal(c, []string{"red"}) {
			t.Errorf("widget COLOR column %v:\n%s", c, out)
		}
		out = kubectl(t, srv, "get", "cm", "front", "-n", "shop", "--no-headers")
		if rows := tableRows(out); len(rows) != 1 || rows[0][0] != "front" {
			t.Errorf("--no-headers:\n%s", out)
		}
	})
	t.Run("yaml", func(t *testing.T) {
		out := kubectl(t, srv, "get", "cm", "front", "-n", "shop", "-o", "yaml")
		for _, want := range []string{"apiVersion: v1\n", "kind: ConfigMap\n", "  name: front\n", "  namespace: shop\n", "    tier: web\n", "  a: \"1\"\n", "  resourceVersion: "} {
			if !strings.Contains(out, want) {
				t.Errorf("-o yaml lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("json", func(t *testing.T) {
		var list struct {
			Kind  string
			Items []struct {
				Metadata struct{ Name, Namespace string }
				Data     map[string]string
			}
		}
		out := kubectl(t, srv, "get", "cm", "-n", "shop", "-o", "json")
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			t.Fatalf("-o json: %v\n%s", err, out)
		}
		if list.Kind != "List" || len(list.Items) != 2 || list.Items[1].Metadata.Name != "front" || list.Items[1].Data["b"] != "2" {
			t.Errorf("-o json: %+v", list)
		}
		name := kubectl(t, srv, "get", "cm", "front", "-n", "shop", "-o", "jsonpath={.metadata.name}={.data.a}")
		if name != "front=1" {
			t.Errorf("-o jsonpath = %q", name)
		}
	})
	t.Run("wide", func(t *testing.T) {
		out := kubectl(t, srv, "get", "wd", "-n", "shop", "-o", "wide")
		if c := column(t, out, "COLOR"); !slices.Equal(c, []string{"red"}) {
			t.Errorf("-o wide:\n%s", out)
		}
	})
	t.Run("label selector", func(t *testing.T) {
		out := kubectl(t, srv, "get", "cm", "-n", "shop", "-l", "tier=web", "-o", "name")
		if strings.TrimSpace(out) != "configmap/front" {
			t.Errorf("-l tier=web: %q", out)
		}
		out = kubectl(t, srv, "get", "cm", "-A", "-l", "tier in (web,db)", "-L", "tier")
		if c := column(t, out, "TIER"); !slices.Equal(c, []string{"web", "db", "web"}) {
			t.Errorf("-L tier column %v:\n%s", c, out)
		}
	})
	t.Run("all namespaces", func(t *testing.T) {
		out := kubectl(t, srv, "get", "cm", "-A", "-l", "tier")
		rows := tableRows(out)
		if !slices.Equal(rows[0][:2], []string{"NAMESPACE", "NAME"}) {
			t.Fatalf("-A header %v", rows[0])
		}
		var got []string
		for _, r := range rows[1:] {
			got = append(got, r[0]+"/"+r[1])
		}
		if !slices.Equal(got, []string{"office/desk", "shop/back", "shop/front"}) {
			t.Errorf("-A rows %v:\n%s", got, out)
		}
		out = kubectl(t, srv, "get", "ns")
		if names := column(t, out, "NAME"); !slices.Contains(names, "shop") || !slices.Contains(names, "office") {
			t.Errorf("get ns:\n%s", out)
		}
	})
	t.Run("chunk-size", func(t *testing.T) {
		srv.must(t, 201, "POST", "/api/v1/namespaces", namespace("many"))
		seedConfigMaps(t, srv, "many", "item", 25)
		r := runKubectl(t, srv, "", nil, "get", "cm", "-n", "many", "--chunk-size=10", "-v=6")
		if r.err != nil {
			t.Fatalf("get --chunk-size: %v\n%s", r.err, r.stderr)
		}
		names := column(t, r.stdout, "NAME")
		if len(names) != 25 || names[0] != "item-00" || names[24] != "item-24" {
			t.Errorf("--chunk-size=10 printed %d rows: %v", len(names), names)
		}
		// One request per chunk, each asking for 10 (-v=6 logs them).
		reqs := regexp.MustCompile(`verb="GET" url="[^"]*/namespaces/many/configmaps\?[^"]*limit=10[^"]*" status="200 OK"`).FindAllString(r.stderr, -1)
		if len(reqs) != 3 {
			t.Errorf("%d chunk requests, want 3:\n%s", len(reqs), r.stderr)
		}
		if h := tableRows(r.stdout)[0]; h[0] != "NAME" || slices.Contains(tableRows(r.stdout)[1:][10], "NAME") {
			t.Errorf("chunks repeat the header:\n%s", r.stdout)
		}
	})
}

// TestKubectlWatch runs kubectl get -w while ConfigMaps are created,
// changed and deleted, and reads each change as a table row.
func TestKubectlWatch(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	srv := kubectlServer(t)
	srv.must(t, 201, "POST", "/api/v1/namespaces", namespace("live"))
	srv.must(t, 201, "POST", "/api/v1/namespaces/live/configmaps", configMap("before", nil, nil))

	ctx, cancel := context.WithTimeout(context.Background(), kubectlTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectlPath(t), "get", "cm", "-n", "live", "-w", "--output-watch-events")
	cmd.Env = kubectlEnv(t, srv)
	lines := newLineCollector()
	var stderr syncBuffer
	cmd.Stdout, cmd.Stderr = lines, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cancel()
		cmd.Wait()
	}()
	// The initial list, then each change as it happens.
	lines.waitFor(t, "ADDED before", &stderr)
	srv.must(t, 201, "POST", "/api/v1/namespaces/live/configmaps", configMap("during", nil, map[string]string{"k": "v"}))
	lines.waitFor(t, "ADDED during", &stderr)
	srv.must(t, 200, "PATCH", "/api/v1/namespaces/live/configmaps/during", `{"data":{"k":"w"}}`, "Content-Type", "application/merge-patch+json")
	lines.waitFor(t, "MODIFIED during", &stderr)
	srv.must(t, 200, "DELETE", "/api/v1/namespaces/live/configmaps/before", nil)
	lines.waitFor(t, "DELETED before", &stderr)
	if h := lines.all()[0]; !strings.HasPrefix(h, "EVENT") || !strings.Contains(h, "NAME") {
		t.Errorf("first line %q is not the header", h)
	}
}

// lineCollector keeps the lines a process writes.
type lineCollector struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{} // closed and replaced on every write
}

func newLineCollector() *lineCollector { return &lineCollector{changed: make(chan struct{})} }

func (c *lineCollector) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf.Write(p)
	close(c.changed)
	c.changed = make(chan struct{})
	return len(p), nil
}

// all returns the complete lines written so far.
func (c *lineCollector) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.buf.String()
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return strings.Split(s[:i], "\n")
	}
	return nil
}

// waitFor waits (bounded) for a line whose first two fields are the
// words of want, e.g. "ADDED name".
func (c *lineCollector) waitFor(t *testing.T, want string, stderr *syncBuffer) {
	t.Helper()
	timer := time.NewTimer(clientTimeout)
	defer timer.Stop()
	for {
		c.mu.Lock()
		changed := c.changed
		c.mu.Unlock()
		for _, l := range c.all() {
			if f := strings.Fields(l); len(f) >= 2 && f[0]+" "+f[1] == want {
				return
			}
		}
		select {
		case <-changed:
		case <-timer.C:
			t.Fatalf("kubectl get -w printed no %q within %v:\n%s\nstderr:\n%s", want, clientTimeout, strings.Join(c.all(), "\n"), stderr)
		}
	}
}

// TestKubectlModify runs describe, label, annotate, patch (merge and
// JSON) and delete, which waits until the object is gone.
func TestKubectlModify(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	srv := kubectlServer(t)
	srv.must(t, 201, "POST", "/api/v1/namespaces", namespace("work"))
	srv.must(t, 201, "POST", "/api/v1/namespaces/work/configmaps", configMap("app", map[string]string{"app": "web"}, map[string]string{"color": "blue"}))
	cm := func() map[string]any { return srv.must(t, 200, "GET", "/api/v1/namespaces/work/configmaps/app", nil) }

	if out := kubectl(t, srv, "label", "cm", "app", "-n", "work", "tier=frontend"); strings.TrimSpace(out) != "configmap/app labeled" {
		t.Errorf("label: %q", out)
	}
	if got := str(cm(), "metadata.labels.tier"); got != "frontend" {
		t.Errorf("label tier = %q", got)
	}
	if out := kubectl(t, srv, "label", "cm", "app", "-n", "work", "tier-"); strings.TrimSpace(out) != "configmap/app unlabeled" {
		t.Errorf("unlabel: %q", out)
	}
	if out := kubectl(t, srv, "annotate", "cm", "app", "-n", "work", "owner=team-a"); strings.TrimSpace(out) != "configmap/app annotated" {
		t.Errorf("annotate: %q", out)
	}
	if r := runKubectl(t, srv, "", nil, "annotate", "cm", "app", "-n", "work", "owner=team-b"); r.err == nil || !strings.Contains(r.stderr, "already has a value (team-a)") {
		t.Errorf("annotate without --overwrite: %v\n%s", r.err, r.stderr)
	}
	if out := kubectl(t, srv, "patch", "cm", "app", "-n", "work", "--type=merge", "-p", `{"data":{"size":"L"}}`); strings.TrimSpace(out) != "configmap/app patched" {
		t.Errorf("patch --type=merge: %q", out)
	}
	if out := kubectl(t, srv, "patch", "cm", "app", "-n", "work", "--type=json", "-p", `[{"op":"replace","path":"/data/color","value":"green"}]`); strings.TrimSpace(out) != "configmap/app patched" {
		t.Errorf("patch --type=json: %q", out)
	}
	if out := kubectl(t, srv, "patch", "cm", "app", "-n", "work", "--type=merge", "-p", `{"data":{"size":"L"}}`); strings.TrimSpace(out) != "configmap/app patched (no change)" {
		t.Errorf("no-op patch: %q", out)
	}
	got := cm()
	if str(got, "data.size") != "L" || str(got, "data.color") != "green" || str(got, "metadata.annotations.owner") != "team-a" {
		t.Errorf("after patches: %v", got)
	}
	// A JSON patch whose test fails is refused.
	if r := runKubectl(t, srv, "", nil, "patch", "cm", "app", "-n", "work", "--type=json", "-p", `[{"op":"test","path":"/data/color","value":"blue"}]`); r.err == nil {
		t.Errorf("failing JSON patch test succeeded: %s", r.stdout)
	}

	out := kubectl(t, srv, "describe", "cm", "app", "-n", "work")
	for _, re := range []string{`(?m)^Name:\s+app$`, `(?m)^Namespace:\s+work$`, `(?m)^Labels:\s+app=web$`, `(?m)^Annotations:\s+owner: team-a$`, `(?m)^color:\n----\ngreen$`, `(?m)^size:\n----\nL$`} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("describe does not match %s:\n%s", re, out)
		}
	}
	out = kubectl(t, srv, "describe", "ns", "work")
	if !regexp.MustCompile(`(?m)^Status:\s+Active$`).MatchString(out) {
		t.Errorf("describe ns:\n%s", out)
	}

	// kubectl delete waits until the object is gone: a finalizer holds
	// it, and the command must not return before the finalizer goes.
	srv.must(t, 201, "POST", "/api/v1/namespaces/work/configmaps", map[string]any{"metadata": map[string]any{"name": "held", "finalizers": []string{"example.com/hold"}}})
	done := make(chan kubectlResult, 1)
	go func() { done <- runKubectl(t, srv, "", nil, "delete", "cm", "held", "-n", "work", "--timeout=50s") }()
	deadline := time.Now().Add(clientTimeout)
	for str(srv.must(t, 200, "GET", "/api/v1/namespaces/work/configmaps/held", nil), "metadata.deletionTimestamp") == "" {
		if time.Now().After(deadline) {
			t.Fatal("kubectl delete did not mark the object")
		}
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case r := <-done:
		t.Fatalf("kubectl delete returned while a finalizer held the object: %v\n%s%s", r.err, r.stdout, r.stderr)
	case <-time.After(time.Second):
	}
	srv.must(t, 200, "PATCH", "/api/v1/namespaces/work/configmaps/held", `[{"op":"remove","path":"/metadata/finalizers"}]`, "Content-Type", "application/json-patch+json")
	select {
	case r := <-done:
		if r.err != nil || strings.TrimSpace(r.stdout) != `configmap "held" deleted from work namespace` {
			t.Errorf("kubectl delete: %v\nstdout: %q\nstderr: %s", r.err, r.stdout, r.stderr)
		}
	case <-time.After(kubectlTimeout):
		t.Fatal("kubectl delete did not return once the object was gone")
	}
	if out := kubectl(t, srv, "delete", "cm", "app", "-n", "work"); strings.TrimSpace(out) != `configmap "app" deleted from work namespace` {
		t.Errorf("delete: %q", out)
	}
	if r := runKubectl(t, srv, "", nil, "get", "cm", "app", "-n", "work"); r.err == nil || !strings.Contains(r.stderr, `configmaps "app" not found`) {
		t.Errorf("get after delete: %v %s", r.err, r.stderr)
	}
}

// TestKubectlCreateApplyEdit runs the typed create commands (protobuf
// bodies), apply (create, then configured, then unchanged, and a
// misspelt field refused by server-side field validation), edit with a
// scripted editor, and explain.
func TestKubectlCreateApplyEdit(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	srv := kubectlServer(t)

	if out := kubectl(t, srv, "create", "namespace", "team"); strings.TrimSpace(out) != "namespace/team created" {
		t.Errorf("create namespace: %q", out)
	}
	if out := kubectl(t, srv, "create", "configmap", "settings", "-n", "team", "--from-literal=mode=fast", "--from-literal=level=3"); strings.TrimSpace(out) != "configmap/settings created" {
		t.Errorf("create configmap: %q", out)
	}
	got := srv.must(t, 200, "GET", "/api/v1/namespaces/team/configmaps/settings", nil)
	if str(got, "data.mode") != "fast" || str(got, "data.level") != "3" {
		t.Errorf("created configmap: %v", got)
	}
	if r := runKubectl(t, srv, "", nil, "create", "namespace", "team"); r.err == nil || !strings.Contains(r.stderr, `namespaces "team" already exists`) {
		t.Errorf("second create namespace: %v %s", r.err, r.stderr)
	}

	dir := t.TempDir()
	manifest := filepath.Join(dir, "app.yaml")
	write := func(color string) {
		t.Helper()
		doc := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: team\n  labels:\n    app: web\ndata:\n  color: " + color + "\n" +
			"---\napiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: gear\n  namespace: team\nspec:\n  color: " + color + "\n"
		if err := os.WriteFile(manifest, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("blue")
	if out := kubectl(t, srv, "apply", "-f", manifest); out != "configmap/app created\nwidget.example.com/gear created\n" {
		t.Errorf("first apply: %q", out)
	}
	write("green")
	if out := kubectl(t, srv, "apply", "-f", manifest); out != "configmap/app configured\nwidget.example.com/gear configured\n" {
		t.Errorf("second apply: %q", out)
	}
	if out := kubectl(t, srv, "apply", "-f", manifest); out != "configmap/app unchanged\nwidget.example.com/gear unchanged\n" {
		t.Errorf("third apply: %q", out)
	}
	if c := kubectl(t, srv, "get", "cm", "app", "-n", "team", "-o", "jsonpath={.data.color}"); c != "green" {
		t.Errorf("applied color %q", c)
	}
	// kubectl asks for fieldValidation=Strict: a misspelt field is an
	// error from the server, as from kube-apiserver.
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: typo\n  namespace: team\ndta:\n  k: v\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runKubectl(t, srv, "", nil, "apply", "-f", bad)
	if r.err == nil || !strings.Contains(r.stderr, `ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "dta"`) {
		t.Errorf("apply with an unknown field: %v\n%s%s", r.err, r.stdout, r.stderr)
	}

	// edit: the editor is a script that changes the color in the file
	// kubectl hands it.
	editor := filepath.Join(dir, "editor.sh")
	if err := os.WriteFile(editor, []byte("#!/bin/sh\nsed -i 's/color: green/color: purple/' \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r = runKubectl(t, srv, "", []string{"EDITOR=" + editor, "KUBE_EDITOR=" + editor}, "edit", "cm", "app", "-n", "team")
	if r.err != nil || strings.TrimSpace(r.stdout) != "configmap/app edited" {
		t.Errorf("edit: %v\nstdout: %q\nstderr: %s", r.err, r.stdout, r.stderr)
	}
	if c := kubectl(t, srv, "get", "cm", "app", "-n", "team", "-o", "jsonpath={.data.color}"); c != "purple" {
		t.Errorf("edited color %q", c)
	}
	r = runKubectl(t, srv, "", []string{"EDITOR=" + editor, "KUBE_EDITOR=" + editor}, "edit", "wd", "gear", "-n", "team")
	if r.err != nil || strings.TrimSpace(r.stdout) != "widget.example.com/gear edited" {
		t.Errorf("edit widget: %v\nstdout: %q\nstderr: %s", r.err, r.stdout, r.stderr)
	}

	out := kubectl(t, srv, "explain", "configmap")
	for _, re := range []string{`(?m)^KIND:\s+ConfigMap$`, `(?m)^VERSION:\s+v1$`, `(?m)^DESCRIPTION:$`, `(?m)^FIELDS:$`, `(?m)^\s+data\s+<map\[string\]string>$`, `(?m)^\s+metadata\s+<ObjectMeta>$`} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("explain configmap does not match %s:\n%s", re, out)
		}
	}
	out = kubectl(t, srv, "explain", "lease.spec.holderIdentity")
	if !regexp.MustCompile(`(?m)^FIELD:\s+holderIdentity <string>$`).MatchString(out) {
		t.Errorf("explain lease.spec.holderIdentity:\n%s", out)
	}
	out = kubectl(t, srv, "explain", "widgets")
	if !regexp.MustCompile(`(?m)^KIND:\s+Widget$`).MatchString(out) || !regexp.MustCompile(`(?m)^GROUP:\s+example.com$`).MatchString(out) {
		t.Errorf("explain widgets:\n%s", out)
	}
}

// TestKubectlDeleteNamespace deletes a namespace with objects inside:
// kubectl waits while the namespace controller empties it, and returns
// once the namespace is gone, with everything that was in it.
func TestKubectlDeleteNamespace(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	srv := kubectlServer(t)
	srv.must(t, 201, "POST", "/api/v1/namespaces", namespace("doomed"))
	seedConfigMaps(t, srv, "doomed", "cm", 5)
	srv.must(t, 201, "POST", "/apis/example.com/v1/namespaces/doomed/widgets",
		map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "gear"}})
	srv.must(t, 201, "POST", "/api/v1/namespaces", namespace("kept"))
	seedConfigMaps(t, srv, "kept", "cm", 2)

	if out := kubectl(t, srv, "delete", "namespace", "doomed", "--timeout=50s"); strings.TrimSpace(out) != `namespace "doomed" deleted` {
		t.Errorf("delete namespace: %q", out)
	}
	if r := runKubectl(t, srv, "", nil, "get", "ns", "doomed"); r.err == nil || !strings.Contains(r.stderr, `namespaces "doomed" not found`) {
		t.Errorf("get ns after delete: %v %s%s", r.err, r.stdout, r.stderr)
	}
	if got := items(t, srv.must(t, 200, "GET", "/api/v1/namespaces/doomed/configmaps", nil)); len(got) != 0 {
		t.Errorf("%d configmaps left in the deleted namespace", len(got))
	}
	if got := items(t, srv.must(t, 200, "GET", "/apis/example.com/v1/namespaces/doomed/widgets", nil)); len(got) != 0 {
		t.Errorf("%d widgets left in the deleted namespace", len(got))
	}
	if names := column(t, kubectl(t, srv, "get", "cm", "-n", "kept"), "NAME"); len(names) != 2 {
		t.Errorf("other namespace lost objects: %v", names)
	}
}
