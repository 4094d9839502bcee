package builtin

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
)

// A new namespace gets kube's "kubernetes" finalizer, phase Active and
// the kubernetes.io/metadata.name label, also when its name is generated.
func TestNamespaceCreate(t *testing.T) {
	reg := newRegistry(t)
	nss := storeFor(t, reg, "", "v1", "namespaces")
	ns := create(t, nss, "", `{"metadata":{"name":"ns1"}}`)
	if got := topField(ns, "spec"); got != `{"finalizers":["kubernetes"]}` {
		t.Errorf("spec %s", got)
	}
	if got := topField(ns, "status"); got != `{"phase":"Active"}` {
		t.Errorf("status %s", got)
	}
	if ns.Metadata.Labels["kubernetes.io/metadata.name"] != "ns1" {
		t.Errorf("labels %v", ns.Metadata.Labels)
	}
	gen := create(t, nss, "", `{"metadata":{"generateName":"gen-"}}`)
	if gen.Metadata.Labels["kubernetes.io/metadata.name"] != gen.Metadata.Name {
		t.Errorf("generated %s, labels %v", gen.Metadata.Name, gen.Metadata.Labels)
	}
	_, err := nss.Create(context.Background(), "", []byte(`{"metadata":{"name":"Bad_Name"}}`), registry.CreateOptions{})
	wantStatus(t, err, 422, `Namespace "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 label`)
}

func TestNamespaceDeleteTerminatesAndFinalizes(t *testing.T) {
	ctx := context.Background()
	reg := newRegistry(t)
	nss := storeFor(t, reg, "", "v1", "namespaces")
	create(t, nss, "", `{"metadata":{"name":"ns1"}}`)

	out, deleted, err := nss.Delete(ctx, "", "ns1", registry.DeleteOptions{})
	if err != nil || deleted {
		t.Fatalf("delete = %v, %v; want kept", deleted, err)
	}
	ns := decodeObject(t, out)
	if ns.Metadata.DeletionTimestamp == nil || ns.Metadata.DeletionGracePeriodSeconds != nil {
		t.Fatalf("metadata %+v: want deletionTimestamp and no grace period", ns.Metadata)
	}
	if got := topField(ns, "status"); got != `{"phase":"Terminating"}` {
		t.Fatalf("status %s", got)
	}
	// spec.finalizers hold it: deleting again answers it unchanged.
	again, deleted, err := nss.Delete(ctx, "", "ns1", registry.DeleteOptions{})
	if err != nil || deleted || decodeObject(t, again).Metadata.ResourceVersion != ns.Metadata.ResourceVersion {
		t.Fatalf("second delete = %v, %v", deleted, err)
	}
	// (Nothing new inside it: kube's NamespaceLifecycle admission,
	// tested in package server.)
	// The main resource cannot drop spec.finalizers ...
	ns.Fields["spec"] = json.RawMessage(`{}`)
	if _, err := nss.UpdateObject(ctx, "", "ns1", ns, registry.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	cur, err := nss.Get(ctx, "", "ns1", "")
	if err != nil {
		t.Fatalf("namespace gone after a main-resource update: %v", err)
	}
	// ... /finalize can, and the namespace goes with them.
	ns = decodeObject(t, cur)
	ns.Fields["spec"] = json.RawMessage(`{}`)
	if _, err := nss.UpdateObject(ctx, "", "ns1", ns, registry.UpdateOptions{Subresource: "finalize"}); err != nil {
		t.Fatal(err)
	}
	if _, err := nss.Get(ctx, "", "ns1", ""); !api.IsNotFound(err) {
		t.Fatalf("namespace after finalize: %v", err)
	}
	// Other kinds have no /finalize.
	create(t, nss, "", `{"metadata":{"name":"ns2"}}`)
	cms := storeFor(t, reg, "", "v1", "configmaps")
	cm := create(t, cms, "ns2", `{"metadata":{"name":"x"}}`)
	if _, err := cms.UpdateObject(ctx, "ns2", "x", cm, registry.UpdateOptions{Subresource: "finalize"}); !api.IsNotFound(err) {
		t.Fatalf("finalize on a configmap: %v, want NotFound", err)
	}
}

func TestNamespaceWaitsForMetadataFinalizers(t *testing.T) {
	ctx := context.Background()
	reg := newRegistry(t)
	nss := storeFor(t, reg, "", "v1", "namespaces")
	create(t, nss, "", `{"metadata":{"name":"ns1"}}`)
	out, _, err := nss.Delete(ctx, "", "ns1", registry.DeleteOptions{PropagationPolicy: api.DeletePropagationOrphan})
	if err != nil {
		t.Fatal(err)
	}
	ns := decodeObject(t, out)
	if !slices.Equal(ns.Metadata.Finalizers, []string{"orphan"}) {
		t.Fatalf("finalizers %v, want [orphan]", ns.Metadata.Finalizers)
	}
	ns.Fields["spec"] = json.RawMessage(`{}`)
	out, err = nss.UpdateObject(ctx, "", "ns1", ns, registry.UpdateOptions{Subresource: "finalize"})
	if err != nil {
		t.Fatal(err)
	}
	ns = decodeObject(t, out)
	if _, err := nss.Get(ctx, "", "ns1", ""); err != nil {
		t.Fatalf("namespace gone while metadata.finalizers remain: %v", err)
	}
	ns.Metadata.Finalizers = nil
	if _, err := nss.UpdateObject(ctx, "", "ns1", ns, registry.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := nss.Get(ctx, "", "ns1", ""); !api.IsNotFound(err) {
		t.Fatalf("namespace after its last finalizer went: %v", err)
	}
}

// Writes through /finalize are recorded with their subresource; the
// creator keeps the name label kube's defaulting set.
func TestFinalizeRecordsItsSubresource(t *testing.T) {
	reg := newRegistry(t)
	nss := storeFor(t, reg, "", "v1", "namespaces")
	obj := create(t, nss, "", `{"metadata":{"name":"ns1"},"spec":{"finalizers":["example.com/a"]}}`)
	obj.Fields["spec"] = json.RawMessage(`{"finalizers":["kubernetes"]}`)
	out, err := nss.UpdateObject(context.Background(), "", "ns1", obj, registry.UpdateOptions{Subresource: "finalize", FieldManager: registry.ControllerFieldManager})
	if err != nil {
		t.Fatal(err)
	}
	got := decodeObject(t, out).Metadata.ManagedFields
	if len(got) != 2 || got[0].Manager != "kube-apiserver" || got[1].Manager != "kube-controller-manager" || got[1].Subresource != "finalize" {
		t.Fatalf("managedFields %+v", got)
	}
	if string(got[1].FieldsV1) != `{"f:spec":{"f:finalizers":{}}}` {
		t.Errorf("finalize entry %s", got[1].FieldsV1)
	}
}

// A merge patch to a namespace's /status may change its metadata, as
// kube's namespace status strategy lets it: the labels and annotations
// are kept, and the status write's managedFields entry owns them too
// (the strategy resets only spec).
func TestNamespaceStatusPatchKeepsMetadata(t *testing.T) {
	reg := newRegistry(t)
	nss := storeFor(t, reg, "", "v1", "namespaces")
	create(t, nss, "", `{"metadata":{"name":"ns1"}}`)
	patch := `{"metadata":{"labels":{"l":"v"},"annotations":{"a":"b"}},"spec":{"finalizers":[]},"status":{"conditions":[{"type":"Custom","status":"True"}]}}`
	out, err := nss.Patch(context.Background(), "", "ns1", registry.PatchMerge, []byte(patch), registry.UpdateOptions{Subresource: "status", FieldManager: "tester"})
	if err != nil {
		t.Fatal(err)
	}
	ns := decodeObject(t, out)
	if ns.Metadata.Labels["l"] != "v" || ns.Metadata.Annotations["a"] != "b" {
		t.Errorf("metadata after the status patch: labels %v, annotations %v", ns.Metadata.Labels, ns.Metadata.Annotations)
	}
	if got := topField(ns, "spec"); got != `{"finalizers":["kubernetes"]}` {
		t.Errorf("spec %s, want it kept: /status does not change spec", got)
	}
	mf := ns.Metadata.ManagedFields
	if len(mf) != 2 || mf[1].Manager != "tester" || mf[1].Subresource != "status" {
		t.Fatalf("managedFields %+v", mf)
	}
	want := `{"f:metadata":{"f:annotations":{".":{},"f:a":{}},"f:labels":{"f:l":{}}},"f:status":{"f:conditions":{".":{},"k:{\"type\":\"Custom\"}":{".":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}}}}`
	if string(mf[1].FieldsV1) != want {
		t.Errorf("status entry\n %s\nwant\n %s", mf[1].FieldsV1, want)
	}
}
