package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// gadgetCRD declares a type whose spec.ports is a list of type map keyed
// by name, so ownership of its items is per item (k:{"name":...}) rather
// than of the whole list, and which has a status subresource.
const gadgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.ssa.example.com
spec:
  group: ssa.example.com
  scope: Namespaced
  names:
    plural: gadgets
    singular: gadget
    kind: Gadget
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              color: {type: string}
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    port: {type: integer}
          status:
            type: object
            properties:
              phase: {type: string}
              message: {type: string}
`

// fieldsEntry is one metadata.managedFields entry as a test expects it.
// fields is the fieldsV1 set as JSON; entries are told apart by manager,
// operation and subresource, as kube-apiserver keeps one entry for each.
type fieldsEntry struct {
	manager, operation, subresource, apiVersion string
	fields                                      string
}

// managedFieldsOf decodes metadata.managedFields of an object read over
// HTTP.
func managedFieldsOf(t *testing.T, obj map[string]any) []metav1.ManagedFieldsEntry {
	t.Helper()
	var out []metav1.ManagedFieldsEntry
	if err := json.Unmarshal(mustJSON(t, get(obj, "metadata.managedFields")), &out); err != nil {
		t.Fatalf("metadata.managedFields: %v", err)
	}
	return out
}

// checkManagedFields fails the test unless got holds exactly the entries
// of want, each complete (fieldsType FieldsV1, a time), in the order
// kube-apiserver sorts them: by operation, then time, then manager.
func checkManagedFields(t *testing.T, step string, got []metav1.ManagedFieldsEntry, want ...fieldsEntry) {
	t.Helper()
	show := func() string {
		b, _ := json.MarshalIndent(got, "", "  ")
		return string(b)
	}
	if len(got) != len(want) {
		t.Errorf("%s: %d managedFields entries, want %d:\n%s", step, len(got), len(want), show())
	}
	for _, w := range want {
		i := slices.IndexFunc(got, func(e metav1.ManagedFieldsEntry) bool {
			return e.Manager == w.manager && string(e.Operation) == w.operation && e.Subresource == w.subresource
		})
		if i < 0 {
			t.Errorf("%s: no managedFields entry for manager %q operation %s subresource %q:\n%s", step, w.manager, w.operation, w.subresource, show())
			continue
		}
		e := got[i]
		if e.APIVersion != w.apiVersion {
			t.Errorf("%s: %s entry apiVersion %q, want %q", step, w.manager, e.APIVersion, w.apiVersion)
		}
		if e.FieldsType != "FieldsV1" {
			t.Errorf("%s: %s entry fieldsType %q, want FieldsV1", step, w.manager, e.FieldsType)
		}
		if e.Time == nil || e.Time.IsZero() || e.Time.After(time.Now().Add(time.Minute)) {
			t.Errorf("%s: %s entry time %v, want the time of the write", step, w.manager, e.Time)
		}
		var gotFields, wantFields any
		if err := json.Unmarshal([]byte(w.fields), &wantFields); err != nil {
			t.Fatalf("%s: the test's fieldsV1 for %s: %v", step, w.manager, err)
		}
		if e.FieldsV1 == nil || json.Unmarshal(e.FieldsV1.GetRawBytes(), &gotFields) != nil || !reflect.DeepEqual(gotFields, wantFields) {
			var raw string
			if e.FieldsV1 != nil {
				raw = string(e.FieldsV1.GetRawBytes())
			}
			t.Errorf("%s: %s entry fieldsV1\n got %s\nwant %s", step, w.manager, raw, w.fields)
		}
	}
	sorted := slices.IsSortedFunc(got, func(a, b metav1.ManagedFieldsEntry) int {
		if a.Operation != b.Operation {
			return strings.Compare(string(a.Operation), string(b.Operation))
		}
		var at, bt int64
		if a.Time != nil {
			at = a.Time.Unix()
		}
		if b.Time != nil {
			bt = b.Time.Unix()
		}
		if at != bt {
			return int(at - bt)
		}
		return strings.Compare(a.Manager, b.Manager)
	})
	if !sorted {
		t.Errorf("%s: managedFields not in kube-apiserver's order (operation, time, manager):\n%s", step, show())
	}
}

// exitCode is the exit code of a finished kubectl command.
func exitCode(t *testing.T, r kubectlResult) int {
	t.Helper()
	var ee *exec.ExitError
	if r.err != nil && !errors.As(r.err, &ee) {
		t.Fatalf("kubectl did not run: %v", r.err)
	}
	if ee != nil {
		return ee.ExitCode()
	}
	return 0
}

// serverSideApply runs kubectl apply --server-side on manifest (fed on
// stdin) with extra flags, failing the test unless it succeeds.
func serverSideApply(t *testing.T, srv *serverProc, manifest string, flags ...string) kubectlResult {
	t.Helper()
	r := runKubectl(t, srv, manifest, nil, append([]string{"apply", "--server-side", "-f", "-"}, flags...)...)
	if r.err != nil {
		t.Fatalf("kubectl apply --server-side %v: %v\nstdout:\n%s\nstderr:\n%s", flags, r.err, r.stdout, r.stderr)
	}
	return r
}

// wantApplyConflict runs kubectl apply --server-side expecting it to be
// refused with exactly one conflict, printed first as kube-apiserver words
// it, and checks the object was not written.
func wantApplyConflict(t *testing.T, srv *serverProc, path, manifest, conflict string, flags ...string) {
	t.Helper()
	before := srv.must(t, 200, "GET", path, nil)
	r := runKubectl(t, srv, manifest, nil, append([]string{"apply", "--server-side", "-f", "-"}, flags...)...)
	if code := exitCode(t, r); code != 1 {
		t.Errorf("conflicting apply: exit code %d, want 1\nstdout:\n%s\nstderr:\n%s", code, r.stdout, r.stderr)
	}
	first, _, _ := strings.Cut(r.stderr, "\n")
	if want := "error: Apply failed with 1 conflict: " + conflict; first != want {
		t.Errorf("conflicting apply printed\n%s\nwant first line\n%s", r.stderr, want)
	}
	if !strings.Contains(r.stderr, "--force-conflicts") {
		t.Errorf("kubectl did not suggest --force-conflicts (it does for a 409 conflict):\n%s", r.stderr)
	}
	if after := srv.must(t, 200, "GET", path, nil); !reflect.DeepEqual(after, before) {
		t.Errorf("a refused apply changed the object:\nbefore %v\nafter  %v", before, after)
	}
}

// applyStatus matches the -v=6 log line of kubectl's apply PATCH to the
// named object, capturing its HTTP status.
func applyStatus(t *testing.T, stderr, name string) string {
	t.Helper()
	re := regexp.MustCompile(`verb="PATCH" url="[^"?]*/` + regexp.QuoteMeta(name) + `\?[^"]*" status="([^"]*)"`)
	m := re.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no PATCH of %s in kubectl's -v=6 log:\n%s", name, stderr)
	}
	return m[1]
}

// startKubectlServer starts a plain server once kubectl is built, so the
// build does not count against the server's start.
func startKubectlServer(t *testing.T) *serverProc {
	t.Helper()
	kubectlPath(t)
	srv := startServer(t, t.TempDir())
	srv.must(t, 201, "POST", "/api/v1/namespaces", namespace("ssa"))
	return srv
}

// TestKubectlApplyServerSideConfigMap drives kubectl apply --server-side
// on a ConfigMap through create, change, a conflict with another applier
// and with an updater, co-ownership and --force-conflicts, checking the
// object and its managedFields after every step.
func TestKubectlApplyServerSideConfigMap(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	srv := startKubectlServer(t)
	const path = "/api/v1/namespaces/ssa/configmaps/app"
	manifest := func(data string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: ssa\n  labels:\n    app: web\ndata:\n" + data
	}
	cm := func() map[string]any { return srv.must(t, 200, "GET", path, nil) }
	wantData := func(step string, obj map[string]any, want map[string]any) {
		t.Helper()
		if got, _ := obj["data"].(map[string]any); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: data %v, want %v", step, got, want)
		}
	}

	// Create: kube-apiserver answers 201, and the applier owns exactly
	// what it applied (no "." entries, no name or namespace).
	r := serverSideApply(t, srv, manifest("  a: \"1\"\n  b: \"2\"\n"), "-v=6")
	if strings.TrimSpace(r.stdout) != "configmap/app serverside-applied" {
		t.Errorf("first apply printed %q", r.stdout)
	}
	if s := applyStatus(t, r.stderr, "app"); s != "201 Created" {
		t.Errorf("apply that creates: HTTP %s, want 201 Created", s)
	}
	obj := cm()
	wantData("create", obj, map[string]any{"a": "1", "b": "2"})
	checkManagedFields(t, "create", managedFieldsOf(t, obj),
		fieldsEntry{"kubectl", "Apply", "", "v1", `{"f:data":{"f:a":{},"f:b":{}},"f:metadata":{"f:labels":{"f:app":{}}}}`})

	// Change a value and drop a key: nobody else owns b, so it goes.
	r = serverSideApply(t, srv, manifest("  a: \"10\"\n"), "-v=6")
	if s := applyStatus(t, r.stderr, "app"); s != "200 OK" {
		t.Errorf("apply that updates: HTTP %s, want 200 OK", s)
	}
	obj = cm()
	wantData("change", obj, map[string]any{"a": "10"})
	checkManagedFields(t, "change", managedFieldsOf(t, obj),
		fieldsEntry{"kubectl", "Apply", "", "v1", `{"f:data":{"f:a":{}},"f:metadata":{"f:labels":{"f:app":{}}}}`})

	// An apply that changes nothing writes nothing.
	rv := str(obj, "metadata.resourceVersion")
	serverSideApply(t, srv, manifest("  a: \"10\"\n"))
	if got := str(cm(), "metadata.resourceVersion"); got != rv {
		t.Errorf("a no-op apply moved resourceVersion %s to %s", rv, got)
	}

	// A second applier adds its own keys beside ours.
	other := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: ssa\ndata:\n  x: \"1\"\n  z: \"1\"\n"
	serverSideApply(t, srv, other, "--field-manager=other")
	obj = cm()
	wantData("other", obj, map[string]any{"a": "10", "x": "1", "z": "1"})
	checkManagedFields(t, "other", managedFieldsOf(t, obj),
		fieldsEntry{"kubectl", "Apply", "", "v1", `{"f:data":{"f:a":{}},"f:metadata":{"f:labels":{"f:app":{}}}}`},
		fieldsEntry{"other", "Apply", "", "v1", `{"f:data":{"f:x":{},"f:z":{}}}`})

	// Setting its x to another value conflicts with it.
	taking := manifest("  a: \"10\"\n  x: \"2\"\n")
	wantApplyConflict(t, srv, path, taking, `conflict with "other": .data.x`)

	// --force-conflicts takes x: it moves to kubectl, other keeps z.
	serverSideApply(t, srv, taking, "--force-conflicts")
	obj = cm()
	wantData("force", obj, map[string]any{"a": "10", "x": "2", "z": "1"})
	checkManagedFields(t, "force", managedFieldsOf(t, obj),
		fieldsEntry{"kubectl", "Apply", "", "v1", `{"f:data":{"f:a":{},"f:x":{}},"f:metadata":{"f:labels":{"f:app":{}}}}`},
		fieldsEntry{"other", "Apply", "", "v1", `{"f:data":{"f:z":{}}}`})

	// A patch is an Update: kubectl-patch takes a from the applier.
	if out := kubectl(t, srv, "patch", "cm", "app", "-n", "ssa", "--type=merge", "-p", `{"data":{"a":"20"}}`); strings.TrimSpace(out) != "configmap/app patched" {
		t.Errorf("patch: %q", out)
	}
	obj = cm()
	wantData("patch", obj, map[string]any{"a": "20", "x": "2", "z": "1"})
	checkManagedFields(t, "patch", managedFieldsOf(t, obj),
		fieldsEntry{"kubectl", "Apply", "", "v1", `{"f:data":{"f:x":{}},"f:metadata":{"f:labels":{"f:app":{}}}}`},
		fieldsEntry{"other", "Apply", "", "v1", `{"f:data":{"f:z":{}}}`},
		fieldsEntry{"kubectl-patch", "Update", "", "v1", `{"f:data":{"f:a":{}}}`})

	// Reapplying the old a conflicts with the updater, named with the
	// version it used; applying its value instead co-owns a.
	wantApplyConflict(t, srv, path, taking, `conflict with "kubectl-patch" using v1: .data.a`)
	serverSideApply(t, srv, manifest("  a: \"20\"\n  x: \"2\"\n"))
	obj = cm()
	wantData("co-own", obj, map[string]any{"a": "20", "x": "2", "z": "1"})
	checkManagedFields(t, "co-own", managedFieldsOf(t, obj),
		fieldsEntry{"kubectl", "Apply", "", "v1", `{"f:data":{"f:a":{},"f:x":{}},"f:metadata":{"f:labels":{"f:app":{}}}}`},
		fieldsEntry{"other", "Apply", "", "v1", `{"f:data":{"f:z":{}}}`},
		fieldsEntry{"kubectl-patch", "Update", "", "v1", `{"f:data":{"f:a":{}}}`})

	// Other gives up z by applying an empty configuration: z goes, and
	// so does its entry, which owns nothing any more.
	serverSideApply(t, srv, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: ssa\n", "--field-manager=other")
	obj = cm()
	wantData("release", obj, map[string]any{"a": "20", "x": "2"})
	checkManagedFields(t, "release", managedFieldsOf(t, obj),
		fieldsEntry{"kubectl", "Apply", "", "v1", `{"f:data":{"f:a":{},"f:x":{}},"f:metadata":{"f:labels":{"f:app":{}}}}`},
		fieldsEntry{"kubectl-patch", "Update", "", "v1", `{"f:data":{"f:a":{}}}`})
}

// TestKubectlApplyServerSideCustomResource applies a CRD and then custom
// resources of it server-side: items of a list of type map are owned one
// by one, so two appliers share the list, conflict on one item's field,
// and --force-conflicts moves just that field.
func TestKubectlApplyServerSideCustomResource(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	srv := startKubectlServer(t)

	r := serverSideApply(t, srv, gadgetCRD)
	if strings.TrimSpace(r.stdout) != "customresourcedefinition.apiextensions.k8s.io/gadgets.ssa.example.com serverside-applied" {
		t.Errorf("apply CRD printed %q", r.stdout)
	}
	kubectl(t, srv, "wait", "--for=condition=Established", "--timeout=10s", "crd/gadgets.ssa.example.com")
	// spec.versions is an atomic list in the CRD's schema. The status is
	// written by the server's own controllers, which kube-apiserver runs
	// with its loopback client: manager kube-apiserver, on /status. Its
	// conditions replace a null list, which nobody owned: the entry owns
	// the items, not the list (as kube-apiserver 1.37.1 records it).
	checkManagedFields(t, "CRD", managedFieldsOf(t, srv.must(t, 200, "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.ssa.example.com", nil)),
		fieldsEntry{"kubectl", "Apply", "", "apiextensions.k8s.io/v1",
			`{"f:spec":{"f:group":{},"f:names":{"f:kind":{},"f:plural":{},"f:singular":{}},"f:scope":{},"f:versions":{}}}`},
		fieldsEntry{"kube-apiserver", "Update", "status", "apiextensions.k8s.io/v1",
			`{"f:status":{"f:acceptedNames":{"f:kind":{},"f:listKind":{},"f:plural":{},"f:singular":{}},"f:conditions":{` +
				`"k:{\"type\":\"Established\"}":{".":{},"f:lastTransitionTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}},` +
				`"k:{\"type\":\"NamesAccepted\"}":{".":{},"f:lastTransitionTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}}}}}`})

	const path = "/apis/ssa.example.com/v1/namespaces/ssa/gadgets/g"
	gadget := func(spec string) string {
		return "apiVersion: ssa.example.com/v1\nkind: Gadget\nmetadata:\n  name: g\n  namespace: ssa\nspec:\n" + spec
	}
	// ports returns spec.ports as name=port pairs, in order.
	ports := func(obj map[string]any) []string {
		var out []string
		list, _ := get(obj, "spec.ports").([]any)
		for _, p := range list {
			m, _ := p.(map[string]any)
			out = append(out, fmt.Sprintf("%v=%v", m["name"], m["port"]))
		}
		return out
	}
	item := func(name string, fields ...string) string {
		return fmt.Sprintf(`"k:{\"name\":\"%s\"}":{".":{},%s}`, name, strings.Join(fields, ","))
	}
	full := []string{`"f:name":{}`, `"f:port":{}`}
	const v1 = "ssa.example.com/v1"

	r = serverSideApply(t, srv, gadget("  color: red\n  ports:\n  - {name: a, port: 1}\n  - {name: b, port: 2}\n"), "-v=6")
	if strings.TrimSpace(r.stdout) != "gadget.ssa.example.com/g serverside-applied" {
		t.Errorf("apply gadget printed %q", r.stdout)
	}
	if s := applyStatus(t, r.stderr, "g"); s != "201 Created" {
		t.Errorf("apply that creates: HTTP %s, want 201 Created", s)
	}
	obj := srv.must(t, 200, "GET", path, nil)
	if got := ports(obj); !slices.Equal(got, []string{"a=1", "b=2"}) || str(obj, "spec.color") != "red" {
		t.Errorf("create: spec %v", obj["spec"])
	}
	checkManagedFields(t, "create", managedFieldsOf(t, obj),
		fieldsEntry{"kubectl", "Apply", "", v1, `{"f:spec":{"f:color":{},"f:ports":{` + item("a", full...) + "," + item("b", full...) + `}}}`})

	// Another applier adds an item of its own: no conflict, the list is
	// shared item by item.
	serverSideApply(t, srv, gadget("  ports:\n  - {name: c, port: 3}\n"), "--field-manager=other")
	obj = srv.must(t, 200, "GET", path, nil)
	if got := ports(obj); !slices.Equal(got, []string{"a=1", "b=2", "c=3"}) {
		t.Errorf("other's item: ports %v, want a=1 b=2 c=3", got)
	}
	checkManagedFields(t, "other", managedFieldsOf(t, obj),
		fieldsEntry{"kubectl", "Apply", "", v1, `{"f:spec":{"f:color":{},"f:ports":{` + item("a", full...) + "," + item("b", full...) + `}}}`},
		fieldsEntry{"other", "Apply", "", v1, `{"f:spec":{"f:ports":{` + item("c", full...) + `}}}`})

	// Dropping b, changing a and setting c's port: c's port conflicts.
	taking := gadget("  color: red\n  ports:\n  - {name: a, port: 10}\n  - {name: c, port: 4}\n")
	wantApplyConflict(t, srv, path, taking, `conflict with "other": .spec.ports[name="c"].port`)

	// Forced: b goes (only kubectl owned it), c's port moves to kubectl,
	// and both keep the item and its key.
	serverSideApply(t, srv, taking, "--force-conflicts")
	obj = srv.must(t, 200, "GET", path, nil)
	if got := ports(obj); !slices.Equal(got, []string{"a=10", "c=4"}) {
		t.Errorf("force: ports %v, want a=10 c=4", got)
	}
	checkManagedFields(t, "force", managedFieldsOf(t, obj),
		fieldsEntry{"kubectl", "Apply", "", v1, `{"f:spec":{"f:color":{},"f:ports":{` + item("a", full...) + "," + item("c", full...) + `}}}`},
		fieldsEntry{"other", "Apply", "", v1, `{"f:spec":{"f:ports":{` + item("c", `"f:name":{}`) + `}}}`})
}

// diffLines returns the changed lines of kubectl diff's unified diff,
// without the file headers.
func diffLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "---") || strings.HasPrefix(l, "+++") {
			continue
		}
		if strings.HasPrefix(l, "-") || strings.HasPrefix(l, "+") {
			lines = append(lines, l)
		}
	}
	return lines
}

// TestKubectlDiff runs kubectl diff, which asks the server for a dry run
// (an apply patch with --server-side, else the client-side apply patch or
// a create): exit 0 and silence without changes, exit 1 and the changed
// lines with them, and nothing written either way.
func TestKubectlDiff(t *testing.T) {
	skipIfShort(t)
	if _, err := exec.LookPath("diff"); err != nil {
		t.Skip("kubectl diff needs a diff program on PATH")
	}
	t.Parallel()
	srv := startKubectlServer(t)
	serverSideApply(t, srv, gadgetCRD)
	kubectl(t, srv, "wait", "--for=condition=Established", "--timeout=10s", "crd/gadgets.ssa.example.com")

	configMap := func(name, a string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  namespace: ssa\ndata:\n  a: \"" + a + "\"\n"
	}
	// diff runs kubectl diff on manifest and checks its exit code, and
	// that the object at path is as it was.
	diff := func(t *testing.T, path, manifest string, wantCode int, flags ...string) string {
		t.Helper()
		before := srv.do(t, "GET", path, nil)
		r := runKubectl(t, srv, manifest, nil, append([]string{"diff", "-f", "-"}, flags...)...)
		if code := exitCode(t, r); code != wantCode {
			t.Fatalf("kubectl diff %v: exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", flags, code, wantCode, r.stdout, r.stderr)
		}
		if r.stderr != "" {
			t.Errorf("kubectl diff %v wrote to stderr:\n%s", flags, r.stderr)
		}
		if after := srv.do(t, "GET", path, nil); after.code != before.code || !reflect.DeepEqual(after.body, before.body) {
			t.Errorf("kubectl diff %v changed %s:\nbefore %d %s\nafter  %d %s", flags, path, before.code, before.body, after.code, after.body)
		}
		return r.stdout
	}

	for _, mode := range []struct {
		name  string
		flags []string
		apply func(manifest string)
	}{
		{"server-side", []string{"--server-side"}, func(m string) { serverSideApply(t, srv, m) }},
		{"client-side", nil, func(m string) {
			if r := runKubectl(t, srv, m, nil, "apply", "-f", "-"); r.err != nil {
				t.Fatalf("kubectl apply: %v\n%s", r.err, r.stderr)
			}
		}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			name := "diff-" + mode.name
			path := "/api/v1/namespaces/ssa/configmaps/" + name
			mode.apply(configMap(name, "1"))

			if out := diff(t, path, configMap(name, "1"), 0, mode.flags...); out != "" {
				t.Errorf("diff without changes printed:\n%s", out)
			}
			// Only the value differs: the dry run keeps the object's
			// resourceVersion, and a ConfigMap has no generation.
			out := diff(t, path, configMap(name, "2"), 1, mode.flags...)
			if got, want := diffLines(out), []string{`-  a: "1"`, `+  a: "2"`}; !slices.Equal(got, want) {
				t.Errorf("diff changed lines %q, want %q; output:\n%s", got, want, out)
			}
			// An object that does not exist is all new, and is not created.
			fresh := name + "-new"
			out = diff(t, "/api/v1/namespaces/ssa/configmaps/"+fresh, configMap(fresh, "1"), 1, mode.flags...)
			lines := diffLines(out)
			if !slices.Contains(lines, "+  name: "+fresh) || !slices.Contains(lines, `+  a: "1"`) || slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "-") }) {
				t.Errorf("diff of a new object:\n%s", out)
			}
		})
	}

	t.Run("custom resource", func(t *testing.T) {
		const path = "/apis/ssa.example.com/v1/namespaces/ssa/gadgets/d"
		gadget := func(color string) string {
			return "apiVersion: ssa.example.com/v1\nkind: Gadget\nmetadata:\n  name: d\n  namespace: ssa\nspec:\n  color: " + color + "\n"
		}
		serverSideApply(t, srv, gadget("red"))
		if out := diff(t, path, gadget("red"), 0, "--server-side"); out != "" {
			t.Errorf("diff without changes printed:\n%s", out)
		}
		// A spec change bumps a custom resource's generation, in a dry
		// run too.
		out := diff(t, path, gadget("blue"), 1, "--server-side")
		got := diffLines(out)
		slices.Sort(got)
		if want := []string{"+  color: blue", "+  generation: 2", "-  color: red", "-  generation: 1"}; !slices.Equal(got, want) {
			t.Errorf("diff changed lines %q, want %q; output:\n%s", got, want, out)
		}
	})
}
