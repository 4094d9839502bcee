package endpoints

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

const protobufMedia = "application/vnd.kubernetes.protobuf"

// wireLog records the Content-Types a client sent and received.
type wireLog struct {
	mu            sync.Mutex
	sent, answers []string
}

func (l *wireLog) RoundTrip(rt http.RoundTripper, req *http.Request) (*http.Response, error) {
	resp, err := rt.RoundTrip(req)
	l.mu.Lock()
	defer l.mu.Unlock()
	if ct := req.Header.Get("Content-Type"); ct != "" {
		l.sent = append(l.sent, req.Method+" "+ct)
	}
	if err == nil {
		l.answers = append(l.answers, req.Method+" "+resp.Header.Get("Content-Type"))
	}
	return resp, err
}

func (l *wireLog) snapshot() (sent, answers []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.sent...), append([]string(nil), l.answers...)
}

// clientset is client-go's typed clientset with its default config, which
// sends and asks for protobuf for built-in kinds.
func (f *fixture) clientset() (*kubernetes.Clientset, *wireLog) {
	f.t.Helper()
	log := &wireLog{}
	cfg := &rest.Config{Host: f.url, WrapTransport: func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) { return log.RoundTrip(rt, req) })
	}}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		f.t.Fatal(err)
	}
	return cs, log
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestTypedClientProtobuf(t *testing.T) {
	f := newFixture(t)
	cs, log := f.clientset()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	nsObj, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if nsObj.Status.Phase != corev1.NamespaceActive || nsObj.UID == "" {
		t.Fatalf("namespace = %+v", nsObj)
	}

	cms := cs.CoreV1().ConfigMaps("ns1")
	cm, err := cms.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"app": "x"}},
		Data:       map[string]string{"k": "v"},
		BinaryData: map[string][]byte{"b": {0, 1, 2}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data["k"] != "v" || !bytes.Equal(cm.BinaryData["b"], []byte{0, 1, 2}) || cm.ResourceVersion == "" || cm.CreationTimestamp.IsZero() {
		t.Fatalf("created = %+v", cm)
	}
	got, err := cms.Get(ctx, "a", metav1.GetOptions{})
	if err != nil || got.ResourceVersion != cm.ResourceVersion || got.Labels["app"] != "x" {
		t.Fatalf("get = %+v, %v", got, err)
	}
	got.Data["k"] = "v2"
	upd, err := cms.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil || upd.Data["k"] != "v2" || upd.ResourceVersion == got.ResourceVersion {
		t.Fatalf("update = %+v, %v", upd, err)
	}
	// A stale resourceVersion is a typed Conflict.
	if _, err := cms.Update(ctx, got, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("stale update: %v, want Conflict", err)
	}
	patched, err := cms.Patch(ctx, "a", types.MergePatchType, []byte(`{"data":{"p":"q"}}`), metav1.PatchOptions{})
	if err != nil || patched.Data["p"] != "q" || patched.Data["k"] != "v2" {
		t.Fatalf("patch = %+v, %v", patched, err)
	}
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("duplicate create: %v, want AlreadyExists", err)
	}
	if _, err := cms.Get(ctx, "missing", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get missing: %v, want NotFound", err)
	}
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "Bad_Name"}}, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Fatalf("invalid create: %v, want Invalid", err)
	}
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := cms.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil || len(list.Items) != 1 || list.Continue == "" || list.ResourceVersion == "" {
		t.Fatalf("list page = %+v, %v", list, err)
	}
	rest, err := cms.List(ctx, metav1.ListOptions{Limit: 1, Continue: list.Continue})
	if err != nil || len(rest.Items) != 1 || rest.Items[0].Name != "b" {
		t.Fatalf("second page = %+v, %v", rest, err)
	}
	// DeleteOptions travel as protobuf too; failed preconditions are a
	// Conflict.
	stale := cm.ResourceVersion
	if err := cms.Delete(ctx, "a", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &stale}}); !apierrors.IsConflict(err) {
		t.Fatalf("delete with stale precondition: %v, want Conflict", err)
	}
	if err := cms.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if l, err := cms.List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Fatalf("after delete collection: %+v, %v", l, err)
	}

	secrets := cs.CoreV1().Secrets("ns1")
	sec, err := secrets.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "s"},
		Data:       map[string][]byte{"token": []byte("hunter2")},
		StringData: map[string]string{"user": "me"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sec.Type != corev1.SecretTypeOpaque || string(sec.Data["token"]) != "hunter2" || string(sec.Data["user"]) != "me" {
		t.Fatalf("secret = %+v", sec)
	}

	leases := cs.CoordinationV1().Leases("ns1")
	holder, dur := "me", int32(15)
	now := metav1.NewMicroTime(time.Now().Truncate(time.Microsecond))
	lease, err := leases.Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "l"},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &dur, RenewTime: &now},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *lease.Spec.HolderIdentity != "me" || !lease.Spec.RenewTime.Equal(&now) {
		t.Fatalf("lease = %+v", lease.Spec)
	}
	later := metav1.NewMicroTime(now.Add(time.Second))
	lease.Spec.RenewTime = &later
	if lease, err = leases.Update(ctx, lease, metav1.UpdateOptions{}); err != nil || !lease.Spec.RenewTime.Equal(&later) {
		t.Fatalf("lease update = %+v, %v", lease, err)
	}

	if _, err := cs.CoreV1().Events("ns1").Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "e"},
		InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Namespace: "ns1", Name: "a"},
		Reason:         "Tested", Message: "by protobuf", Type: corev1.EventTypeNormal,
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Everything went over protobuf: bodies (patches aside) and answers,
	// errors included.
	sent, answers := log.snapshot()
	for _, s := range sent {
		if !strings.HasSuffix(s, protobufMedia) && !strings.HasPrefix(s, "PATCH ") {
			t.Errorf("request body sent as %s", s)
		}
	}
	for _, a := range answers {
		if !strings.HasSuffix(a, protobufMedia) {
			t.Errorf("answer in %s", a)
		}
	}
	if len(sent) < 10 || len(answers) < 20 {
		t.Fatalf("too little traffic recorded: %d bodies, %d answers", len(sent), len(answers))
	}
	// What was stored is the same object JSON clients see.
	j := f.Must(200, "GET", "/api/v1/namespaces/ns1/secrets/s", nil)
	if field(j, "data.token") != "aHVudGVyMg==" || field(j, "type") != "Opaque" {
		t.Fatalf("secret as JSON = %v", j)
	}
}

func TestTypedInformerProtobuf(t *testing.T) {
	f := newFixture(t)
	cs, log := f.clientset()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cms := cs.CoreV1().ConfigMaps("ns1")
	for _, n := range []string{"a", "b"} {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	factory := informers.NewSharedInformerFactory(cs, 0)
	defer func() {
		cancel()
		factory.Shutdown()
	}()
	inf := factory.Core().V1().ConfigMaps()
	events := make(chan string, 16)
	inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { events <- "add " + obj.(*corev1.ConfigMap).Name },
		UpdateFunc: func(_, obj any) {
			events <- "update " + obj.(*corev1.ConfigMap).Name + " " + obj.(*corev1.ConfigMap).Data["k"]
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			events <- "delete " + obj.(*corev1.ConfigMap).Name
		},
	})
	factory.Start(ctx.Done())
	syncCtx, syncCancel := context.WithTimeout(ctx, 20*time.Second)
	defer syncCancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), inf.Informer().HasSynced) {
		t.Fatal("typed informer did not sync")
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
	if seen := map[string]bool{next(): true, next(): true}; !seen["add a"] || !seen["add b"] {
		t.Fatalf("initial events = %v", seen)
	}
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if e := next(); e != "add c" {
		t.Fatalf("event %q, want add c", e)
	}
	if _, err := cms.Patch(ctx, "a", types.MergePatchType, []byte(`{"data":{"k":"z"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if e := next(); e != "update a z" {
		t.Fatalf("event %q, want update a z", e)
	}
	if err := cms.Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if e := next(); e != "delete b" {
		t.Fatalf("event %q, want delete b", e)
	}
	if cm, err := inf.Lister().ConfigMaps("ns1").Get("a"); err != nil || cm.Data["k"] != "z" {
		t.Fatalf("lister a = %+v, %v", cm, err)
	}
	_, answers := log.snapshot()
	watched := false
	for _, a := range answers {
		watched = watched || a == "GET "+protobufMedia+";stream=watch"
	}
	if !watched {
		t.Fatalf("no protobuf watch among %v", answers)
	}
}

func TestProtobufEdges(t *testing.T) {
	f := newFixture(t)
	f.Must(201, "POST", "/api/v1/namespaces", ns("ns1"))
	f.Must(201, "POST", "/apis/example.com/v1/namespaces/ns1/widgets", map[string]any{"metadata": map[string]any{"name": "w"}})

	// Undecodable protobuf bodies are 400.
	envelope := func(apiVersion, kind string, raw []byte) string {
		u := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: apiVersion, Kind: kind}, Raw: raw}
		b, err := u.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		return "k8s\x00" + string(b)
	}
	for name, body := range map[string]string{
		"no magic":     "not protobuf at all",
		"bad envelope": "k8s\x00\xff\xff\xff\xff",
		"magic only":   "k8s\x00",
		"unknown kind": envelope("example.com/v1", "Widget", []byte{0x0a, 0x00}),
		// metadata (field 1) claims 16 bytes and has 3.
		"truncated object": envelope("v1", "ConfigMap", []byte{0x0a, 0x10, 'a', 'b', 'c'}),
	} {
		t.Run(name, func(t *testing.T) {
			r := f.Do("POST", cms, body, "Content-Type", protobufMedia)
			if st := f.Status(r, 400, "BadRequest"); !strings.Contains(st["message"].(string), "ConfigMap") {
				t.Fatalf("message = %q", st["message"])
			}
		})
	}

	// Custom types are JSON-only: protobuf alone is 406 (with the Status
	// in protobuf, as kube-apiserver answers a client that accepts only
	// protobuf), a protobuf body 415, and protobuf-then-JSON is JSON.
	const widgets = "/apis/example.com/v1/namespaces/ns1/widgets"
	r := f.Do("GET", widgets, nil, "Accept", protobufMedia)
	if r.Code != 406 || r.Header.Get("Content-Type") != protobufMedia || !bytes.HasPrefix(r.Body, []byte("k8s\x00")) {
		t.Fatalf("protobuf-only Accept on a custom type: %d %s", r.Code, r.Header.Get("Content-Type"))
	}
	if r := f.Do("GET", widgets+"/w", nil, "Accept", protobufMedia+", application/json"); r.Code != 200 || r.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("protobuf-then-JSON on a custom type: %d %s", r.Code, r.Header.Get("Content-Type"))
	}
	f.Status(f.Do("POST", widgets, "k8s\x00", "Content-Type", protobufMedia), 415, "UnsupportedMediaType")
	// Tables are never protobuf.
	if r := f.Do("GET", cms, nil, "Accept", protobufMedia+";as=Table;g=meta.k8s.io;v=v1, application/json"); r.Header.Get("Content-Type") != "application/json" || r.Obj(t)["kind"] != "ConfigMapList" {
		t.Fatalf("protobuf Table: %d %s", r.Code, r.Body)
	}
	// Built-in kinds answer protobuf when asked first, JSON otherwise.
	if r := f.Do("GET", "/api/v1/namespaces/ns1", nil, "Accept", protobufMedia); r.Code != 200 || r.Header.Get("Content-Type") != protobufMedia {
		t.Fatalf("protobuf get: %d %s", r.Code, r.Header.Get("Content-Type"))
	}
	if r := f.Do("GET", "/api/v1/namespaces/ns1", nil, "Accept", "application/json, "+protobufMedia); r.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("JSON-first get answered %s", r.Header.Get("Content-Type"))
	}
	// A protobuf watch is length-prefixed WatchEvents.
	resp := f.rawWatch(t, cms+"?watch=true&resourceVersion=0", "Accept", protobufMedia)
	if ct := resp.Header.Get("Content-Type"); ct != protobufMedia+";stream=watch" {
		t.Fatalf("watch Content-Type = %q", ct)
	}
}

// rawWatch opens a watch and returns its response, closed at test end.
func (f *fixture) rawWatch(t *testing.T, path string, headers ...string) *http.Response {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", f.url+path, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		resp.Body.Close()
	})
	return resp
}
