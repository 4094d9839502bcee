package endpoints

import (
	"strings"
	"testing"
)

// TestDeleteQueryPreconditions: without a body, a delete's ?uid= and
// ?resourceVersion= are its preconditions, as kube's conversion of the
// query makes them: a stale one is 409 in kube's words and the object
// stays; a current one deletes it.
func TestDeleteQueryPreconditions(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", `{"metadata":{"name":"dq"}}`)
	cms := "/api/v1/namespaces/dq/configmaps"
	cm := f.Must(201, "POST", cms, `{"metadata":{"name":"a"}}`)
	rv, uid := field(cm, "metadata.resourceVersion").(string), field(cm, "metadata.uid").(string)
	st := f.Status(f.Do("DELETE", cms+"/a?resourceVersion=1", nil), 409, "Conflict")
	if want := `Operation cannot be fulfilled on ConfigMap "a": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (` + rv + `). The object might have been modified`; st["message"] != want {
		t.Errorf("stale resourceVersion: %v, want %s", st["message"], want)
	}
	st = f.Status(f.Do("DELETE", cms+"/a?uid=abc", nil), 409, "Conflict")
	if want := `the UID in the precondition (abc) does not match the UID in record (` + uid + `)`; !strings.Contains(st["message"].(string), want) {
		t.Errorf("stale uid: %v, want %s", st["message"], want)
	}
	f.Must(200, "GET", cms+"/a", nil)
	f.Must(200, "DELETE", cms+"/a?uid="+uid+"&resourceVersion="+rv, nil)
	f.Status(f.Do("GET", cms+"/a", nil), 404, "NotFound")
}

// TestDeleteCollectionPages: a collection delete lists as the client
// asked, as kube-apiserver's store does: with a limit it deletes the
// first page only and answers it with its continue token and the count
// left; ?resourceVersion= is both the list's and each delete's
// precondition (so a stale one deletes nothing); a bad continue token
// is 400.
func TestDeleteCollectionPages(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", `{"metadata":{"name":"dp"}}`)
	cms := "/api/v1/namespaces/dp/configmaps"
	for _, n := range []string{"a", "b", "c"} {
		f.Must(201, "POST", cms, `{"metadata":{"name":"`+n+`"}}`)
	}
	page := f.Must(200, "DELETE", cms+"?limit=1", nil)
	items := page["items"].([]any)
	if len(items) != 1 || field(items[0].(map[string]any), "metadata.name") != "a" ||
		field(page, "metadata.continue") == nil || field(page, "metadata.remainingItemCount") != float64(2) {
		t.Fatalf("first page deleted: %v", page)
	}
	names := func() []string {
		var out []string
		for _, it := range f.Must(200, "GET", cms, nil)["items"].([]any) {
			out = append(out, field(it.(map[string]any), "metadata.name").(string))
		}
		return out
	}
	if got := strings.Join(names(), ","); got != "b,c" {
		t.Fatalf("left after a page: %s, want b,c", got)
	}
	f.Status(f.Do("DELETE", cms+"?resourceVersion=0", nil), 409, "Conflict")
	f.Status(f.Do("DELETE", cms+"?continue=abc", nil), 400, "BadRequest")
	if got := strings.Join(names(), ","); got != "b,c" {
		t.Fatalf("left after refused deletes: %s, want b,c", got)
	}
	all := f.Must(200, "DELETE", cms, nil)
	if len(all["items"].([]any)) != 2 || field(all, "metadata.continue") != nil {
		t.Errorf("delete of the rest answered %v", all)
	}
	if got := names(); len(got) != 0 {
		t.Errorf("left: %v", got)
	}
}
