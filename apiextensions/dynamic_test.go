package apiextensions_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// client-go's dynamic client installs a CRD and works with its objects,
// a watch included.
func TestCRDDynamicClient(t *testing.T) {
	srv, _ := start(t, "")
	dc, err := dynamic.NewForConfig(&rest.Config{Host: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	crdRes := dc.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	if _, err := crdRes.Create(ctx, &unstructured.Unstructured{Object: toUnstructured(t, widgetCRD("v1"))}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Wait for Established through a watch on the CRD, as clients do.
	w, err := crdRes.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=widgets.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for established := false; !established; {
		select {
		case ev := <-w.ResultChan():
			conds, _, _ := unstructured.NestedSlice(ev.Object.(*unstructured.Unstructured).Object, "status", "conditions")
			for _, c := range conds {
				m := c.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					established = true
				}
			}
		case <-ctx.Done():
			t.Fatal("CRD not Established")
		}
	}
	widgets := dc.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}).Namespace("default")
	ww, err := widgets.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ww.Stop()
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w"}, "spec": map[string]any{"color": "red"},
	}}
	if _, err := widgets.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-ww.ResultChan():
		if ev.Type != watch.Added || ev.Object.(*unstructured.Unstructured).GetName() != "w" {
			t.Errorf("event %s %v", ev.Type, ev.Object)
		}
	case <-ctx.Done():
		t.Fatal("no ADDED event")
	}
	list, err := widgets.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("list: %v, %d items", err, len(list.Items))
	}
}

func toUnstructured(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	return decodeMap(t, mustMarshal(t, m))
}
