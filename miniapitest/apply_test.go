package miniapitest_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/miniapi/miniapi/miniapitest"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The expectations below are kube-apiserver's, derived from its field
// manager (k8s.io/apimachinery/pkg/util/managedfields) and
// structured-merge-diff rather than from what miniapi happens to return:
//
//   - An Apply entry owns exactly the fields of the applied configuration.
//     A declared field holding a non-empty object (spec, data,
//     metadata.labels) is not itself a member, so it has no "." key;
//     apiVersion, kind, metadata.name and metadata.namespace are
//     stripped.
//   - An Update entry owns what the write added or changed, as a diff:
//     an object the write adds whole is a member too ("." key).
//   - An Update takes the fields it changes away from every other manager
//     without a conflict; an Apply that changes another manager's field
//     is a 409 naming that manager, unless forced, when ownership moves.
//   - A manager left owning nothing loses its entry.
//   - Entries are sorted by operation (Apply before Update), then time in
//     seconds, manager, apiVersion and subresource.
//   - On a type with a status subresource, the main resource ignores
//     status (neither stored nor owned) and the status subresource's
//     entries carry subresource "status".

// controllerOwner is the field owner the "controller" applies as, and
// opsOwner the human or tool that edits behind its back.
const (
	controllerOwner = "widget-controller"
	opsOwner        = "ops"
)

// wantEntry is one managedFields entry as kube-apiserver would write it.
// Every entry is also expected to have fieldsType FieldsV1 and a time.
type wantEntry struct {
	manager     string
	operation   metav1.ManagedFieldsOperationType
	apiVersion  string
	subresource string
	fieldsV1    string // JSON, compared decoded
}

// TestServerSideApply drives server-side apply through controller-runtime
// as controllers do, on a built-in type and on a custom resource with a
// status subresource, and checks managedFields after every step.
func TestServerSideApply(t *testing.T) {
	t.Parallel()
	env := miniapitest.Start(t, miniapitest.WithCRDObjects(widgetCRD), miniapitest.WithNamespaces("ssa"))
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	// A client without a cache: every Get below must see the write
	// before it, as the managedFields checks need.
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("ConfigMap", func(t *testing.T) { testApplyConfigMap(t, c) })
	t.Run("Widget", func(t *testing.T) { testApplyWidget(t, c) })
}

// testApplyConfigMap applies client-go apply configurations of a
// ConfigMap: create by apply, an Update by another manager, a conflict,
// a forced apply, and an apply that drops a field.
func testApplyConfigMap(t *testing.T, c client.Client) {
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	key := client.ObjectKey{Namespace: "ssa", Name: "settings"}
	desired := func(data map[string]string) *corev1ac.ConfigMapApplyConfiguration {
		return corev1ac.ConfigMap(key.Name, key.Namespace).WithLabels(map[string]string{"app": "shop"}).WithData(data)
	}

	// Apply creates the object, owned by the applier alone.
	ac := desired(map[string]string{"color": "red", "size": "L"})
	if err := c.Apply(ctx, ac, client.FieldOwner(controllerOwner), client.ForceOwnership); err != nil {
		t.Fatalf("apply to create: %v", err)
	}
	// The client decodes the server's answer into the configuration.
	if ac.UID == nil || ac.ResourceVersion == nil || ac.Data["color"] != "red" {
		t.Errorf("apply configuration after apply: uid %v, resourceVersion %v, data %v; want them filled from the response", ac.UID, ac.ResourceVersion, ac.Data)
	}
	cm := getConfigMap(ctx, t, c, key, map[string]string{"color": "red", "size": "L"})
	checkManagedFields(t, cm.ManagedFields, wantEntry{
		manager: controllerOwner, operation: metav1.ManagedFieldsOperationApply, apiVersion: "v1",
		fieldsV1: `{"f:data":{"f:color":{},"f:size":{}},"f:metadata":{"f:labels":{"f:app":{}}}}`,
	})

	// Someone edits data.color with an ordinary patch: an Update, which
	// takes the field from the applier without a conflict.
	base := cm.DeepCopy()
	cm.Data["color"] = "blue"
	if err := c.Patch(ctx, cm, client.MergeFrom(base), client.FieldOwner(opsOwner)); err != nil {
		t.Fatalf("merge patch as %s: %v", opsOwner, err)
	}
	cm = getConfigMap(ctx, t, c, key, map[string]string{"color": "blue", "size": "L"})
	checkManagedFields(t, cm.ManagedFields, wantEntry{
		manager: controllerOwner, operation: metav1.ManagedFieldsOperationApply, apiVersion: "v1",
		fieldsV1: `{"f:data":{"f:size":{}},"f:metadata":{"f:labels":{"f:app":{}}}}`,
	}, wantEntry{
		manager: opsOwner, operation: metav1.ManagedFieldsOperationUpdate, apiVersion: "v1",
		fieldsV1: `{"f:data":{"f:color":{}}}`,
	})

	// The controller now wants green: without force that is a conflict
	// with the Update manager, named with the version it wrote.
	err := c.Apply(ctx, desired(map[string]string{"color": "green", "size": "L"}), client.FieldOwner(controllerOwner))
	checkConflict(t, err, `Apply failed with 1 conflict: conflict with "ops" using v1: .data.color`,
		metav1.StatusCause{Type: metav1.CauseTypeFieldManagerConflict, Message: `conflict with "ops" using v1`, Field: ".data.color"})
	cm = getConfigMap(ctx, t, c, key, map[string]string{"color": "blue", "size": "L"})
	checkManagedFields(t, cm.ManagedFields, wantEntry{
		manager: controllerOwner, operation: metav1.ManagedFieldsOperationApply, apiVersion: "v1",
		fieldsV1: `{"f:data":{"f:size":{}},"f:metadata":{"f:labels":{"f:app":{}}}}`,
	}, wantEntry{
		manager: opsOwner, operation: metav1.ManagedFieldsOperationUpdate, apiVersion: "v1",
		fieldsV1: `{"f:data":{"f:color":{}}}`,
	})

	// Forced, the value and the field move to the controller; ops owns
	// nothing any more and its entry goes.
	if err := c.Apply(ctx, desired(map[string]string{"color": "green", "size": "L"}), client.FieldOwner(controllerOwner), client.ForceOwnership); err != nil {
		t.Fatalf("forced apply: %v", err)
	}
	cm = getConfigMap(ctx, t, c, key, map[string]string{"color": "green", "size": "L"})
	checkManagedFields(t, cm.ManagedFields, wantEntry{
		manager: controllerOwner, operation: metav1.ManagedFieldsOperationApply, apiVersion: "v1",
		fieldsV1: `{"f:data":{"f:color":{},"f:size":{}},"f:metadata":{"f:labels":{"f:app":{}}}}`,
	})

	// Leaving size out of the next apply removes it: the controller
	// applied it before and nobody else owns it.
	if err := c.Apply(ctx, desired(map[string]string{"color": "green"}), client.FieldOwner(controllerOwner), client.ForceOwnership); err != nil {
		t.Fatalf("apply without size: %v", err)
	}
	cm = getConfigMap(ctx, t, c, key, map[string]string{"color": "green"})
	checkManagedFields(t, cm.ManagedFields, wantEntry{
		manager: controllerOwner, operation: metav1.ManagedFieldsOperationApply, apiVersion: "v1",
		fieldsV1: `{"f:data":{"f:color":{}},"f:metadata":{"f:labels":{"f:app":{}}}}`,
	})
	if cm.Labels["app"] != "shop" {
		t.Errorf("labels %v, want app=shop kept", cm.Labels)
	}
}

// testApplyWidget applies unstructured Widgets: with client.Apply, with
// the older Patch(client.Apply) form, and to the status subresource.
func testApplyWidget(t *testing.T, c client.Client) {
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	key := client.ObjectKey{Namespace: "ssa", Name: "w1"}
	// widget is the partial Widget an applier sends: only the fields it
	// has an opinion on.
	widget := func(labels map[string]any, fields map[string]any) *unstructured.Unstructured {
		meta := map[string]any{"name": key.Name, "namespace": key.Namespace}
		if labels != nil {
			meta["labels"] = labels
		}
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": meta}}
		for k, v := range fields {
			u.Object[k] = v
		}
		return u
	}
	labels := map[string]any{"app": "shop", "tier": "gold"}
	specOf := func(color string) map[string]any { return map[string]any{"spec": map[string]any{"color": color}} }

	u := widget(labels, specOf("red"))
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(controllerOwner), client.ForceOwnership); err != nil {
		t.Fatalf("apply to create: %v", err)
	}
	if u.GetUID() == "" || u.GetResourceVersion() == "" {
		t.Errorf("object after apply: uid %q, resourceVersion %q; want them filled from the response", u.GetUID(), u.GetResourceVersion())
	}
	mainEntry := wantEntry{
		manager: controllerOwner, operation: metav1.ManagedFieldsOperationApply, apiVersion: "example.com/v1",
		fieldsV1: `{"f:metadata":{"f:labels":{"f:app":{},"f:tier":{}}},"f:spec":{"f:color":{}}}`,
	}
	w := getWidget(ctx, t, c, key)
	checkWidgetFields(t, w, "red", "")
	checkManagedFields(t, w.GetManagedFields(), mainEntry)

	// Status is applied through its subresource, and owned there.
	status := widget(nil, map[string]any{"status": map[string]any{"observed": "red"}})
	if err := c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(status), client.FieldOwner(controllerOwner), client.ForceOwnership); err != nil {
		t.Fatalf("status apply: %v", err)
	}
	statusEntry := wantEntry{
		manager: controllerOwner, operation: metav1.ManagedFieldsOperationApply, apiVersion: "example.com/v1", subresource: "status",
		fieldsV1: `{"f:status":{"f:observed":{}}}`,
	}
	w = getWidget(ctx, t, c, key)
	checkWidgetFields(t, w, "red", "red")
	checkManagedFields(t, w.GetManagedFields(), mainEntry, statusEntry)

	// Status sent to the main resource is ignored: not stored, not owned.
	withStatus := widget(labels, specOf("red"))
	withStatus.Object["status"] = map[string]any{"observed": "blue"}
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(withStatus), client.FieldOwner(controllerOwner), client.ForceOwnership); err != nil {
		t.Fatalf("apply with status to the main resource: %v", err)
	}
	w = getWidget(ctx, t, c, key)
	checkWidgetFields(t, w, "red", "red")
	checkManagedFields(t, w.GetManagedFields(), mainEntry, statusEntry)

	// Another applier, through the older Patch form, forces spec.color
	// to green and so takes it from the controller.
	ops := widget(nil, specOf("green"))
	//lint:ignore SA1019 the Patch form controllers still use is what is tested
	if err := c.Patch(ctx, ops, client.Apply, client.FieldOwner(opsOwner), client.ForceOwnership); err != nil {
		t.Fatalf("apply patch as %s: %v", opsOwner, err)
	}
	opsEntry := wantEntry{
		manager: opsOwner, operation: metav1.ManagedFieldsOperationApply, apiVersion: "example.com/v1",
		fieldsV1: `{"f:spec":{"f:color":{}}}`,
	}
	mainWithoutColor := mainEntry
	mainWithoutColor.fieldsV1 = `{"f:metadata":{"f:labels":{"f:app":{},"f:tier":{}}}}`
	w = getWidget(ctx, t, c, key)
	checkWidgetFields(t, w, "green", "red")
	checkManagedFields(t, w.GetManagedFields(), opsEntry, mainWithoutColor, statusEntry)

	// The controller's blue conflicts with the other applier, which is
	// named without a version: it applied rather than updated.
	err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(widget(labels, specOf("blue"))), client.FieldOwner(controllerOwner))
	checkConflict(t, err, `Apply failed with 1 conflict: conflict with "ops": .spec.color`,
		metav1.StatusCause{Type: metav1.CauseTypeFieldManagerConflict, Message: `conflict with "ops"`, Field: ".spec.color"})
	w = getWidget(ctx, t, c, key)
	checkWidgetFields(t, w, "green", "red")
	checkManagedFields(t, w.GetManagedFields(), opsEntry, mainWithoutColor, statusEntry)

	// Forced, it wins the field back and ops's entry goes.
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(widget(labels, specOf("blue"))), client.FieldOwner(controllerOwner), client.ForceOwnership); err != nil {
		t.Fatalf("forced apply: %v", err)
	}
	w = getWidget(ctx, t, c, key)
	checkWidgetFields(t, w, "blue", "red")
	checkManagedFields(t, w.GetManagedFields(), mainEntry, statusEntry)

	// Dropping the tier label from the applied configuration removes it.
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(widget(map[string]any{"app": "shop"}, specOf("blue"))), client.FieldOwner(controllerOwner), client.ForceOwnership); err != nil {
		t.Fatalf("apply without the tier label: %v", err)
	}
	w = getWidget(ctx, t, c, key)
	checkWidgetFields(t, w, "blue", "red")
	if got := w.GetLabels(); !reflect.DeepEqual(got, map[string]string{"app": "shop"}) {
		t.Errorf("labels %v, want only app=shop", got)
	}
	mainEntry.fieldsV1 = `{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:color":{}}}`
	checkManagedFields(t, w.GetManagedFields(), mainEntry, statusEntry)

	// The older Patch form on the status subresource: the controller
	// reports what it now observes, and still owns the field there.
	status = widget(nil, map[string]any{"status": map[string]any{"observed": "blue"}})
	//lint:ignore SA1019 the Patch form controllers still use is what is tested
	if err := c.Status().Patch(ctx, status, client.Apply, client.FieldOwner(controllerOwner), client.ForceOwnership); err != nil {
		t.Fatalf("status apply patch: %v", err)
	}
	w = getWidget(ctx, t, c, key)
	checkWidgetFields(t, w, "blue", "blue")
	checkManagedFields(t, w.GetManagedFields(), mainEntry, statusEntry)
	// Not tested: an apply that drops the last field of an object such as
	// status. structured-merge-diff leaves null there, which a
	// non-nullable schema then refuses (kubernetes/kubernetes#117447), and
	// upstream is still settling that (structured-merge-diff#331).
}

// getConfigMap reads the ConfigMap at key and checks its data.
func getConfigMap(ctx context.Context, t *testing.T, c client.Client, key client.ObjectKey, data map[string]string) *corev1.ConfigMap {
	t.Helper()
	var cm corev1.ConfigMap
	if err := c.Get(ctx, key, &cm); err != nil {
		t.Fatalf("get ConfigMap %s: %v", key, err)
	}
	if !reflect.DeepEqual(cm.Data, data) {
		t.Errorf("ConfigMap data %v, want %v", cm.Data, data)
	}
	return &cm
}

// getWidget reads the Widget at key.
func getWidget(ctx context.Context, t *testing.T, c client.Client, key client.ObjectKey) *unstructured.Unstructured {
	t.Helper()
	w := newWidget()
	if err := c.Get(ctx, key, w); err != nil {
		t.Fatalf("get Widget %s: %v", key, err)
	}
	return w
}

// checkWidgetFields checks a Widget's spec.color and status.observed
// ("" for absent).
func checkWidgetFields(t *testing.T, w *unstructured.Unstructured, color, observed string) {
	t.Helper()
	if got, _, _ := unstructured.NestedString(w.Object, "spec", "color"); got != color {
		t.Errorf("spec.color %q, want %q", got, color)
	}
	if got, _, _ := unstructured.NestedString(w.Object, "status", "observed"); got != observed {
		t.Errorf("status.observed %q, want %q", got, observed)
	}
}

// checkConflict checks that err is the 409 kube-apiserver returns for an
// apply conflict: reason Conflict, its message, and one
// FieldManagerConflict cause per contested field.
func checkConflict(t *testing.T, err error, message string, causes ...metav1.StatusCause) {
	t.Helper()
	if !apierrors.IsConflict(err) {
		t.Errorf("apply without force: %v, want a 409 conflict", err)
		return
	}
	var se apierrors.APIStatus
	if !errors.As(err, &se) {
		t.Errorf("conflict %v carries no Status", err)
		return
	}
	st := se.Status()
	if st.Code != 409 || st.Message != message {
		t.Errorf("conflict status: code %d, message %q; want 409, %q", st.Code, st.Message, message)
	}
	var got []metav1.StatusCause
	if st.Details != nil {
		got = st.Details.Causes
	}
	if !reflect.DeepEqual(got, causes) {
		t.Errorf("conflict causes %+v, want %+v", got, causes)
	}
}

// checkManagedFields checks got against want, entry by entry and field
// by field, in any order; and separately that got is in the order
// kube-apiserver sorts entries, which depends on their times.
func checkManagedFields(t *testing.T, got []metav1.ManagedFieldsEntry, want ...wantEntry) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d managedFields entries, want %d:\n%s", len(got), len(want), managedFieldsString(got))
	}
	type id struct {
		manager, subresource string
		operation            metav1.ManagedFieldsOperationType
	}
	byID := make(map[id]metav1.ManagedFieldsEntry, len(got))
	for _, e := range got {
		byID[id{e.Manager, e.Subresource, e.Operation}] = e
	}
	// Entry times have second precision; allow for the clock and rounding.
	latest := time.Now().Add(time.Second)
	for _, w := range want {
		e, ok := byID[id{w.manager, w.subresource, w.operation}]
		if !ok {
			t.Errorf("no managedFields entry for manager %q operation %s subresource %q:\n%s", w.manager, w.operation, w.subresource, managedFieldsString(got))
			continue
		}
		if e.APIVersion != w.apiVersion {
			t.Errorf("%s/%s apiVersion %q, want %q", w.manager, w.operation, e.APIVersion, w.apiVersion)
		}
		if e.FieldsType != "FieldsV1" {
			t.Errorf("%s/%s fieldsType %q, want FieldsV1", w.manager, w.operation, e.FieldsType)
		}
		if e.Time == nil || e.Time.After(latest) || time.Since(e.Time.Time) > time.Minute {
			t.Errorf("%s/%s time %v, want the time of the write", w.manager, w.operation, e.Time)
		}
		var gotFields, wantFields any
		if err := json.Unmarshal([]byte(w.fieldsV1), &wantFields); err != nil {
			t.Fatalf("bad expected fieldsV1 %s: %v", w.fieldsV1, err)
		}
		if e.FieldsV1 == nil {
			t.Errorf("%s/%s has no fieldsV1, want %s", w.manager, w.operation, w.fieldsV1)
			continue
		}
		if err := json.Unmarshal(e.FieldsV1.GetRawBytes(), &gotFields); err != nil {
			t.Errorf("%s/%s fieldsV1 %s: %v", w.manager, w.operation, e.FieldsV1.GetRawBytes(), err)
			continue
		}
		if !reflect.DeepEqual(gotFields, wantFields) {
			t.Errorf("%s/%s subresource %q fieldsV1\n got %s\nwant %s", w.manager, w.operation, w.subresource, e.FieldsV1.GetRawBytes(), w.fieldsV1)
		}
	}
	if !sort.SliceIsSorted(got, func(i, j int) bool { return kubeEntryLess(got[i], got[j]) }) {
		t.Errorf("managedFields not in kube-apiserver's order (operation, time in seconds, manager, apiVersion, subresource):\n%s", managedFieldsString(got))
	}
}

// kubeEntryLess is the order kube-apiserver stores managedFields in.
func kubeEntryLess(p, q metav1.ManagedFieldsEntry) bool {
	if p.Operation != q.Operation {
		return p.Operation < q.Operation
	}
	var ps, qs int64
	if p.Time != nil {
		ps = p.Time.Unix()
	}
	if q.Time != nil {
		qs = q.Time.Unix()
	}
	if ps != qs {
		return ps < qs
	}
	if p.Manager != q.Manager {
		return p.Manager < q.Manager
	}
	if p.APIVersion != q.APIVersion {
		return p.APIVersion < q.APIVersion
	}
	return p.Subresource < q.Subresource
}

// managedFieldsString renders entries for failure messages.
func managedFieldsString(entries []metav1.ManagedFieldsEntry) string {
	b, err := json.MarshalIndent(entries, "", "  ")
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// TestManagedFieldsAcrossVersions: a write through one version of a
// built-in kind served in two (HorizontalPodAutoscalers, autoscaling/v1
// and v2) takes over what it changes from an entry recorded through the
// other, and is recorded in its own version, as kube-apiserver's field
// manager does by converting the object to each entry's version (the
// owners below are what the reference kube-apiserver 1.37.1 records for
// the same writes).
func TestManagedFieldsAcrossVersions(t *testing.T) {
	t.Parallel()
	env := miniapitest.Start(t, miniapitest.WithNamespaces("hpa"))
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	util := int32(50)
	_, err = cs.AutoscalingV2().HorizontalPodAutoscalers("hpa").Create(ctx, &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MaxReplicas:    5,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &util},
			}}},
		},
	}, metav1.CreateOptions{FieldManager: "creator"})
	if err != nil {
		t.Fatal(err)
	}
	v1, err := cs.AutoscalingV1().HorizontalPodAutoscalers("hpa").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v1.Spec.MaxReplicas = 7
	if _, err := cs.AutoscalingV1().HorizontalPodAutoscalers("hpa").Update(ctx, v1, metav1.UpdateOptions{FieldManager: "scaler"}); err != nil {
		t.Fatal(err)
	}
	got, err := cs.AutoscalingV2().HorizontalPodAutoscalers("hpa").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.MaxReplicas != 7 {
		t.Fatalf("maxReplicas %d after the update through v1", got.Spec.MaxReplicas)
	}
	checkManagedFields(t, got.ManagedFields,
		wantEntry{manager: "creator", operation: metav1.ManagedFieldsOperationUpdate, apiVersion: "autoscaling/v2",
			fieldsV1: `{"f:spec":{"f:metrics":{},"f:minReplicas":{},"f:scaleTargetRef":{"f:apiVersion":{},"f:kind":{},"f:name":{}}}}`},
		wantEntry{manager: "scaler", operation: metav1.ManagedFieldsOperationUpdate, apiVersion: "autoscaling/v1",
			fieldsV1: `{"f:spec":{"f:maxReplicas":{}}}`},
	)

	// An Event written through events.k8s.io/v1 and then core v1: kube
	// has no conversion between the two groups' versions for its field
	// manager, which drops the entry it cannot convert to, and an apply
	// through events.k8s.io/v1 after that succeeds (it answered 500).
	_, err = cs.EventsV1().Events("hpa").Create(ctx, &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: "e"}, EventTime: metav1.NowMicro(), ReportingController: "example.com/c", ReportingInstance: "i",
		Action: "Act", Reason: "Why", Regarding: corev1.ObjectReference{Kind: "Pod", Name: "p", Namespace: "hpa"}, Note: "hello", Type: "Normal",
	}, metav1.CreateOptions{FieldManager: "one"})
	if err != nil {
		t.Fatal(err)
	}
	patched, err := cs.CoreV1().Events("hpa").Patch(ctx, "e", types.MergePatchType, []byte(`{"count":3}`), metav1.PatchOptions{FieldManager: "two"})
	if err != nil {
		t.Fatal(err)
	}
	checkManagedFields(t, patched.ManagedFields,
		wantEntry{manager: "two", operation: metav1.ManagedFieldsOperationUpdate, apiVersion: "v1", fieldsV1: `{"f:count":{}}`})
	applied, err := cs.EventsV1().Events("hpa").Patch(ctx, "e", types.ApplyPatchType,
		[]byte(`{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e","labels":{"a":"b"}}}`), metav1.PatchOptions{FieldManager: "three"})
	if err != nil {
		t.Fatalf("apply through events.k8s.io/v1: %v", err)
	}
	if applied.Labels["a"] != "b" {
		t.Errorf("labels %v after the apply", applied.Labels)
	}
}
