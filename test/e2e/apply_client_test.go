package e2e

import (
	"context"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	applycorev1 "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// TestClientGoApply applies with client-go: the typed clientset with
// apply configurations over protobuf on a built-in type, and the dynamic
// client on a custom resource, main resource and /status.
func TestClientGoApply(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	srv := startServer(t, t.TempDir())
	srv.must(t, 201, "POST", "/api/v1/namespaces", namespace("ssa"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := clientConfig(t, srv)
	t.Run("typed/protobuf", func(t *testing.T) { testTypedApply(ctx, t, cfg) })
	t.Run("dynamic/custom resource", func(t *testing.T) { testDynamicApply(ctx, t, cfg) })
}

// wantApplyConflictError checks err is kube-apiserver's apply conflict: a
// 409 whose message and single cause name the manager and the field.
func wantApplyConflictError(t *testing.T, err error, manager, field string) {
	t.Helper()
	var se apierrors.APIStatus
	if !apierrors.IsConflict(err) || !errors.As(err, &se) {
		t.Fatalf("conflicting apply: %v, want a 409 Conflict", err)
	}
	st := se.Status()
	if want := "Apply failed with 1 conflict: conflict with " + manager + ": " + field; st.Message != want {
		t.Errorf("conflict message %q, want %q", st.Message, want)
	}
	want := []metav1.StatusCause{{Type: metav1.CauseTypeFieldManagerConflict, Message: "conflict with " + manager, Field: field}}
	if st.Details == nil || !reflect.DeepEqual(st.Details.Causes, want) {
		t.Errorf("conflict details %+v, want causes %+v", st.Details, want)
	}
}

// testTypedApply applies ConfigMaps with the typed clientset, protobuf
// both ways, and checks what the answers, decoded from protobuf, and a
// fresh read say about data and ownership.
func testTypedApply(ctx context.Context, t *testing.T, cfg *rest.Config) {
	cfg = rest.CopyConfig(cfg)
	cfg.ContentType = protobufMedia
	var media mediaRecorder
	cs, err := kubernetes.NewForConfig(media.wrap(cfg))
	if err != nil {
		t.Fatal(err)
	}
	cms := cs.CoreV1().ConfigMaps("ssa")
	// check compares an object (an answer, then the stored one) with the
	// data and managedFields a step should leave.
	check := func(step string, cm *corev1.ConfigMap, data map[string]string, want ...fieldsEntry) {
		t.Helper()
		for _, c := range []struct {
			what string
			cm   *corev1.ConfigMap
		}{{"answer", cm}, {"stored", nil}} {
			if c.cm == nil {
				var err error
				if c.cm, err = cms.Get(ctx, cm.Name, metav1.GetOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			if !maps.Equal(c.cm.Data, data) {
				t.Errorf("%s (%s): data %v, want %v", step, c.what, c.cm.Data, data)
			}
			checkManagedFields(t, step+" ("+c.what+")", c.cm.ManagedFields, want...)
		}
	}
	apply := func(cm *applycorev1.ConfigMapApplyConfiguration, manager string, force bool) (*corev1.ConfigMap, error) {
		return cms.Apply(ctx, cm, metav1.ApplyOptions{FieldManager: manager, Force: force})
	}

	cm, err := apply(applycorev1.ConfigMap("typed", "ssa").WithData(map[string]string{"a": "1", "b": "2"}), "e2e-typed", false)
	if err != nil {
		t.Fatal(err)
	}
	check("create", cm, map[string]string{"a": "1", "b": "2"},
		fieldsEntry{"e2e-typed", "Apply", "", "v1", `{"f:data":{"f:a":{},"f:b":{}}}`})

	// kube-apiserver requires a field manager for apply (the clients
	// leave it to the caller) and says so as an invalid PatchOptions.
	_, err = apply(applycorev1.ConfigMap("typed", "ssa").WithData(map[string]string{"a": "1"}), "", false)
	if want := `PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch`; !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("apply without a field manager: %v, want 422 %q", err, want)
	}

	// Leaving b out removes it; c is new.
	if cm, err = apply(applycorev1.ConfigMap("typed", "ssa").WithData(map[string]string{"a": "1", "c": "3"}), "e2e-typed", false); err != nil {
		t.Fatal(err)
	}
	check("drop b", cm, map[string]string{"a": "1", "c": "3"},
		fieldsEntry{"e2e-typed", "Apply", "", "v1", `{"f:data":{"f:a":{},"f:c":{}}}`})

	// A dry run answers with the result and stores nothing.
	rv := cm.ResourceVersion
	dry, err := cms.Apply(ctx, applycorev1.ConfigMap("typed", "ssa").WithData(map[string]string{"a": "dry"}), metav1.ApplyOptions{FieldManager: "e2e-typed", DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatal(err)
	}
	if dry.Data["a"] != "dry" || dry.Data["c"] != "" {
		t.Errorf("dry-run apply answered data %v, want a=dry without c", dry.Data)
	}
	if stored, err := cms.Get(ctx, "typed", metav1.GetOptions{}); err != nil || stored.ResourceVersion != rv || stored.Data["a"] != "1" {
		t.Errorf("after a dry-run apply: %v, %v; want resourceVersion %s and a=1", stored, err, rv)
	}

	// Another manager setting a conflicts, unless it forces: then a is
	// its alone.
	_, err = apply(applycorev1.ConfigMap("typed", "ssa").WithData(map[string]string{"a": "other"}), "e2e-other", false)
	wantApplyConflictError(t, err, `"e2e-typed"`, ".data.a")
	if cm, err = apply(applycorev1.ConfigMap("typed", "ssa").WithData(map[string]string{"a": "other"}), "e2e-other", true); err != nil {
		t.Fatal(err)
	}
	check("force", cm, map[string]string{"a": "other", "c": "3"},
		fieldsEntry{"e2e-typed", "Apply", "", "v1", `{"f:data":{"f:c":{}}}`},
		fieldsEntry{"e2e-other", "Apply", "", "v1", `{"f:data":{"f:a":{}}}`})

	// A create without a field manager is an Update by the client's user
	// agent up to its first "/"; it created data, so it owns the map
	// itself (".") too. Applying another value conflicts with it, named
	// with the version it wrote; applying the same value shares it.
	agent, _, _ := strings.Cut(rest.DefaultKubernetesUserAgent(), "/")
	seeded, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "seeded"}, Data: map[string]string{"seed": "s"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	check("create", seeded, map[string]string{"seed": "s"},
		fieldsEntry{agent, "Update", "", "v1", `{"f:data":{".":{},"f:seed":{}}}`})
	_, err = apply(applycorev1.ConfigMap("seeded", "ssa").WithData(map[string]string{"seed": "t"}), "e2e-typed", false)
	wantApplyConflictError(t, err, `"`+agent+`" using v1`, ".data.seed")
	if seeded, err = apply(applycorev1.ConfigMap("seeded", "ssa").WithData(map[string]string{"seed": "s", "more": "m"}), "e2e-typed", false); err != nil {
		t.Fatal(err)
	}
	check("co-own", seeded, map[string]string{"seed": "s", "more": "m"},
		fieldsEntry{"e2e-typed", "Apply", "", "v1", `{"f:data":{"f:more":{},"f:seed":{}}}`},
		fieldsEntry{agent, "Update", "", "v1", `{"f:data":{".":{},"f:seed":{}}}`})

	for _, want := range []string{"request application/apply-patch+yaml", "request " + protobufMedia, "response " + protobufMedia} {
		if !media.saw(want) {
			t.Errorf("the typed client never had a %s; saw %v", want, media.all())
		}
	}
}

// testDynamicApply creates the gadget CRD and applies a gadget with the
// dynamic client, to the main resource and to /status: each owns only
// its part of the object, and /status entries say so.
func testDynamicApply(ctx context.Context, t *testing.T, cfg *rest.Config) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(gadgetCRD), &crd.Object); err != nil {
		t.Fatal(err)
	}
	crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gadgets := dyn.Resource(schema.GroupVersionResource{Group: "ssa.example.com", Version: "v1", Resource: "gadgets"}).Namespace("ssa")
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, clientTimeout, true, func(ctx context.Context) (bool, error) {
		_, err := gadgets.List(ctx, metav1.ListOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("gadgets not served within %v: %v", clientTimeout, err)
	}

	const v1 = "ssa.example.com/v1"
	gadget := func(fields map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: fields}
		u.SetAPIVersion(v1)
		u.SetKind("Gadget")
		u.SetName("g")
		return u
	}
	// check compares an object (an answer, then the stored one) with the
	// spec, status and managedFields a step should leave.
	check := func(step string, u *unstructured.Unstructured, spec, status map[string]any, want ...fieldsEntry) {
		t.Helper()
		for _, c := range []struct {
			what string
			u    *unstructured.Unstructured
		}{{"answer", u}, {"stored", nil}} {
			if c.u == nil {
				var err error
				if c.u, err = gadgets.Get(ctx, "g", metav1.GetOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			if got, _, _ := unstructured.NestedMap(c.u.Object, "spec"); !reflect.DeepEqual(got, spec) {
				t.Errorf("%s (%s): spec %v, want %v", step, c.what, got, spec)
			}
			if got, _, _ := unstructured.NestedMap(c.u.Object, "status"); !reflect.DeepEqual(got, status) {
				t.Errorf("%s (%s): status %v, want %v", step, c.what, got, status)
			}
			checkManagedFields(t, step+" ("+c.what+")", c.u.GetManagedFields(), want...)
		}
	}
	port := func(name string, n int64) map[string]any { return map[string]any{"name": name, "port": n} }
	specFields := `{"f:spec":{"f:color":{},"f:ports":{"k:{\"name\":\"a\"}":{".":{},"f:name":{},"f:port":{}}}}}`

	// Status sent to the main resource is dropped, and not owned.
	u, err := gadgets.Apply(ctx, "g", gadget(map[string]any{
		"spec":   map[string]any{"color": "red", "ports": []any{port("a", 1)}},
		"status": map[string]any{"phase": "Ignored"},
	}), metav1.ApplyOptions{FieldManager: "e2e-dyn"})
	if err != nil {
		t.Fatal(err)
	}
	spec := map[string]any{"color": "red", "ports": []any{port("a", 1)}}
	check("apply", u, spec, nil, fieldsEntry{"e2e-dyn", "Apply", "", v1, specFields})

	// Spec sent to /status is dropped, and not owned; the entry is the
	// status subresource's.
	u, err = gadgets.ApplyStatus(ctx, "g", gadget(map[string]any{
		"spec":   map[string]any{"color": "blue"},
		"status": map[string]any{"phase": "Ready"},
	}), metav1.ApplyOptions{FieldManager: "e2e-status"})
	if err != nil {
		t.Fatal(err)
	}
	check("apply status", u, spec, map[string]any{"phase": "Ready"},
		fieldsEntry{"e2e-dyn", "Apply", "", v1, specFields},
		fieldsEntry{"e2e-status", "Apply", "status", v1, `{"f:status":{"f:phase":{}}}`})

	// The same manager on the main resource and on /status keeps two
	// entries. It co-owns phase, applied with the value it has, and owns
	// message alone.
	u, err = gadgets.ApplyStatus(ctx, "g", gadget(map[string]any{"status": map[string]any{"phase": "Ready", "message": "up"}}), metav1.ApplyOptions{FieldManager: "e2e-dyn"})
	if err != nil {
		t.Fatal(err)
	}
	check("same manager on status", u, spec, map[string]any{"phase": "Ready", "message": "up"},
		fieldsEntry{"e2e-dyn", "Apply", "", v1, specFields},
		fieldsEntry{"e2e-dyn", "Apply", "status", v1, `{"f:status":{"f:message":{},"f:phase":{}}}`},
		fieldsEntry{"e2e-status", "Apply", "status", v1, `{"f:status":{"f:phase":{}}}`})

	// Changing phase conflicts with both its owners, each named with the
	// subresource it wrote through.
	_, err = gadgets.ApplyStatus(ctx, "g", gadget(map[string]any{"status": map[string]any{"phase": "Broken"}}), metav1.ApplyOptions{FieldManager: "e2e-late"})
	if err == nil {
		t.Fatal("a status apply that changes a co-owned field succeeded")
	}
	var se apierrors.APIStatus
	if !apierrors.IsConflict(err) || !errors.As(err, &se) {
		t.Fatalf("status apply against two owners: %v, want a 409 Conflict", err)
	}
	// Managers are listed sorted, each with its fields.
	st := se.Status()
	if want := "Apply failed with 2 conflicts: conflicts with \"e2e-dyn\" with subresource \"status\":\n- .status.phase\n" +
		"conflicts with \"e2e-status\" with subresource \"status\":\n- .status.phase"; st.Message != want {
		t.Errorf("two-owner conflict message\n%s\nwant\n%s", st.Message, want)
	}
	var causes []string
	if st.Details != nil {
		for _, c := range st.Details.Causes {
			causes = append(causes, string(c.Type)+" "+c.Field+" "+c.Message)
		}
	}
	slices.Sort(causes)
	if want := []string{
		`FieldManagerConflict .status.phase conflict with "e2e-dyn" with subresource "status"`,
		`FieldManagerConflict .status.phase conflict with "e2e-status" with subresource "status"`,
	}; !slices.Equal(causes, want) {
		t.Errorf("two-owner conflict causes %q, want %q", causes, want)
	}
}
