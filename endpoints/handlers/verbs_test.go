package handlers

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/miniapi/miniapi/storage/etcd3/etcd3test"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

const cms = "/api/v1/namespaces/ns1/configmaps"

func TestCreateSetsServerMetadata(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	got := f.Must(201, "POST", cms, configMap("a", nil, map[string]string{"k": "v"}))
	for _, path := range []string{"metadata.uid", "metadata.resourceVersion", "metadata.creationTimestamp"} {
		if s, _ := fieldAt(got, path).(string); s == "" {
			t.Errorf("%s not set: %v", path, got)
		}
	}
	// As in kube-apiserver, a ConfigMap has no generation.
	if fieldAt(got, "metadata.generation") != nil || fieldAt(got, "metadata.namespace") != "ns1" {
		t.Errorf("generation/namespace wrong: %v", got["metadata"])
	}
	read := f.Must(200, "GET", cms+"/a", nil)
	if fieldAt(read, "metadata.resourceVersion") != fieldAt(got, "metadata.resourceVersion") {
		t.Errorf("get RV %v != create RV %v", fieldAt(read, "metadata.resourceVersion"), fieldAt(got, "metadata.resourceVersion"))
	}
	f.Status(f.Do("POST", cms, configMap("a", nil, nil)), 409, "AlreadyExists")
}

func TestCreateChecksNamespaceAndType(t *testing.T) {
	f := newFixture(t)
	// (A missing namespace is kube's NamespaceLifecycle admission's to
	// refuse: package server tests it.)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	wrongNS := configMap("a", nil, nil)
	wrongNS["metadata"].(map[string]any)["namespace"] = "other"
	f.Status(f.Do("POST", cms, wrongNS), 400, "BadRequest")
	wrongKind := configMap("a", nil, nil)
	wrongKind["kind"] = "Secret"
	f.Status(f.Do("POST", cms, wrongKind), 400, "BadRequest")
	wrongVersion := configMap("a", nil, nil)
	wrongVersion["apiVersion"] = "v2"
	f.Status(f.Do("POST", cms, wrongVersion), 400, "BadRequest")
	withRV := configMap("a", nil, nil)
	withRV["metadata"].(map[string]any)["resourceVersion"] = "5"
	f.Status(f.Do("POST", cms, withRV), 400, "BadRequest")
	// Missing apiVersion and kind are filled in from the URL.
	got := f.Must(201, "POST", cms, map[string]any{"metadata": map[string]any{"name": "b"}})
	if got["kind"] != "ConfigMap" || got["apiVersion"] != "v1" {
		t.Fatalf("type not defaulted: %v", got)
	}
}

func TestCreateValidation(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	st := f.Status(f.Do("POST", cms, configMap("Bad_Name", map[string]string{"bad key!": "v"}, nil)), 422, "Invalid")
	causes := fieldAt(st, "details.causes").([]any)
	fields := map[string]bool{}
	for _, c := range causes {
		fields[c.(map[string]any)["field"].(string)] = true
	}
	if !fields["metadata.name"] || !fields["metadata.labels"] {
		t.Fatalf("causes = %v", causes)
	}
	if !strings.HasPrefix(st["message"].(string), `ConfigMap "Bad_Name" is invalid: `) {
		t.Fatalf("message = %q", st["message"])
	}
	f.Status(f.Do("POST", cms, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{}}), 422, "Invalid")
	// Nothing was stored.
	list := f.Must(200, "GET", cms, nil)
	if n := len(list["items"].([]any)); n != 0 {
		t.Fatalf("%d objects stored after rejected creates", n)
	}
}

func TestGenerateName(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	seen := map[string]bool{}
	for i := 0; i < 5; i++ {
		got := f.Must(201, "POST", cms, map[string]any{"metadata": map[string]any{"generateName": "gen-"}})
		name := fieldAt(got, "metadata.name").(string)
		if !strings.HasPrefix(name, "gen-") || len(name) != len("gen-")+5 || seen[name] {
			t.Fatalf("generated name %q", name)
		}
		seen[name] = true
	}
}

func TestUpdateSemantics(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	created := f.Must(201, "POST", cms, configMap("a", nil, map[string]string{"k": "v1"}))
	rv := fieldAt(created, "metadata.resourceVersion").(string)

	// A no-op update writes nothing and keeps the resourceVersion.
	same := f.Must(200, "PUT", cms+"/a", created)
	if fieldAt(same, "metadata.resourceVersion") != rv {
		t.Fatalf("no-op update moved RV %s -> %v", rv, fieldAt(same, "metadata.resourceVersion"))
	}

	changed := configMap("a", nil, map[string]string{"k": "v2"})
	changed["metadata"].(map[string]any)["resourceVersion"] = rv
	updated := f.Must(200, "PUT", cms+"/a", changed)
	if fieldAt(updated, "metadata.resourceVersion") == rv || fieldAt(updated, "metadata.generation") != nil {
		t.Fatalf("update did not move RV, or gave a ConfigMap a generation: %v", updated["metadata"])
	}
	if fieldAt(updated, "metadata.uid") != fieldAt(created, "metadata.uid") || fieldAt(updated, "metadata.creationTimestamp") != fieldAt(created, "metadata.creationTimestamp") {
		t.Fatalf("update lost uid or creationTimestamp: %v", updated["metadata"])
	}

	// Stale resourceVersion: 409, and the stored object is untouched.
	f.Status(f.Do("PUT", cms+"/a", changed), 409, "Conflict")
	if got := f.Must(200, "GET", cms+"/a", nil); fieldAt(got, "data.k") != "v2" {
		t.Fatalf("stored data changed by a rejected update: %v", got)
	}
	// Unconditional update (no resourceVersion) succeeds.
	f.Must(200, "PUT", cms+"/a", configMap("a", nil, map[string]string{"k": "v3"}))
	// Missing object, mismatched name, changed uid.
	f.Status(f.Do("PUT", cms+"/missing", configMap("missing", nil, nil)), 404, "NotFound")
	f.Status(f.Do("PUT", cms+"/a", configMap("b", nil, nil)), 400, "BadRequest")
	badUID := configMap("a", nil, nil)
	badUID["metadata"].(map[string]any)["uid"] = "not-the-uid"
	// As kube-apiserver 1.37.1: the uid of a PUT is a precondition.
	f.Status(f.Do("PUT", cms+"/a", badUID), 409, "Conflict")
}

func TestPatchTypes(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	f.Must(201, "POST", cms, configMap("a", map[string]string{"app": "x"}, map[string]string{"k": "v"}))
	got := f.Must(200, "PATCH", cms+"/a", `{"data":{"k2":"v2"}}`, "Content-Type", "application/merge-patch+json")
	if fieldAt(got, "data.k") != "v" || fieldAt(got, "data.k2") != "v2" {
		t.Fatalf("merge patch: %v", got["data"])
	}
	got = f.Must(200, "PATCH", cms+"/a", `[{"op":"remove","path":"/data/k"},{"op":"add","path":"/metadata/labels/tier","value":"web"}]`, "Content-Type", "application/json-patch+json")
	if fieldAt(got, "data.k") != nil || fieldAt(got, "metadata.labels.tier") != "web" {
		t.Fatalf("json patch: %v", got)
	}
	got = f.Must(200, "PATCH", cms+"/a", `{"data":{"k3":"v3"}}`, "Content-Type", "application/strategic-merge-patch+json")
	if fieldAt(got, "data.k3") != "v3" || fieldAt(got, "data.k2") != "v2" {
		t.Fatalf("strategic merge patch: %v", got["data"])
	}
	before := f.Must(200, "GET", cms+"/a", nil)
	f.Status(f.Do("PATCH", cms+"/a", `[{"op":"test","path":"/data/k2","value":"nope"}]`, "Content-Type", "application/json-patch+json"), 422, "Invalid")
	f.Status(f.Do("PATCH", cms+"/a", `{not json`, "Content-Type", "application/merge-patch+json"), 400, "BadRequest")
	f.Status(f.Do("PATCH", cms+"/a", `{"metadata":{"resourceVersion":"1"},"data":{"x":"y"}}`, "Content-Type", "application/merge-patch+json"), 409, "Conflict")
	f.Status(f.Do("PATCH", cms+"/a", `{}`, "Content-Type", "text/plain"), 415, "UnsupportedMediaType")
	f.Status(f.Do("PATCH", cms+"/missing", `{}`, "Content-Type", "application/merge-patch+json"), 404, "NotFound")
	after := f.Must(200, "GET", cms+"/a", nil)
	if fieldAt(after, "metadata.resourceVersion") != fieldAt(before, "metadata.resourceVersion") {
		t.Fatal("a rejected patch changed the object")
	}
	// Strategic merge is refused for types without a patch strategy.
	f.Must(201, "POST", "/apis/example.com/v1/namespaces/ns1/widgets", map[string]any{"metadata": map[string]any{"name": "w"}, "spec": map[string]any{"color": "red"}})
	f.Status(f.Do("PATCH", "/apis/example.com/v1/namespaces/ns1/widgets/w", `{"spec":{}}`, "Content-Type", "application/strategic-merge-patch+json"), 415, "UnsupportedMediaType")
}

func TestDeleteAndPreconditions(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	created := f.Must(201, "POST", cms, configMap("a", nil, nil))
	f.Status(f.Do("DELETE", cms+"/a", `{"preconditions":{"uid":"wrong"}}`), 409, "Conflict")
	f.Status(f.Do("DELETE", cms+"/a", `{"preconditions":{"resourceVersion":"1"}}`), 409, "Conflict")
	f.Status(f.Do("DELETE", cms+"/a", `{"propagationPolicy":"Sideways"}`), 422, "Invalid")
	f.Must(200, "DELETE", cms+"/a?dryRun=All", nil)
	f.Must(200, "GET", cms+"/a", nil)
	got := f.Must(200, "DELETE", cms+"/a", fmt.Sprintf(`{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background","preconditions":{"uid":%q}}`, fieldAt(created, "metadata.uid")))
	// As kube-apiserver's ConfigMap storage: a Status naming what went
	// (a Pod's or Service's storage returns the object).
	if got["kind"] != "Status" || got["status"] != "Success" || fieldAt(got, "details.name") != "a" ||
		fieldAt(got, "details.kind") != "configmaps" || fieldAt(got, "details.uid") != fieldAt(created, "metadata.uid") {
		t.Fatalf("delete answered %v, want a Status Success naming the ConfigMap", got)
	}
	f.Status(f.Do("GET", cms+"/a", nil), 404, "NotFound")
	f.Status(f.Do("DELETE", cms+"/a", nil), 404, "NotFound")
}

func TestDeleteWithFinalizers(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	cm := configMap("a", nil, nil)
	cm["metadata"].(map[string]any)["finalizers"] = []string{"example.com/hold"}
	f.Must(201, "POST", cms, cm)
	// kube-apiserver answers 200 while finalizers keep the object, and 202
	// only when orphanDependents=false asked for cascading deletion.
	marked := f.Must(200, "DELETE", cms+"/a", nil)
	if fieldAt(marked, "metadata.deletionTimestamp") == nil || fieldAt(marked, "metadata.deletionGracePeriodSeconds") != 0.0 {
		t.Fatalf("not marked for deletion: %v", marked["metadata"])
	}
	f.Must(202, "DELETE", cms+"/a?orphanDependents=false", nil)
	// No new finalizers on an object being deleted.
	f.Status(f.Do("PATCH", cms+"/a", `{"metadata":{"finalizers":["example.com/hold","example.com/more"]}}`, "Content-Type", "application/merge-patch+json"), 422, "Invalid")
	// Removing the last finalizer removes the object.
	f.Must(200, "PATCH", cms+"/a", `{"metadata":{"finalizers":null}}`, "Content-Type", "application/merge-patch+json")
	f.Status(f.Do("GET", cms+"/a", nil), 404, "NotFound")
}

func TestStatusSubresource(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	const w = "/apis/example.com/v1/namespaces/ns1/widgets"
	created := f.Must(201, "POST", w, map[string]any{"metadata": map[string]any{"name": "w"}, "spec": map[string]any{"size": 1}, "status": map[string]any{"ready": true}})
	if created["status"] != nil {
		t.Fatalf("status kept on create of a type with /status: %v", created["status"])
	}
	f.Must(200, "PUT", w+"/w/status", map[string]any{"metadata": map[string]any{"name": "w"}, "status": map[string]any{"ready": true}})
	st := f.Must(200, "PATCH", w+"/w/status", `{"status":{"ready":false},"spec":{"size":9}}`, "Content-Type", "application/merge-patch+json")
	if fieldAt(st, "status.ready") != false || fieldAt(st, "spec.size") != 1.0 || fieldAt(st, "metadata.generation") != 1.0 {
		t.Fatalf("status patch changed more than status: %v", st)
	}
	main := f.Must(200, "PATCH", w+"/w", `{"status":{"ready":true},"spec":{"size":2}}`, "Content-Type", "application/merge-patch+json")
	if fieldAt(main, "status.ready") != false || fieldAt(main, "spec.size") != 2.0 || fieldAt(main, "metadata.generation") != 2.0 {
		t.Fatalf("main patch: %v", main)
	}
	f.Must(200, "GET", w+"/w/status", nil)
	f.Status(f.Do("GET", cms+"/x/status", nil), 404, "NotFound")
}

func TestDryRun(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	f.Must(201, "POST", cms+"?dryRun=All", configMap("a", nil, nil))
	f.Status(f.Do("GET", cms+"/a", nil), 404, "NotFound")
	f.Must(201, "POST", cms, configMap("a", nil, map[string]string{"k": "v"}))
	f.Must(200, "PUT", cms+"/a?dryRun=All", configMap("a", nil, map[string]string{"k": "dry"}))
	f.Must(200, "PATCH", cms+"/a?dryRun=All", `{"data":{"k":"dry"}}`, "Content-Type", "application/merge-patch+json")
	if got := f.Must(200, "GET", cms+"/a", nil); fieldAt(got, "data.k") != "v" {
		t.Fatalf("dry run wrote: %v", got)
	}
	f.Status(f.Do("POST", cms+"?dryRun=Some", configMap("b", nil, nil)), 422, "Invalid")
}

func TestListSelectorsAndPagination(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns12"))
	for i := 0; i < 7; i++ {
		tier := "web"
		if i%2 == 1 {
			tier = "db"
		}
		f.Must(201, "POST", cms, configMap(fmt.Sprintf("cm%d", i), map[string]string{"tier": tier}, nil))
	}
	f.Must(201, "POST", "/api/v1/namespaces/ns12/configmaps", configMap("other", map[string]string{"tier": "web"}, nil))

	names := func(l map[string]any) []string {
		var out []string
		for _, it := range l["items"].([]any) {
			out = append(out, fieldAt(it.(map[string]any), "metadata.name").(string))
		}
		return out
	}
	l := f.Must(200, "GET", cms+"?labelSelector=tier%3Ddb", nil)
	if got := strings.Join(names(l), ","); got != "cm1,cm3,cm5" {
		t.Fatalf("label selector: %s", got)
	}
	if l["kind"] != "ConfigMapList" || l["apiVersion"] != "v1" || fieldAt(l, "metadata.resourceVersion") == "" {
		t.Fatalf("list envelope: %v", l)
	}
	l = f.Must(200, "GET", cms+"?labelSelector=tier+notin+(db),tier", nil)
	if got := strings.Join(names(l), ","); got != "cm0,cm2,cm4,cm6" {
		t.Fatalf("notin selector: %s", got)
	}
	l = f.Must(200, "GET", cms+"?fieldSelector=metadata.name%21%3Dcm0", nil)
	if len(names(l)) != 6 {
		t.Fatalf("field selector !=: %v", names(l))
	}
	l = f.Must(200, "GET", "/api/v1/configmaps?labelSelector=tier%3Dweb", nil)
	if len(names(l)) != 5 {
		t.Fatalf("all-namespaces list: %v", names(l))
	}
	f.Status(f.Do("GET", cms+"?fieldSelector=data.k%3Dv", nil), 400, "BadRequest")
	f.Status(f.Do("GET", cms+"?labelSelector=%3D%3D%3D", nil), 400, "BadRequest")

	var all []string
	cont := ""
	pages := 0
	for {
		path := cms + "?limit=3"
		if cont != "" {
			path += "&continue=" + cont
		}
		page := f.Must(200, "GET", path, nil)
		pages++
		all = append(all, names(page)...)
		c, _ := fieldAt(page, "metadata.continue").(string)
		if c == "" {
			break
		}
		if pages == 1 {
			if fieldAt(page, "metadata.remainingItemCount") != 4.0 {
				t.Fatalf("remainingItemCount = %v", fieldAt(page, "metadata.remainingItemCount"))
			}
			// A write between pages does not show up: pages are pinned.
			f.Must(201, "POST", cms, configMap("cm9", nil, nil))
		}
		cont = c
	}
	if pages != 3 || strings.Join(all, ",") != "cm0,cm1,cm2,cm3,cm4,cm5,cm6" {
		t.Fatalf("pages=%d items=%v", pages, all)
	}
	f.Status(f.Do("GET", cms+"?limit=2&continue=garbage", nil), 400, "BadRequest")
	f.Status(f.Do("GET", cms+"?resourceVersionMatch=Exact", nil), 422, "Invalid")
	f.Status(f.Do("GET", cms+"?resourceVersion=abc", nil), 400, "BadRequest")
}

func TestDeleteCollection(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	for i, tier := range []string{"web", "db", "web"} {
		f.Must(201, "POST", cms, configMap(fmt.Sprintf("cm%d", i), map[string]string{"tier": tier}, nil))
	}
	got := f.Must(200, "DELETE", cms+"?labelSelector=tier%3Dweb", nil)
	if n := len(got["items"].([]any)); n != 2 {
		t.Fatalf("deleted %d, want 2", n)
	}
	l := f.Must(200, "GET", cms, nil)
	if n := len(l["items"].([]any)); n != 1 {
		t.Fatalf("%d left, want 1", n)
	}
}

func TestYAMLBothWays(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	body := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yml\ndata:\n  k: v\n"
	r := f.Do("POST", cms, body, "Content-Type", "application/yaml", "Accept", "application/yaml")
	if r.Code != 201 || r.Header.Get("Content-Type") != "application/yaml" {
		t.Fatalf("yaml create: %d %s %s", r.Code, r.Header.Get("Content-Type"), r.Body)
	}
	var m map[string]any
	if err := yaml.Unmarshal(r.Body, &m); err != nil || fieldAt(m, "data.k") != "v" {
		t.Fatalf("yaml answer: %v %s", err, r.Body)
	}
	r = f.Do("GET", cms+"/missing", nil, "Accept", "application/yaml")
	if r.Code != 404 || !strings.Contains(string(r.Body), "reason: NotFound") {
		t.Fatalf("yaml Status: %d %s", r.Code, r.Body)
	}
	pretty := f.Do("GET", cms+"/yml?pretty=true", nil)
	if !strings.Contains(string(pretty.Body), "\n  \"metadata\"") {
		t.Fatalf("pretty output not indented: %s", pretty.Body)
	}
}

func TestNegotiation(t *testing.T) {
	f := newFixture(t)
	f.Status(f.Do("GET", "/api/v1/namespaces", nil, "Accept", "text/html"), 406, "NotAcceptable")
	// Custom types are JSON-only (protobuf alone: TestProtobufEdges).
	f.Must(200, "GET", "/apis/example.com/v1/widgets", nil, "Accept", "application/vnd.kubernetes.protobuf, application/json")
	f.Status(f.Do("GET", "/api/v1/nothings", nil), 404, "NotFound")
	f.Status(f.Do("GET", "/apis/example.com/v9/widgets", nil), 404, "NotFound")
	f.Status(f.Do("GET", "/api/v1/namespaces/ns1/namespaces", nil), 404, "NotFound") // cluster-scoped under a namespace
	f.Status(f.Do("GET", "/api/v1/configmaps/a", nil), 404, "NotFound")              // namespaced object without namespace
	f.Status(f.Do("POST", "/api/v1/configmaps", configMap("a", nil, nil)), 405, "MethodNotAllowed")
	f.Status(f.Do("DELETE", "/api/v1/namespaces", nil), 405, "MethodNotAllowed") // no deletecollection on namespaces
	f.Status(f.Do("POST", "/api/v1/namespaces/ns1/configmaps/a", configMap("a", nil, nil)), 405, "MethodNotAllowed")
	f.Status(f.Do("POST", "/api/v1/namespaces", "x: y", "Content-Type", "text/plain"), 415, "UnsupportedMediaType")
}

func TestBodyLimits(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	big := fmt.Sprintf(`{"metadata":{"name":"big"},"data":{"k":"%s"}}`, strings.Repeat("x", 3<<20))
	f.Status(f.Do("POST", cms, big), 413, "RequestEntityTooLarge")
	f.Status(f.Do("POST", cms, `{"metadata":{"name":"t"`), 400, "BadRequest")
	f.Status(f.Do("POST", cms, `{"metadata":{"name":5}}`), 400, "BadRequest")
	f.Status(f.Do("POST", cms, `[1,2]`), 400, "BadRequest")
	f.Status(f.Do("POST", cms, ``), 400, "BadRequest")
	deep := strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000)
	f.Status(f.Do("POST", cms, `{"metadata":{"name":"d"},"data":`+deep+`}`), 400, "BadRequest")
	bomb := "a: &a [\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\"]\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		bomb += fmt.Sprintf("%s: &%s [*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s]\n", n, n, prev, prev, prev, prev, prev, prev, prev, prev, prev)
		prev = n
	}
	f.Status(f.Do("POST", cms, bomb, "Content-Type", "application/yaml"), 400, "BadRequest")
	if l := f.Must(200, "GET", cms, nil); len(l["items"].([]any)) != 0 {
		t.Fatalf("bad input stored something: %v", l)
	}
}

func TestContinueTokenCompacted(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	for i := 0; i < 3; i++ {
		f.Must(201, "POST", cms, configMap(fmt.Sprintf("cm%d", i), nil, nil))
	}
	page := f.Must(200, "GET", cms+"?limit=1", nil)
	cont := fieldAt(page, "metadata.continue").(string)
	last := f.Must(201, "POST", cms, configMap("cm9", nil, nil))
	rv, _ := strconv.ParseInt(fieldAt(last, "metadata.resourceVersion").(string), 10, 64)
	if err := etcd3test.Compact(context.Background(), f.client, rv); err != nil {
		t.Fatal(err)
	}
	// kube-apiserver's answer, with a token that goes on from the same
	// key at the latest revision.
	st := f.Status(f.Do("GET", cms+"?limit=1&continue="+cont, nil), 410, "Expired")
	if msg := st["message"].(string); msg != "The provided continue parameter is too old to display a consistent list result. "+
		"You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. "+
		"Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list." {
		t.Fatalf("message = %q", msg)
	}
	latest, _ := fieldAt(st, "metadata.continue").(string)
	if latest == "" {
		t.Fatalf("410 for a compacted continue token carries no token to go on with: %v", st)
	}
	next := f.Must(200, "GET", cms+"?limit=1&continue="+latest, nil)
	if items := next["items"].([]any); len(items) != 1 || fieldAt(items[0].(map[string]any), "metadata.name") != "cm1" {
		t.Fatalf("page after the offered token = %v, want cm1", items)
	}
	if got := fieldAt(next, "metadata.resourceVersion"); got != fieldAt(last, "metadata.resourceVersion") {
		t.Fatalf("page after the offered token is at resourceVersion %v, want the latest, %v", got, fieldAt(last, "metadata.resourceVersion"))
	}
	// An Exact list at the compacted revision: kube's words for it.
	st = f.Status(f.Do("GET", cms+"?resourceVersionMatch=Exact&resourceVersion="+fieldAt(page, "metadata.resourceVersion").(string), nil), 410, "Expired")
	if msg := st["message"]; msg != "The resourceVersion for the provided list is too old." {
		t.Fatalf("Exact list at a compacted revision: message %q", msg)
	}
}

// TestJSONPatchAsKube: which JSON patches fail, and how, are kube's JSON
// patch library's rules as kube-apiserver's patch handler applies them
// (each case's answer read from kube-apiserver 1.37.1 for the same
// request): a body that is not a list of operations is 400; an operation
// is only read when applied, so a bad op, a missing path or op, or a
// failed test is 422 with kube's generic message, and leaves the object
// as it was; what the library lets through (replace of a missing key, add
// without a value, copy from a missing path) applies.
func TestJSONPatchAsKube(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	f.Must(201, "POST", cms, configMap("a", nil, map[string]string{"k": "v"}))
	jp := []string{"Content-Type", "application/json-patch+json"}
	before := f.Must(200, "GET", cms+"/a", nil)
	for _, p := range []string{
		`[{"op":"bogus","path":"/data/k","value":"2"}]`,
		`[{"op":"add","value":"9"}]`,
		`[{"path":"/data/b","value":"9"}]`,
		`[{"op":"test","path":"/data/k","value":"nope"}]`,
		`[{"op":"remove","path":"/data/missing"}]`,
		`[{"op":"move","from":"/data/missing","path":"/data/b"}]`,
		// kube-apiserver 1.37.1's JSON patch library panics on this one
		// and drops the connection; miniapi answers it as the others.
		`[{"op":"replace","path":""}]`,
	} {
		st := f.Status(f.Do("PATCH", cms+"/a", p, jp...), 422, "Invalid")
		if st["message"] != "the server rejected our request due to an error in our request" {
			t.Errorf("%s: message %q, want kube's generic one", p, st["message"])
		}
	}
	for _, p := range []string{`{"op":"add","path":"/data/b","value":"9"}`, `[1]`, `[{"op":"add","path":`} {
		f.Status(f.Do("PATCH", cms+"/a", p, jp...), 400, "BadRequest")
	}
	if after := f.Must(200, "GET", cms+"/a", nil); fieldAt(after, "metadata.resourceVersion") != fieldAt(before, "metadata.resourceVersion") {
		t.Fatal("a refused patch changed the object")
	}
	got := f.Must(200, "PATCH", cms+"/a", `[{"op":"replace","path":"/data/r","value":"1"},{"op":"copy","from":"/data/missing","path":"/data/c"},{"op":"add","path":"/data/n"}]`, jp...)
	if fieldAt(got, "data.r") != "1" {
		t.Errorf("replace of a missing key: data %v, want r=1 as kube-apiserver", got["data"])
	}
	if _, ok := got["data"].(map[string]any)["c"]; !ok {
		t.Errorf("copy from a missing path: data %v, want c added as kube-apiserver", got["data"])
	}
}

// TestQueryOptionsAsKube: list, watch and delete options in the query are
// read by kube's parameter codec and conversions, so what kube-apiserver
// 1.37.1 answered for each of these queries is what miniapi answers: a
// boolean is true unless "false" or "0" (watch=maybe watches,
// orphanDependents=maybe orphans), a malformed number or selector is 400
// with kube's message, a negative timeoutSeconds is no error.
func TestQueryOptionsAsKube(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	f.Must(201, "POST", cms, configMap("a", nil, map[string]string{"k": "v"}))
	badRequest := map[string]string{
		"?limit=abc":                 `strconv.ParseInt: parsing "abc": invalid syntax`,
		"?limit=":                    `strconv.ParseInt: parsing "": invalid syntax`,
		"?timeoutSeconds=abc":        `strconv.ParseInt: parsing "abc": invalid syntax`,
		"?labelSelector=a%20b":       `unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt`,
		"?fieldSelector=a%3D%3D%3Db": `invalid field selector: unescaped character in value: 61`,
	}
	for q, msg := range badRequest {
		if st := f.Status(f.Do("GET", cms+q, nil), 400, "BadRequest"); st["message"] != msg {
			t.Errorf("GET %s: message %q, want kube's %q", q, st["message"], msg)
		}
	}
	for _, q := range []string{"?allowWatchBookmarks=zz", "?timeoutSeconds=-1", "?watch=0", "?watch=FALSE"} {
		if got := f.Must(200, "GET", cms+q, nil); got["kind"] != "ConfigMapList" {
			t.Errorf("GET %s: %v, want a list", q, got["kind"])
		}
	}
	f.Status(f.Do("GET", cms+"?sendInitialEvents=zz", nil), 422, "Invalid")
	if r := f.Do("GET", cms+"?watch=maybe&timeoutSeconds=1", nil); r.Code != 200 || !strings.Contains(string(r.Body), `"type":"ADDED"`) {
		t.Errorf("watch=maybe: %d %.200s, want a watch", r.Code, r.Body)
	}
	if st := f.Status(f.Do("DELETE", cms+"/a?gracePeriodSeconds=abc", nil), 400, "BadRequest"); st["message"] != `strconv.ParseInt: parsing "abc": invalid syntax` {
		t.Errorf("gracePeriodSeconds=abc: message %q", st["message"])
	}
	f.Must(200, "DELETE", cms+"/a?orphanDependents=maybe", nil)
}

// TestPatchBodiesAsKube: what kube-apiserver 1.37.1 answered for each of
// these patch bodies, checked before any is applied: a body that is not
// JSON, of any patch type; a merge patch that is not an object (with
// fieldValidation Warn, the default, or Ignore).
func TestPatchBodiesAsKube(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	f.Must(201, "POST", cms, configMap("a", nil, map[string]string{"k": "v"}))
	cases := []struct{ patchType, query, body, msg string }{
		{"application/merge-patch+json", "", `{not json`, "invalid JSON patch"},
		{"application/json-patch+json", "", `[{"op":"add","path":`, "invalid JSON patch"},
		{"application/strategic-merge-patch+json", "", `{not json`, "invalid JSON patch"},
		{"application/merge-patch+json", "", `"x"`, "error decoding patch: json: cannot unmarshal string into Go value of type map[string]interface {}"},
		{"application/merge-patch+json", "?fieldValidation=Ignore", `"x"`, "Invalid JSON Patch"},
		{"application/merge-patch+json", "", `null`, "Invalid JSON Patch"},
		{"application/json-patch+json", "?fieldValidation=Ignore", `{"op":"add"}`, "json: cannot unmarshal object into Go value of type jsonpatch.Patch"},
		{"application/strategic-merge-patch+json", "", `[1]`, "json: cannot unmarshal array into Go value of type map[string]interface {}"},
	}
	for _, c := range cases {
		st := f.Status(f.Do("PATCH", cms+"/a"+c.query, c.body, "Content-Type", c.patchType), 400, "BadRequest")
		if st["message"] != c.msg {
			t.Errorf("%s %s%s: message %q, want kube's %q", c.patchType, c.body, c.query, st["message"], c.msg)
		}
	}
}

// TestContinueAndResourceVersionAsKube: what kube-apiserver 1.37.1
// answered for these continue tokens and resourceVersions (its own
// DecodeContinue and versioner now read them here too). A token whose
// revision is negative reads the latest state; a watch ignores a token
// when it names a resourceVersion and refuses one when it does not. A
// get or watch with a bad resourceVersion is the one difference: 500
// there, 400 here (the client's mistake), with the same words.
func TestContinueAndResourceVersionAsKube(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	f.Must(201, "POST", cms, configMap("c1", nil, nil))
	f.Must(201, "POST", cms, configMap("c2", nil, nil))
	tok := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	badRequest := []struct{ query, msg string }{
		{"?continue=abc!", "invalid continue token: continue key is not valid: illegal base64 data at input byte 3"},
		{"?continue=" + tok("xx"), "invalid continue token: continue key is not valid: invalid character 'x' looking for beginning of value"},
		{"?continue=" + tok(`{"v":"meta.k8s.io/v2","rv":5,"start":"a"}`), "invalid continue token: continue key is not valid: server does not recognize this encoded version meta.k8s.io/v2"},
		{"?continue=" + tok(`{"v":"meta.k8s.io/v1","rv":0,"start":"a"}`), "invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"},
		{"?continue=" + tok(`{"v":"meta.k8s.io/v1","rv":5,"start":""}`), "invalid continue token: continue key is not valid: encoded start key empty (version meta.k8s.io/v1)"},
		{"?continue=" + tok(`{"v":"meta.k8s.io/v1","rv":5,"start":"../x"}`), "invalid continue token: continue key is not valid: ../x"},
		{"?continue=abc!&resourceVersion=5", "invalid continue token: continue key is not valid: illegal base64 data at input byte 3"},
		{"?continue=" + tok(`{"v":"meta.k8s.io/v1","rv":-1,"start":"c2"}`) + "&resourceVersion=5", "specifying resource version is not allowed when using continue"},
		{"?resourceVersion=abc", `invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax`},
		{"?resourceVersion=-1&limit=1", `invalid resource version: resourceVersion: Invalid value: "-1": strconv.ParseUint: parsing "-1": invalid syntax`},
		{"?resourceVersion=%2B5&resourceVersionMatch=Exact", `invalid resource version: resourceVersion: Invalid value: "+5": strconv.ParseUint: parsing "+5": invalid syntax`},
		{"?resourceVersion=abc&watch=1", `invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax`},
		{"/c1?resourceVersion=-1", `invalid resource version: resourceVersion: Invalid value: "-1": strconv.ParseUint: parsing "-1": invalid syntax`},
	}
	for _, c := range badRequest {
		if st := f.Status(f.Do("GET", cms+c.query, nil), 400, "BadRequest"); st["message"] != c.msg {
			t.Errorf("GET %s: message %q, want kube's %q", c.query, st["message"], c.msg)
		}
	}
	names := func(l map[string]any) []string {
		var out []string
		for _, it := range l["items"].([]any) {
			out = append(out, it.(map[string]any)["metadata"].(map[string]any)["name"].(string))
		}
		return out
	}
	for _, c := range []struct {
		query string
		want  []string
		more  bool
	}{
		{"?continue=" + tok(`{"v":"meta.k8s.io/v1","rv":-1,"start":"c2"}`), []string{"c2"}, false},
		{"?continue=" + tok(`{"v":"meta.k8s.io/v1","rv":-1,"start":"/c2"}`), []string{"c2"}, false},
		{"?limit=1&continue=" + tok(`{"v":"meta.k8s.io/v1","rv":-1,"start":"c1"}`), []string{"c1"}, true},
	} {
		l := f.Must(200, "GET", cms+c.query, nil)
		next, _ := l["metadata"].(map[string]any)["continue"].(string)
		if got := names(l); !slices.Equal(got, c.want) || (next != "") != c.more {
			t.Errorf("GET %s: %v, continue %q; want %v, more %v", c.query, got, next, c.want, c.more)
		}
		if next != "" {
			// The next page is pinned to the revision the first read.
			if got := names(f.Must(200, "GET", cms+"?limit=1&continue="+next, nil)); !slices.Equal(got, []string{"c2"}) {
				t.Errorf("page after %s: %v, want [c2]", c.query, got)
			}
		}
	}
	st := f.Status(f.Do("GET", cms+"?watch=1&continue=abc!", nil), 422, "Invalid")
	if want := `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided`; st["message"] != want {
		t.Errorf("watch with a token: message %q, want kube's %q", st["message"], want)
	}
	if r := f.Do("GET", cms+"?watch=1&timeoutSeconds=1&resourceVersion=1&continue=abc!", nil); r.Code != 200 || !strings.Contains(string(r.Body), `"type":"ADDED"`) {
		t.Errorf("watch from a resourceVersion with a token: %d %.200s, want the watch", r.Code, r.Body)
	}
}

// TestDeleteAsKube: what kube-apiserver 1.37.1 answered for these
// deletes of a ConfigMap. Its delete handler decodes the body with its
// meta.k8s.io codecs (any format; a body that is only white space, or
// another kind, is refused in their words); it checks preconditions
// before anything is written, naming the kind; and its ConfigMap storage
// answers a removal with a Status Success, an object finalizers keep
// with the object.
func TestDeleteAsKube(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	created := f.Must(201, "POST", cms, configMap("a", nil, nil))
	uid := fieldAt(created, "metadata.uid").(string)
	for _, c := range []struct{ body, msg string }{
		{"  ", "couldn't get version/kind; json parse error: unexpected end of JSON input"},
		{`{"gracePeriodSeconds":"x"}`, "json: cannot unmarshal string into Go struct field DeleteOptions.gracePeriodSeconds of type int64"},
		{`{"kind":"Pod","apiVersion":"v1"}`, `no kind "Pod" is registered for version "v1" in scheme "pkg/runtime/scheme.go:111"`},
		{`[]`, `couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string "json:\"apiVersion,omitempty\""; Kind string "json:\"kind,omitempty\"" }`},
	} {
		if st := f.Status(f.Do("DELETE", cms+"/a", c.body), 400, "BadRequest"); st["message"] != c.msg {
			t.Errorf("DELETE with %q: message %q, want kube's %q", c.body, st["message"], c.msg)
		}
	}
	conflicts := []struct{ body, msg string }{
		{`{"preconditions":{"uid":"nope"}}`, fmt.Sprintf(`Operation cannot be fulfilled on ConfigMap "a": the UID in the precondition (nope) does not match the UID in record (%s). The object might have been deleted and then recreated`, uid)},
		{`{"preconditions":{"resourceVersion":"1"}}`, fmt.Sprintf(`Operation cannot be fulfilled on ConfigMap "a": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (%s). The object might have been modified`, fieldAt(created, "metadata.resourceVersion"))},
	}
	for _, c := range conflicts {
		st := f.Status(f.Do("DELETE", cms+"/a", c.body), 409, "Conflict")
		if st["message"] != c.msg || fieldAt(st, "details.kind") != "ConfigMap" {
			t.Errorf("DELETE with %s: %v, want kube's %q naming kind ConfigMap", c.body, st, c.msg)
		}
	}
	// A protobuf body, as client-go's typed clients send it.
	info, ok := runtime.SerializerInfoForMediaType(clientgoscheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok {
		t.Fatal("no protobuf serializer")
	}
	wrong := types.UID("nope")
	pb, err := runtime.Encode(clientgoscheme.Codecs.EncoderForVersion(info.Serializer, schema.GroupVersion{Version: "v1"}),
		&metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &wrong}})
	if err != nil {
		t.Fatal(err)
	}
	if st := f.Status(f.Do("DELETE", cms+"/a", pb, "Content-Type", runtime.ContentTypeProtobuf), 409, "Conflict"); st["message"] != conflicts[0].msg {
		t.Errorf("protobuf DeleteOptions: %v", st)
	}
	// YAML, and another group's DeleteOptions.
	if got := f.Must(200, "DELETE", cms+"/a", "dryRun: [All]\n", "Content-Type", "application/yaml"); got["status"] != "Success" {
		t.Errorf("dry-run delete in YAML answered %v, want a Status Success", got)
	}
	f.Must(200, "GET", cms+"/a", nil)
	// An object its finalizers keep is answered as it stands.
	f.Must(201, "POST", cms, configMap("held", nil, nil))
	f.Must(200, "PATCH", cms+"/held", `{"metadata":{"finalizers":["example.com/x"]}}`, "Content-Type", "application/merge-patch+json")
	if got := f.Must(200, "DELETE", cms+"/held", `{"apiVersion":"apps/v1","kind":"DeleteOptions"}`); got["kind"] != "ConfigMap" || fieldAt(got, "metadata.deletionTimestamp") == nil {
		t.Errorf("delete of a held ConfigMap answered %v, want the ConfigMap marked", got)
	}
	// Deleting an object storage cannot read: miniapi stores none, so
	// kube's storage's refusal for one it reads, or its 404; kube's rules
	// for the option's company; never on a collection.
	const unsafe = "ignoreStoreReadErrorWithClusterBreakingPotential=true"
	st := f.Status(f.Do("DELETE", cms+"/a?"+unsafe+"&dryRun=All", nil), 409, "Conflict")
	if msg, _ := st["message"].(string); !strings.HasSuffix(msg, "AdditionalErrorMsg: unsafe deletion is not allowed because the object is decodable from storage") ||
		!strings.HasPrefix(msg, `Operation cannot be fulfilled on configmaps "a": StorageError: invalid object, Code: 4, Key: `) {
		t.Errorf("unsafe delete: message %q", msg)
	}
	f.Status(f.Do("DELETE", cms+"/missing?"+unsafe, nil), 404, "NotFound")
	for q, msg := range map[string]string{
		cms + "?" + unsafe: `DeleteOptions.meta.k8s.io "" is invalid: ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: is not allowed with DELETECOLLECTION, try again after removing the option`,
		cms + "/a?" + unsafe + "&propagationPolicy=Orphan": `DeleteOptions.meta.k8s.io "" is invalid: ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .propagationPolicy`,
	} {
		if st := f.Status(f.Do("DELETE", q, nil), 422, "Invalid"); st["message"] != msg {
			t.Errorf("DELETE %s: message %q, want kube's %q", q, st["message"], msg)
		}
	}
	got := f.Must(200, "DELETE", cms+"/a", nil)
	if got["kind"] != "Status" || got["status"] != "Success" || fieldAt(got, "details.uid") != uid || fieldAt(got, "details.kind") != "configmaps" {
		t.Errorf("delete answered %v, want kube's Status Success naming the ConfigMap", got)
	}
}

// TestWrongTypeMetaAsKube: what kube-apiserver 1.37.1 answered for a
// ConfigMap created or replaced with a body of another apiVersion or
// kind: its decoder's words (a version or kind it does not know, a kind
// it cannot convert), and its handler's for the kind in another version.
func TestWrongTypeMetaAsKube(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	f.Must(201, "POST", cms, configMap("u1", nil, nil))
	for _, c := range []struct{ method, path, body, msg string }{
		{"POST", cms, `{"apiVersion":"v2","kind":"ConfigMap","metadata":{"name":"w"}}`, `ConfigMap in version "v2" cannot be handled as a ConfigMap: no kind "ConfigMap" is registered for version "v2" in scheme "pkg/runtime/scheme.go:111"`},
		{"POST", cms, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"w"}}`, `Secret in version "v1" cannot be handled as a ConfigMap: converting (v1.Secret) to (core.ConfigMap): unknown conversion`},
		{"POST", cms, `{"apiVersion":"v1","kind":"Bogus","metadata":{"name":"w"}}`, `Bogus in version "v1" cannot be handled as a ConfigMap: no kind "Bogus" is registered for version "v1" in scheme "pkg/runtime/scheme.go:111"`},
		{"POST", cms, `{"apiVersion":"apps/v1","kind":"ConfigMap","metadata":{"name":"w"}}`, `ConfigMap in version "v1" cannot be handled as a ConfigMap: no kind "ConfigMap" is registered for version "apps/v1" in scheme "pkg/runtime/scheme.go:111"`},
		{"POST", cms, `{"kind":"Secret","metadata":{"name":"w"}}`, `Secret in version "v1" cannot be handled as a ConfigMap: converting (v1.Secret) to (core.ConfigMap): unknown conversion`},
		{"PUT", cms + "/u1", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"u1"}}`, `Secret in version "v1" cannot be handled as a ConfigMap: converting (v1.Secret) to (core.ConfigMap): unknown conversion`},
		{"POST", "/apis/apps/v1/namespaces/ns1/deployments", `{"apiVersion":"apps/v1beta1","kind":"Deployment","metadata":{"name":"w"}}`, `the API version in the data (apps/v1beta1) does not match the expected API version (apps/v1)`},
	} {
		if st := f.Status(f.Do(c.method, c.path, c.body), 400, "BadRequest"); st["message"] != c.msg {
			t.Errorf("%s %s %s: message %q, want kube's %q", c.method, c.path, c.body, st["message"], c.msg)
		}
	}

	// A JSON or merge patch that changes them: kube's patch handler's
	// 422 naming the patched object, in its decoder's words. A strategic
	// merge patch cannot change them (200, the object unchanged), nor
	// does a JSON patch that removes one.
	const merge, jsonPatch, strategic = "application/merge-patch+json", "application/json-patch+json", "application/strategic-merge-patch+json"
	for _, c := range []struct{ contentType, patch, value, msg string }{
		{merge, `{"kind":"Bogus"}`, `"kind":"Bogus"`, `no kind "Bogus" is registered for version "v1" in scheme "pkg/runtime/scheme.go:111"`},
		{merge, `{"apiVersion":"v2"}`, `"apiVersion":"v2"`, `no kind "ConfigMap" is registered for version "v2" in scheme "pkg/runtime/scheme.go:111"`},
		{merge, `{"apiVersion":"apps/v1","kind":"Deployment"}`, `"kind":"Deployment"`, `converting (v1.Deployment) to (core.ConfigMap): unknown conversion`},
		{jsonPatch, `[{"op":"replace","path":"/kind","value":"Bogus"}]`, `"kind":"Bogus"`, `no kind "Bogus" is registered for version "v1" in scheme "pkg/runtime/scheme.go:111"`},
	} {
		st := f.Status(f.Do("PATCH", cms+"/u1", c.patch, "Content-Type", c.contentType), 422, "Invalid")
		msg, _ := st["message"].(string)
		if !strings.HasPrefix(msg, ` "" is invalid: patch: Invalid value: "{`) || !strings.HasSuffix(msg, `}": `+c.msg) || !strings.Contains(msg, strings.ReplaceAll(c.value, `"`, `\"`)) {
			t.Errorf("%s %s: message %q, want kube's 422 naming the patched object (with %s) and %q", c.contentType, c.patch, msg, c.value, c.msg)
		}
	}
	for _, c := range []struct{ contentType, patch string }{
		{strategic, `{"kind":"Bogus"}`},
		{strategic, `{"apiVersion":"v2","kind":"Secret"}`},
		{jsonPatch, `[{"op":"remove","path":"/kind"}]`},
	} {
		got := f.Must(200, "PATCH", cms+"/u1", c.patch, "Content-Type", c.contentType)
		if got["apiVersion"] != "v1" || got["kind"] != "ConfigMap" {
			t.Errorf("%s %s: answered %v %v, want v1 ConfigMap", c.contentType, c.patch, got["apiVersion"], got["kind"])
		}
	}
}

// TestDeleteCollectionAsKube: as kube-apiserver 1.37.1, a collection
// delete answers the list it deleted from (the objects as listed, one
// that finalizers keep without its deletionTimestamp, at the list's
// resourceVersion), and deletes each object with the request's options:
// a Pod bound to a node goes at once with gracePeriodSeconds=0.
func TestDeleteCollectionAsKube(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	f.Must(201, "POST", cms, configMap("a", map[string]string{"x": "y"}, nil))
	f.Must(201, "POST", cms, map[string]any{"metadata": map[string]any{"name": "held", "labels": map[string]any{"x": "y"}, "finalizers": []any{"example.com/f"}}})
	l := f.Must(200, "DELETE", cms+"?labelSelector=x%3Dy", nil)
	if rv, _ := fieldAt(l, "metadata.resourceVersion").(string); rv == "" {
		t.Errorf("collection delete answered no resourceVersion: %v", l["metadata"])
	}
	items, _ := l["items"].([]any)
	if len(items) != 2 {
		t.Fatalf("collection delete answered %d items, want 2", len(items))
	}
	for _, it := range items {
		if dt := fieldAt(it.(map[string]any), "metadata.deletionTimestamp"); dt != nil {
			t.Errorf("item %v answered with deletionTimestamp %v, want it as listed", fieldAt(it.(map[string]any), "metadata.name"), dt)
		}
	}
	if got := f.Must(200, "GET", cms+"/held", nil); fieldAt(got, "metadata.deletionTimestamp") == nil {
		t.Errorf("held ConfigMap not marked deleted: %v", got["metadata"])
	}
	pods := "/api/v1/namespaces/ns1/pods"
	f.Must(201, "POST", pods, map[string]any{"metadata": map[string]any{"name": "p"},
		"spec": map[string]any{"nodeName": "n1", "containers": []any{map[string]any{"name": "c", "image": "x"}}}})
	f.Must(200, "DELETE", pods+"?gracePeriodSeconds=0", nil)
	f.Status(f.Do("GET", pods+"/p", nil), 404, "NotFound")
}

// TestListItemsTypeMeta: as kube-apiserver writes them, the items of a
// built-in kind's list have no apiVersion or kind, and a custom
// resource's keep theirs, streamed, pretty-printed or not; the streamed
// list's Content-Length is its length.
func TestListItemsTypeMeta(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	f.Must(201, "POST", cms, configMap("a", nil, map[string]string{"k": "v"}))
	f.Must(201, "POST", cms, configMap("b", nil, nil))
	f.Must(201, "POST", widgets, map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"}})
	for _, c := range []struct {
		path     string
		typeMeta bool
	}{
		{cms, false}, {cms + "?pretty=true", false}, {cms + "?limit=1", false},
		{widgets, true}, {widgets + "?pretty=true", true},
	} {
		r := f.Do("GET", c.path, nil)
		if r.Code != 200 {
			t.Fatalf("GET %s = %d", c.path, r.Code)
		}
		if n, err := strconv.Atoi(r.Header.Get("Content-Length")); err == nil && n != len(r.Body) {
			t.Errorf("GET %s: Content-Length %d, body %d bytes", c.path, n, len(r.Body))
		}
		var l struct {
			Kind  string           `json:"kind"`
			Items []map[string]any `json:"items"`
		}
		if err := json.Unmarshal(r.Body, &l); err != nil || len(l.Items) == 0 {
			t.Fatalf("GET %s: %v %s", c.path, err, r.Body)
		}
		for _, it := range l.Items {
			_, hasKind := it["kind"]
			_, hasVersion := it["apiVersion"]
			if hasKind != c.typeMeta || hasVersion != c.typeMeta || it["metadata"] == nil {
				t.Errorf("GET %s: item %v, want apiVersion and kind %v", c.path, it, c.typeMeta)
			}
		}
	}
}
