package handlers

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/miniapi/miniapi/registry"
)

// kubectlTable is the Accept header kubectl get sends.
const kubectlTable = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"

// gadgetType is a resources-file type with printer columns of every
// column type, one of them only for wide output.
var gadgetType = registry.Type{
	Group: "example.com", Version: "v1", Kind: "Gadget", Plural: "gadgets", Namespaced: true,
	PrinterColumns: []registry.PrinterColumn{
		{Name: "Color", Type: "string", JSONPath: ".spec.color", Description: "the colour"},
		{Name: "Size", Type: "integer", JSONPath: ".spec.size"},
		{Name: "Weight", Type: "number", JSONPath: ".spec.weight"},
		{Name: "Ready", Type: "boolean", JSONPath: ".status.ready"},
		{Name: "Tags", Type: "string", JSONPath: ".spec.tags", Priority: 1},
		{Name: "Missing", Type: "string", JSONPath: ".spec.nothing"},
		{Name: "Created", Type: "date", JSONPath: ".metadata.creationTimestamp"},
	},
}

func gadget(name string, spec map[string]any) map[string]any {
	return map[string]any{"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": map[string]any{"name": name}, "spec": spec, "status": map[string]any{"ready": true}}
}

// columnNames lists a Table's column names.
func columnNames(t *testing.T, tbl map[string]any) []string {
	t.Helper()
	defs, ok := tbl["columnDefinitions"].([]any)
	if !ok {
		t.Fatalf("no columnDefinitions: %v", tbl)
	}
	var names []string
	for _, d := range defs {
		names = append(names, d.(map[string]any)["name"].(string))
	}
	return names
}

func rows(t *testing.T, tbl map[string]any) []map[string]any {
	t.Helper()
	rs, ok := tbl["rows"].([]any)
	if !ok {
		t.Fatalf("no rows: %v", tbl)
	}
	out := make([]map[string]any, len(rs))
	for i, r := range rs {
		out[i] = r.(map[string]any)
	}
	return out
}

func TestTableBuiltin(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	for _, n := range []string{"a", "b", "c"} {
		f.Must(201, "POST", cms, configMap(n, map[string]string{"app": n}, map[string]string{"k": "v"}))
	}

	tbl := f.Must(200, "GET", cms, nil, "Accept", kubectlTable)
	if tbl["kind"] != "Table" || tbl["apiVersion"] != "meta.k8s.io/v1" {
		t.Fatalf("not a v1 Table: %v", tbl)
	}
	if got := columnNames(t, tbl); !reflect.DeepEqual(got, []string{"Name", "Data", "Age"}) {
		t.Fatalf("columns = %v", got)
	}
	name := tbl["columnDefinitions"].([]any)[0].(map[string]any)
	if name["type"] != "string" || name["format"] != "name" || name["priority"] != 0.0 || name["description"] == "" {
		t.Fatalf("Name column = %v", name)
	}
	if fieldAt(tbl, "metadata.resourceVersion") == nil {
		t.Fatalf("no list resourceVersion: %v", tbl["metadata"])
	}
	rs := rows(t, tbl)
	if len(rs) != 3 {
		t.Fatalf("%d rows", len(rs))
	}
	for i, r := range rs {
		cells := r["cells"].([]any)
		if cells[0] != []string{"a", "b", "c"}[i] {
			t.Fatalf("row %d cells = %v", i, cells)
		}
		if cells[1] != 1.0 {
			t.Fatalf("row %d Data = %v, want 1 key", i, cells[1])
		}
		if age := cells[2].(string); age != "0s" && age != "1s" && age != "2s" {
			t.Fatalf("age = %q", age)
		}
		obj := r["object"].(map[string]any)
		if obj["kind"] != "PartialObjectMetadata" || obj["apiVersion"] != "meta.k8s.io/v1" ||
			fieldAt(obj, "metadata.name") != cells[0] || fieldAt(obj, "metadata.labels.app") != cells[0] {
			t.Fatalf("row object = %v", obj)
		}
		if _, ok := obj["data"]; ok {
			t.Fatalf("metadata row object carries data: %v", obj)
		}
	}

	// Namespaces print their phase.
	nsTbl := f.Must(200, "GET", "/api/v1/namespaces/ns1", nil, "Accept", kubectlTable)
	if got := columnNames(t, nsTbl); !reflect.DeepEqual(got, []string{"Name", "Status", "Age"}) {
		t.Fatalf("namespace columns = %v", got)
	}
	if cells := rows(t, nsTbl)[0]["cells"].([]any); cells[0] != "ns1" || cells[1] != "Active" {
		t.Fatalf("namespace cells = %v", cells)
	}

	// One object is a one-row Table with the object's resourceVersion.
	cm := f.Must(200, "GET", cms+"/b", nil)
	one := f.Must(200, "GET", cms+"/b", nil, "Accept", "application/json;as=Table;v=v1beta1;g=meta.k8s.io")
	if one["apiVersion"] != "meta.k8s.io/v1beta1" || len(rows(t, one)) != 1 ||
		fieldAt(one, "metadata.resourceVersion") != fieldAt(cm, "metadata.resourceVersion") {
		t.Fatalf("one-object table = %v", one)
	}
	if po := rows(t, one)[0]["object"].(map[string]any); po["apiVersion"] != "meta.k8s.io/v1beta1" {
		t.Fatalf("v1beta1 table row object = %v", po)
	}

	// Pages keep their continue token and remaining count.
	page := f.Must(200, "GET", cms+"?limit=2", nil, "Accept", kubectlTable)
	if len(rows(t, page)) != 2 || fieldAt(page, "metadata.continue") == nil || fieldAt(page, "metadata.remainingItemCount") != 1.0 {
		t.Fatalf("page = %v", page["metadata"])
	}
	// Selectors apply as to any list.
	sel := f.Must(200, "GET", cms+"?labelSelector=app%3Dc", nil, "Accept", kubectlTable)
	if rs := rows(t, sel); len(rs) != 1 || rs[0]["cells"].([]any)[0] != "c" {
		t.Fatalf("selected rows = %v", rs)
	}
	// An empty list has no rows, not null.
	empty := f.Must(200, "GET", cms+"?labelSelector=app%3Dzzz", nil, "Accept", kubectlTable)
	if rs, ok := empty["rows"].([]any); !ok || len(rs) != 0 {
		t.Fatalf("empty table rows = %v", empty["rows"])
	}
}

func TestTableIncludeObject(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	f.Must(201, "POST", cms, configMap("a", nil, map[string]string{"k": "v"}))

	none := f.Must(200, "GET", cms+"?includeObject=None", nil, "Accept", kubectlTable)
	if r := rows(t, none)[0]; r["object"] != nil {
		t.Fatalf("includeObject=None row = %v", r)
	}
	whole := f.Must(200, "GET", cms+"?includeObject=Object", nil, "Accept", kubectlTable)
	obj := rows(t, whole)[0]["object"].(map[string]any)
	if obj["kind"] != "ConfigMap" || obj["apiVersion"] != "v1" || fieldAt(obj, "data.k") != "v" {
		t.Fatalf("includeObject=Object row object = %v", obj)
	}
	meta := f.Must(200, "GET", cms+"?includeObject=Metadata", nil, "Accept", kubectlTable)
	if po := rows(t, meta)[0]["object"].(map[string]any); po["kind"] != "PartialObjectMetadata" {
		t.Fatalf("includeObject=Metadata row object = %v", po)
	}
	st := f.Status(f.Do("GET", cms+"?includeObject=Everything", nil, "Accept", kubectlTable), 400, "BadRequest")
	if st["message"] != `Unable to convert to Table as requested: includeObject: Invalid value: "Everything": must be 'Metadata', 'Object', 'None', or empty` {
		t.Fatalf("message = %q", st["message"])
	}
	// Without a Table, includeObject means nothing.
	f.Must(200, "GET", cms+"?includeObject=Everything", nil)
}

func TestTablePrinterColumns(t *testing.T) {
	f := newFixture(t)
	if err := f.reg.Add(gadgetType); err != nil {
		t.Fatal(err)
	}
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	const gadgets = "/apis/example.com/v1/namespaces/ns1/gadgets"
	f.Must(201, "POST", gadgets, gadget("g1", map[string]any{
		"color": "red", "size": 3, "weight": 1.5, "tags": []string{"x", "y"},
	}))
	f.Must(201, "POST", gadgets, gadget("g2", map[string]any{"color": 7, "size": "big"}))

	tbl := f.Must(200, "GET", gadgets, nil, "Accept", kubectlTable)
	want := []string{"Name", "Color", "Size", "Weight", "Ready", "Tags", "Missing", "Created"}
	if got := columnNames(t, tbl); !reflect.DeepEqual(got, want) {
		t.Fatalf("columns = %v, want %v (declared columns are the table after Name)", got, want)
	}
	defs := tbl["columnDefinitions"].([]any)
	if d := defs[1].(map[string]any); d["description"] != "the colour" || d["type"] != "string" {
		t.Fatalf("Color column = %v", d)
	}
	if d := defs[2].(map[string]any); d["description"] != "Custom resource definition column (in JSONPath format): .spec.size" {
		t.Fatalf("Size column = %v", d)
	}
	if d := defs[5].(map[string]any); d["priority"] != 1.0 {
		t.Fatalf("Tags column = %v", d)
	}
	// A declared column on creationTimestamp is described as any other
	// declared column: only kube's default Age column has ObjectMeta's
	// words.
	if d := defs[7].(map[string]any); d["description"] != "Custom resource definition column (in JSONPath format): .metadata.creationTimestamp" {
		t.Fatalf("Created column = %v", d)
	}
	rs := rows(t, tbl)
	c1 := rs[0]["cells"].([]any)
	if c1[0] != "g1" || c1[1] != "red" || c1[2] != 3.0 || c1[3] != 1.5 || c1[4] != true ||
		c1[5] != `["x","y"]` || c1[6] != nil {
		t.Fatalf("g1 cells = %#v", c1)
	}
	if s, _ := c1[7].(string); s == "" || s == "<unknown>" || s == "<invalid>" {
		t.Fatalf("g1 Created = %#v", c1[7])
	}
	// Values of the wrong type: a number shown in a string column is
	// printed; a string in an integer column is null, as kube-apiserver.
	c2 := rs[1]["cells"].([]any)
	if c2[1] != "7" || c2[2] != nil || c2[3] != nil {
		t.Fatalf("g2 cells = %#v", c2)
	}

	// A type without printer columns gets Name and Age.
	f.Must(201, "POST", "/apis/example.com/v1/namespaces/ns1/widgets", map[string]any{"metadata": map[string]any{"name": "w"}})
	wt := f.Must(200, "GET", "/apis/example.com/v1/namespaces/ns1/widgets", nil, "Accept", kubectlTable)
	if got := columnNames(t, wt); !reflect.DeepEqual(got, []string{"Name", "Age"}) {
		t.Fatalf("widget columns = %v", got)
	}
	if d := wt["columnDefinitions"].([]any)[1].(map[string]any); d["type"] != "date" || d["description"] != metaDocs["creationTimestamp"] {
		t.Fatalf("default Age column = %v", d)
	}
}

// watchStream opens a watch and returns a function reading its next
// frame; the request ends before the fixture shuts down.
func (f *fixture) watchStream(path string, headers ...string) (next func() map[string]any, resp *http.Response) {
	f.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", f.url+path, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() {
		cancel()
		resp.Body.Close()
	})
	frames := make(chan map[string]any, 16)
	go func() {
		defer close(frames)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				return
			}
			frames <- m
		}
	}()
	return func() map[string]any {
		f.t.Helper()
		select {
		case m, ok := <-frames:
			if !ok {
				f.t.Fatal("watch ended")
			}
			return m
		case <-time.After(10 * time.Second):
			f.t.Fatal("no watch event within 10s")
		}
		return nil
	}, resp
}

func TestTableWatch(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	// As kubectl get -w: list, then watch from the list's revision.
	list := f.Must(200, "GET", cms, nil, "Accept", kubectlTable)
	next, resp := f.watchStream(cms+"?watch=true&resourceVersion="+fieldAt(list, "metadata.resourceVersion").(string), "Accept", kubectlTable)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type = %q", ct)
	}
	f.Must(201, "POST", cms, configMap("a", nil, nil))
	first := next()
	if first["type"] != "ADDED" {
		t.Fatalf("first event = %v", first)
	}
	tbl := first["object"].(map[string]any)
	if tbl["kind"] != "Table" || !reflect.DeepEqual(columnNames(t, tbl), []string{"Name", "Data", "Age"}) {
		t.Fatalf("first table = %v", tbl)
	}
	if rs := rows(t, tbl); len(rs) != 1 || rs[0]["cells"].([]any)[0] != "a" {
		t.Fatalf("first rows = %v", rs)
	}
	f.Must(201, "POST", cms, configMap("b", nil, nil))
	f.Must(200, "DELETE", cms+"/a", nil)
	for _, want := range []struct{ typ, name string }{{"ADDED", "b"}, {"DELETED", "a"}} {
		ev := next()
		tbl := ev["object"].(map[string]any)
		if ev["type"] != want.typ || tbl["kind"] != "Table" {
			t.Fatalf("event = %v, want %s Table", ev, want.typ)
		}
		if cd, ok := tbl["columnDefinitions"]; !ok || cd != nil {
			t.Fatalf("later frame has columnDefinitions %v", cd)
		}
		rs := rows(t, tbl)
		if len(rs) != 1 || rs[0]["cells"].([]any)[0] != want.name || fieldAt(tbl, "metadata.resourceVersion") == nil {
			t.Fatalf("%s table = %v", want.typ, tbl)
		}
	}
}

func TestConversionErrors(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	f.Must(201, "POST", cms, configMap("a", nil, nil))
	// Errors stay Status, whatever the conversion asked for.
	r := f.Do("GET", cms+"/missing", nil, "Accept", kubectlTable)
	if f.Status(r, 404, "NotFound"); r.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("error Content-Type = %q", r.Header.Get("Content-Type"))
	}
	// Conversions miniapi cannot produce are skipped; with nothing else
	// acceptable that is 406.
	f.Status(f.Do("GET", cms, nil, "Accept", "application/json;as=Deployment;g=apps;v=v1"), 406, "NotAcceptable")
	f.Status(f.Do("GET", cms, nil, "Accept", "application/json;as=Table;g=meta.k8s.io;v=v2"), 406, "NotAcceptable")
	f.Status(f.Do("GET", cms+"?watch=true", nil, "Accept", "application/json;as=Bogus;g=meta.k8s.io;v=v1"), 406, "NotAcceptable")
	// A list conversion for one object and the reverse are 406.
	st := f.Status(f.Do("GET", cms+"/a", nil, "Accept", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"), 406, "NotAcceptable")
	// kube's words name the internal Go type.
	if st["message"] != "you requested PartialObjectMetadataList, but the requested object is not a list (*core.ConfigMap)" {
		t.Fatalf("message = %q", st["message"])
	}
	f.Status(f.Do("GET", cms, nil, "Accept", "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"), 406, "NotAcceptable")
	// Writes answer in the requested conversion too.
	created := f.Must(201, "POST", cms, configMap("b", nil, nil), "Accept", kubectlTable)
	if created["kind"] != "Table" || rows(t, created)[0]["cells"].([]any)[0] != "b" {
		t.Fatalf("create as Table = %v", created)
	}
	// YAML Tables are JSON Tables in YAML.
	y := f.Do("GET", cms, nil, "Accept", "application/yaml;as=Table;g=meta.k8s.io;v=v1")
	if y.Code != 200 || y.Header.Get("Content-Type") != "application/yaml" || !strings.Contains(string(y.Body), "kind: Table") || !strings.Contains(string(y.Body), "columnDefinitions:") {
		t.Fatalf("YAML table: %d %s", y.Code, y.Body)
	}
}
