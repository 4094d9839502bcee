package handlers

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

var cmGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

func (f *fixture) metadataClient() metadata.Interface {
	f.t.Helper()
	c, err := metadata.NewForConfig(&rest.Config{Host: f.url})
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

func TestPartialObjectMetadataHTTP(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	f.Must(201, "POST", cms, configMap("a", map[string]string{"app": "x"}, map[string]string{"k": "v"}))
	f.Must(201, "POST", cms, configMap("b", nil, nil))

	po := f.Must(200, "GET", cms+"/a", nil, "Accept", "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1")
	if po["kind"] != "PartialObjectMetadata" || po["apiVersion"] != "meta.k8s.io/v1" || fieldAt(po, "metadata.labels.app") != "x" ||
		fieldAt(po, "metadata.uid") == nil || po["data"] != nil {
		t.Fatalf("PartialObjectMetadata = %v", po)
	}
	l := f.Must(200, "GET", cms+"?limit=1", nil, "Accept", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1")
	items := l["items"].([]any)
	if l["kind"] != "PartialObjectMetadataList" || l["apiVersion"] != "meta.k8s.io/v1beta1" || len(items) != 1 ||
		fieldAt(l, "metadata.continue") == nil || fieldAt(l, "metadata.resourceVersion") == nil || fieldAt(l, "metadata.remainingItemCount") != 1.0 {
		t.Fatalf("PartialObjectMetadataList = %v", l)
	}
	if it := items[0].(map[string]any); it["kind"] != "PartialObjectMetadata" || it["apiVersion"] != "meta.k8s.io/v1beta1" || fieldAt(it, "metadata.name") != "a" {
		t.Fatalf("list item = %v", it)
	}
	// An empty list's items are null, as kube-apiserver writes them.
	empty := f.Do("GET", cms+"?labelSelector=none%3Dhere", nil, "Accept", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1")
	if body := string(empty.Body); empty.Code != 200 || !strings.Contains(body, `"items":null`) {
		t.Errorf("empty PartialObjectMetadataList = %d %s", empty.Code, body)
	}

	next, _ := f.watchStream(cms+"?watch=true&resourceVersion="+fieldAt(l, "metadata.resourceVersion").(string),
		"Accept", "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1")
	f.Must(200, "PATCH", cms+"/a", `{"metadata":{"labels":{"app":"y"}}}`, "Content-Type", "application/merge-patch+json")
	ev := next()
	obj := ev["object"].(map[string]any)
	if ev["type"] != "MODIFIED" || obj["kind"] != "PartialObjectMetadata" || fieldAt(obj, "metadata.labels.app") != "y" {
		t.Fatalf("watch event = %v", ev)
	}
}

func TestMetadataClient(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	f.Must(201, "POST", cms, configMap("a", map[string]string{"app": "x"}, map[string]string{"k": "v"}))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := f.metadataClient().Resource(cmGVR).Namespace("ns1")

	got, err := c.Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "a" || got.Labels["app"] != "x" || got.UID == "" || got.ResourceVersion == "" {
		t.Fatalf("get = %+v", got.ObjectMeta)
	}
	list, err := c.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "a" || list.ResourceVersion == "" {
		t.Fatalf("list = %+v", list)
	}
	w, err := c.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	patched, err := c.Patch(ctx, "a", types.MergePatchType, []byte(`{"metadata":{"labels":{"app":"y"}}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if patched.Labels["app"] != "y" {
		t.Fatalf("patch = %+v", patched.ObjectMeta)
	}
	select {
	case ev := <-w.ResultChan():
		pm, ok := ev.Object.(*metav1.PartialObjectMetadata)
		if ev.Type != watch.Modified || !ok || pm.Labels["app"] != "y" {
			t.Fatalf("watch event = %v %#v", ev.Type, ev.Object)
		}
	case <-ctx.Done():
		t.Fatal("no watch event")
	}
	if err := c.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, "a", metav1.GetOptions{}); err == nil {
		t.Fatal("get after delete succeeded")
	}
}

func TestMetadataInformer(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	for _, n := range []string{"a", "b"} {
		f.Must(201, "POST", cms, configMap(n, nil, nil))
	}
	ctx, cancel := context.WithCancel(context.Background())
	factory := metadatainformer.NewSharedInformerFactory(f.metadataClient(), 0)
	defer func() {
		cancel()
		factory.Shutdown()
	}()
	inf := factory.ForResource(cmGVR)
	events := make(chan string, 16)
	inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { events <- "add " + obj.(*metav1.PartialObjectMetadata).Name },
		UpdateFunc: func(_, obj any) {
			events <- "update " + obj.(*metav1.PartialObjectMetadata).Name + " " + obj.(*metav1.PartialObjectMetadata).Labels["app"]
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			events <- "delete " + obj.(*metav1.PartialObjectMetadata).Name
		},
	})
	factory.Start(ctx.Done())
	syncCtx, syncCancel := context.WithTimeout(ctx, 20*time.Second)
	defer syncCancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), inf.Informer().HasSynced) {
		t.Fatal("metadata informer did not sync")
	}
	if objs, err := inf.Lister().List(labels.Everything()); err != nil || len(objs) != 2 {
		t.Fatalf("lister has %d objects (%v), want 2", len(objs), err)
	}
	next := func() string {
		t.Helper()
		select {
		case e := <-events:
			return e
		case <-time.After(10 * time.Second):
			t.Fatal("no informer event")
		}
		return ""
	}
	seen := map[string]bool{next(): true, next(): true}
	if !seen["add a"] || !seen["add b"] {
		t.Fatalf("initial events = %v", seen)
	}
	f.Must(201, "POST", cms, configMap("c", nil, nil))
	if e := next(); e != "add c" {
		t.Fatalf("event = %q, want add c", e)
	}
	f.Must(200, "PATCH", cms+"/a", `{"metadata":{"labels":{"app":"z"}}}`, "Content-Type", "application/merge-patch+json")
	if e := next(); e != "update a z" {
		t.Fatalf("event = %q, want update a z", e)
	}
	f.Must(200, "DELETE", cms+"/b", nil)
	if e := next(); e != "delete b" {
		t.Fatalf("event = %q, want delete b", e)
	}
}

func TestMetadataClientProtobufCustomType(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	f.Must(201, "POST", "/apis/example.com/v1/namespaces/ns1/widgets", map[string]any{"metadata": map[string]any{"name": "w", "labels": map[string]any{"a": "b"}}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The metadata client asks for protobuf PartialObjectMetadata first;
	// kube-apiserver serves that even for custom resources.
	r := f.Do("GET", "/apis/example.com/v1/namespaces/ns1/widgets/w", nil, "Accept",
		"application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json")
	if r.Code != 200 || r.Header.Get("Content-Type") != mediaProtobuf {
		t.Fatalf("protobuf PartialObjectMetadata of a widget: %d %s", r.Code, r.Header.Get("Content-Type"))
	}
	c := f.metadataClient().Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}).Namespace("ns1")
	got, err := c.Get(ctx, "w", metav1.GetOptions{})
	if err != nil || got.Name != "w" || got.Labels["a"] != "b" {
		t.Fatalf("get = %+v, %v", got, err)
	}
	l, err := c.List(ctx, metav1.ListOptions{})
	if err != nil || len(l.Items) != 1 || l.Items[0].Name != "w" {
		t.Fatalf("list = %+v, %v", l, err)
	}
	if _, err := c.Get(ctx, "missing", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get missing: %v, want NotFound", err)
	}
}
