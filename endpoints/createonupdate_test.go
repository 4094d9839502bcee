package endpoints

import (
	"strings"
	"testing"
)

// TestCreateOnUpdate: a PUT of a missing object creates it (201) for the
// kinds kube-apiserver's strategies allow it (a Lease), with
// a resourceVersion sent ignored, as kube's store ignores it, and a dry
// run storing nothing; for the others (a ConfigMap) it is 404. A uid in
// a PUT is kube's update precondition: 409 when it is not the object's,
// or when there is no object.
func TestCreateOnUpdate(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", `{"metadata":{"name":"cu"}}`)
	leases := "/apis/coordination.k8s.io/v1/namespaces/cu/leases"
	lease := func(name, meta string) string {
		return `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"` + name + `"` + meta + `},"spec":{"holderIdentity":"a"}}`
	}
	f.Must(201, "PUT", leases+"/dry?dryRun=All", lease("dry", ""))
	f.Status(f.Do("GET", leases+"/dry", nil), 404, "NotFound")
	created := f.Must(201, "PUT", leases+"/l", lease("l", `,"resourceVersion":"5"`))
	if field(created, "metadata.uid") == nil || field(created, "metadata.resourceVersion") == "5" {
		t.Errorf("created %v", created)
	}
	got := f.Must(200, "GET", leases+"/l", nil)
	if field(got, "spec.holderIdentity") != "a" {
		t.Errorf("stored %v", got)
	}
	// An update of it is one: a Lease's names its resourceVersion.
	f.Must(200, "PUT", leases+"/l", lease("l", `,"resourceVersion":"`+field(created, "metadata.resourceVersion").(string)+`"`))
	st := f.Status(f.Do("PUT", leases+"/m", lease("m", `,"uid":"1234"`)), 409, "Conflict")
	if want := "Precondition failed: UID in precondition: 1234, UID in object meta: "; !strings.HasSuffix(st["message"].(string), want) {
		t.Errorf("missing lease with a uid: %v, want ...%s", st["message"], want)
	}
	f.Status(f.Do("GET", leases+"/m", nil), 404, "NotFound")

	cms := "/api/v1/namespaces/cu/configmaps"
	f.Status(f.Do("PUT", cms+"/c", `{"metadata":{"name":"c"}}`), 404, "NotFound")
	cm := f.Must(201, "POST", cms, `{"metadata":{"name":"c"}}`)
	uid := field(cm, "metadata.uid").(string)
	st = f.Status(f.Do("PUT", cms+"/c", `{"metadata":{"name":"c","uid":"1234"},"data":{"a":"b"}}`), 409, "Conflict")
	if want := "UID in precondition: 1234, UID in object meta: " + uid; !strings.HasSuffix(st["message"].(string), want) {
		t.Errorf("stale uid: %v, want ...%s", st["message"], want)
	}
	f.Must(200, "PUT", cms+"/c", `{"metadata":{"name":"c","uid":"`+uid+`"},"data":{"a":"b"}}`)
}

// TestApplyCreates: an apply that creates ignores a resourceVersion in
// the applied configuration, as kube's store does, and refuses a uid no
// object has with kube's patch handler's 409.
func TestApplyCreates(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", `{"metadata":{"name":"ac"}}`)
	cms := "/api/v1/namespaces/ac/configmaps"
	apply := []string{"Content-Type", "application/apply-patch+yaml"}
	got := f.Must(201, "PATCH", cms+"/a?fieldManager=m", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"5"},"data":{"k":"v"}}`, apply...)
	if field(got, "metadata.resourceVersion") == "5" || field(got, "data.k") != "v" {
		t.Errorf("apply with a resourceVersion created %v", got)
	}
	st := f.Status(f.Do("PATCH", cms+"/b?fieldManager=m", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b","uid":"123"}}`, apply...), 409, "Conflict")
	if want := `Operation cannot be fulfilled on configmaps "b": uid mismatch: the provided object specified uid 123, and no existing object was found`; st["message"] != want {
		t.Errorf("apply with a uid: %v, want %s", st["message"], want)
	}
	f.Status(f.Do("GET", cms+"/b", nil), 404, "NotFound")
}
