package builtin

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	"github.com/miniapi/miniapi/storage"
)

// TestPodGracefulDelete checks a pod on a node is deleted as
// kube-apiserver deletes it: gracefully by default (it stays, marked,
// with spec.terminationGracePeriodSeconds), at once with
// gracePeriodSeconds=0, whether or not a graceful deletion is under way,
// and a dry run changes nothing.
func TestPodGracefulDelete(t *testing.T) {
	reg := newRegistry(t)
	ctx := context.Background()
	create(t, storeFor(t, reg, "", "v1", "namespaces"), "", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ns"}}`)
	pods := storeFor(t, reg, "", "v1", "pods")
	pod := func(name string) {
		create(t, pods, "ns", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"`+name+`"},"spec":{"nodeName":"node-1","containers":[{"name":"c","image":"nginx"}]}}`)
	}
	zero := int64(0)
	gone := func(name string) bool {
		_, err := pods.Get(ctx, "ns", name, "")
		return api.IsNotFound(err)
	}

	// Graceful first, then forced.
	pod("a")
	out, deleted, err := pods.Delete(ctx, "ns", "a", registry.DeleteOptions{})
	if err != nil || deleted {
		t.Fatalf("graceful delete: deleted=%v err=%v", deleted, err)
	}
	marked := decodeObject(t, out)
	if marked.Metadata.DeletionTimestamp == nil || marked.Metadata.DeletionGracePeriodSeconds == nil || *marked.Metadata.DeletionGracePeriodSeconds != 30 {
		t.Fatalf("graceful delete left %+v", marked.Metadata)
	}
	if gone("a") {
		t.Fatal("a pod on a node went at once without gracePeriodSeconds=0")
	}
	if _, deleted, err = pods.Delete(ctx, "ns", "a", registry.DeleteOptions{GracePeriodSeconds: &zero}); err != nil || !deleted || !gone("a") {
		t.Fatalf("forced delete of a pod being deleted: deleted=%v err=%v gone=%v", deleted, err, gone("a"))
	}

	// Forced straight away; a dry run first leaves it.
	pod("b")
	if _, deleted, err = pods.Delete(ctx, "ns", "b", registry.DeleteOptions{GracePeriodSeconds: &zero, DryRun: true}); err != nil || !deleted || gone("b") {
		t.Fatalf("dry-run forced delete: deleted=%v err=%v gone=%v", deleted, err, gone("b"))
	}
	if got := decodeObject(t, mustGet(t, pods, "ns", "b")); got.Metadata.DeletionTimestamp != nil {
		t.Fatal("a dry run marked the pod")
	}
	if _, deleted, err = pods.Delete(ctx, "ns", "b", registry.DeleteOptions{GracePeriodSeconds: &zero}); err != nil || !deleted || !gone("b") {
		t.Fatalf("forced delete: deleted=%v err=%v gone=%v", deleted, err, gone("b"))
	}

	// A pod on no node goes at once, gracefully with a period of 0; a
	// resourceVersion precondition (the garbage collector's) names the
	// pod as it was before it was marked, and still holds.
	create(t, pods, "ns", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"d"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`)
	d := decodeObject(t, mustGet(t, pods, "ns", "d"))
	pre := &api.Preconditions{UID: &d.Metadata.UID, ResourceVersion: &d.Metadata.ResourceVersion}
	if _, deleted, err = pods.Delete(ctx, "ns", "d", registry.DeleteOptions{Preconditions: pre}); err != nil || !deleted || !gone("d") {
		t.Fatalf("delete of an unscheduled pod with preconditions: deleted=%v err=%v gone=%v", deleted, err, gone("d"))
	}

	// Finalizers still hold a forced delete.
	create(t, pods, "ns", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"c","finalizers":["example.com/hold"]},"spec":{"nodeName":"node-1","containers":[{"name":"c","image":"nginx"}]}}`)
	if _, deleted, err = pods.Delete(ctx, "ns", "c", registry.DeleteOptions{GracePeriodSeconds: &zero}); err != nil || deleted || gone("c") {
		t.Fatalf("forced delete with a finalizer: deleted=%v err=%v gone=%v", deleted, err, gone("c"))
	}
}

func mustGet(t *testing.T, s *registry.Store, ns, name string) *storage.Object {
	t.Helper()
	out, err := s.Get(context.Background(), ns, name, "")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPodSubresourceManagedFields: writes through a pod's
// ephemeralcontainers and resize subresources are recorded in
// managedFields under the subresource's name, owning what they changed,
// as kube-apiserver records them.
func TestPodSubresourceManagedFields(t *testing.T) {
	ctx := context.Background()
	reg := newRegistry(t)
	pods := storeFor(t, reg, "", "v1", "pods")
	pod := create(t, pods, "ns", `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"nginx","resources":{"requests":{"cpu":"100m"}}}]}}`)

	write := func(sub, manager string, change func(spec map[string]any)) *api.Object {
		t.Helper()
		var spec map[string]any
		if err := json.Unmarshal(pod.Fields["spec"], &spec); err != nil {
			t.Fatal(err)
		}
		change(spec)
		data, err := json.Marshal(spec)
		if err != nil {
			t.Fatal(err)
		}
		pod.Fields["spec"] = data
		out, err := pods.UpdateObject(ctx, "ns", "p", pod, registry.UpdateOptions{Subresource: sub, FieldManager: manager})
		if err != nil {
			t.Fatalf("%s: %v", sub, err)
		}
		pod = decodeObject(t, out)
		return pod
	}
	entry := func(manager string) *api.ManagedFieldsEntry {
		for i, e := range pod.Metadata.ManagedFields {
			if e.Manager == manager {
				return &pod.Metadata.ManagedFields[i]
			}
		}
		t.Fatalf("no managedFields entry of %s in %+v", manager, pod.Metadata.ManagedFields)
		return nil
	}

	write("ephemeralcontainers", "debugger", func(spec map[string]any) {
		spec["ephemeralContainers"] = []any{map[string]any{"name": "dbg", "image": "busybox", "targetContainerName": "c"}}
	})
	if e := entry("debugger"); e.Subresource != "ephemeralcontainers" || e.Operation != "Update" ||
		!strings.Contains(string(e.FieldsV1), `"f:ephemeralContainers":{".":{},"k:{\"name\":\"dbg\"}"`) {
		t.Errorf("ephemeralcontainers entry %+v (%s)", e, e.FieldsV1)
	}

	write("resize", "resizer", func(spec map[string]any) {
		c := spec["containers"].([]any)[0].(map[string]any)
		c["resources"] = map[string]any{"requests": map[string]any{"cpu": "200m"}}
	})
	if e := entry("resizer"); e.Subresource != "resize" || !strings.Contains(string(e.FieldsV1), `"f:cpu":{}`) {
		t.Errorf("resize entry %+v (%s)", e, e.FieldsV1)
	}
	// The creator no longer owns the request the resize changed.
	if e := entry(registry.DefaultFieldManager); strings.Contains(string(e.FieldsV1), `"f:cpu"`) {
		t.Errorf("the creator still owns the cpu request: %s", e.FieldsV1)
	}
}
