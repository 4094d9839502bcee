package storagetest

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/storage"
)

// waitTimeout bounds every wait for an event or a close.
const waitTimeout = 10 * time.Second

// testContext is the context of one subtest's storage calls.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// object is a ConfigMap-shaped object as the registry would encode it.
type object struct {
	ns, name string
	uid      string
	labels   map[string]string
	value    string // data.value
}

func (o object) encode() []byte {
	obj := api.Object{
		APIVersion: "v1",
		Kind:       "ConfigMap",
		Metadata:   api.ObjectMeta{Name: o.name, Namespace: o.ns, UID: o.uid, Labels: o.labels},
		Fields:     map[string]json.RawMessage{},
	}
	if o.value != "" {
		b, _ := json.Marshal(map[string]string{"value": o.value})
		obj.Fields["data"] = b
	}
	b, err := json.Marshal(&obj)
	if err != nil {
		panic(err)
	}
	return b
}

// decoded is what the suite reads back from an object's Data.
type decoded struct {
	api.Object
	value string
}

func decode(t *testing.T, data []byte) decoded {
	t.Helper()
	var d decoded
	if err := json.Unmarshal(data, &d.Object); err != nil {
		t.Fatalf("object is not JSON: %v: %s", err, data)
	}
	if raw := d.Fields["data"]; len(raw) > 0 {
		var m map[string]string
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("data is not a string map: %s", raw)
		}
		d.value = m["value"]
	}
	return d
}

// withValue returns data with data.value replaced, keeping everything else
// (including resourceVersion) as the update functions of the registry do.
func withValue(t *testing.T, data []byte, value string) []byte {
	t.Helper()
	out, err := setValue(data, value)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// setValue is withValue for goroutines other than the test's.
func setValue(data []byte, value string) ([]byte, error) {
	var obj api.Object
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, fmt.Errorf("object is not JSON: %w", err)
	}
	b, _ := json.Marshal(map[string]string{"value": value})
	obj.Fields["data"] = b
	return json.Marshal(&obj)
}

// valueOf returns data.value without a testing.T.
func valueOf(data []byte) (string, error) {
	var obj struct {
		Data struct {
			Value string `json:"value"`
		} `json:"data"`
	}
	err := json.Unmarshal(data, &obj)
	return obj.Data.Value, err
}

// withLabels returns data with metadata.labels replaced.
func withLabels(t *testing.T, data []byte, labels map[string]string) []byte {
	t.Helper()
	var obj api.Object
	if err := json.Unmarshal(data, &obj); err != nil {
		t.Fatalf("object is not JSON: %v", err)
	}
	obj.Metadata.Labels = labels
	out, err := json.Marshal(&obj)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkObject fails unless obj is a well-formed stored object: its Data's
// resourceVersion is its Revision, and it has want's name and value.
func checkObject(t *testing.T, obj *storage.Object, want object) {
	t.Helper()
	if obj == nil {
		t.Fatalf("object is nil, want %s/%s", want.ns, want.name)
	}
	d := decode(t, obj.Data)
	if obj.Revision <= 0 {
		t.Errorf("Revision = %d, want > 0", obj.Revision)
	}
	if rv := d.Metadata.ResourceVersion; rv != strconv.FormatInt(obj.Revision, 10) {
		t.Errorf("metadata.resourceVersion = %q, want Revision %d", rv, obj.Revision)
	}
	if d.Metadata.Name != want.name || d.Metadata.Namespace != want.ns || d.value != want.value {
		t.Errorf("object is %s/%s value %q, want %s/%s value %q",
			d.Metadata.Namespace, d.Metadata.Name, d.value, want.ns, want.name, want.value)
	}
}

func (f Fixture) key(o object) string { return f.Keys.Key(o.ns, o.name) }

func (f Fixture) create(t *testing.T, o object) *storage.Object {
	t.Helper()
	obj, err := f.Store.Create(testContext(t), f.key(o), o.encode())
	if err != nil {
		t.Fatalf("Create %s/%s: %v", o.ns, o.name, err)
	}
	return obj
}

// update sets data.value through GuaranteedUpdate.
func (f Fixture) update(t *testing.T, o object, value string) *storage.Object {
	t.Helper()
	obj, err := f.Store.GuaranteedUpdate(testContext(t), f.key(o), storage.UpdateOptions{},
		func(cur *storage.Object) ([]byte, error) { return withValue(t, cur.Data, value), nil })
	if err != nil {
		t.Fatalf("GuaranteedUpdate %s/%s: %v", o.ns, o.name, err)
	}
	return obj
}

func (f Fixture) relabel(t *testing.T, o object, labels map[string]string) *storage.Object {
	t.Helper()
	obj, err := f.Store.GuaranteedUpdate(testContext(t), f.key(o), storage.UpdateOptions{},
		func(cur *storage.Object) ([]byte, error) { return withLabels(t, cur.Data, labels), nil })
	if err != nil {
		t.Fatalf("GuaranteedUpdate %s/%s: %v", o.ns, o.name, err)
	}
	return obj
}

func (f Fixture) delete(t *testing.T, o object) *storage.Object {
	t.Helper()
	obj, err := f.Store.Delete(testContext(t), f.key(o), storage.DeleteOptions{})
	if err != nil {
		t.Fatalf("Delete %s/%s: %v", o.ns, o.name, err)
	}
	return obj
}

// etcdRevision is etcd's current revision, read through Client.
func (f Fixture) etcdRevision(t *testing.T) int64 {
	t.Helper()
	resp, err := f.Client.Get(testContext(t), "/", clientv3.WithCountOnly())
	if err != nil {
		t.Fatalf("read etcd revision: %v", err)
	}
	return resp.Header.Revision
}

// compact makes revisions before rev unavailable.
func (f Fixture) compact(t *testing.T, rev int64) {
	t.Helper()
	ctx := testContext(t)
	if f.Compact != nil {
		if err := f.Compact(ctx, rev); err != nil {
			t.Fatalf("compact to %d: %v", rev, err)
		}
		return
	}
	if _, err := f.Client.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil {
		t.Fatalf("compact to %d: %v", rev, err)
	}
}

func (f Fixture) list(t *testing.T, prefix string, opts storage.ListOptions) *storage.List {
	t.Helper()
	l, err := f.Store.List(testContext(t), prefix, opts)
	if err != nil {
		t.Fatalf("List %s %+v: %v", prefix, opts, err)
	}
	return l
}

// names returns "ns/name" of each item, in order.
func names(t *testing.T, objs []*storage.Object) []string {
	t.Helper()
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		d := decode(t, o.Data)
		out = append(out, d.Metadata.Namespace+"/"+d.Metadata.Name)
	}
	return out
}

func (f Fixture) watch(t *testing.T, prefix string, opts storage.WatchOptions) storage.Watcher {
	t.Helper()
	w, err := f.Store.Watch(testContext(t), prefix, opts)
	if err != nil {
		t.Fatalf("Watch %s %+v: %v", prefix, opts, err)
	}
	t.Cleanup(w.Stop)
	return w
}

// nextEvent returns the watch's next event, failing if none arrives in
// time or the channel closes.
func nextEvent(t *testing.T, w storage.Watcher) storage.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed, want an event")
		}
		return ev
	case <-time.After(waitTimeout):
		t.Fatalf("no watch event within %v", waitTimeout)
	}
	panic("unreachable")
}

// waitClosed fails unless the watch's channel closes in time, and unless
// no events but the allowed ones arrive before the close.
func waitClosed(t *testing.T, w storage.Watcher) {
	t.Helper()
	deadline := time.After(waitTimeout)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return
			}
			t.Fatalf("event %s after the watch should have ended", describe(ev))
		case <-deadline:
			t.Fatalf("watch channel not closed within %v", waitTimeout)
		}
	}
}

// describe renders an event for failure messages.
func describe(ev storage.Event) string {
	switch {
	case ev.Type == storage.ErrorEvent:
		return fmt.Sprintf("ERROR(%v)", ev.Err)
	case ev.Object == nil:
		return string(ev.Type) + "(nil object)"
	case ev.Type == storage.Bookmark:
		return fmt.Sprintf("BOOKMARK@%d", ev.Object.Revision)
	}
	var m struct {
		Metadata struct{ Namespace, Name string }
	}
	_ = json.Unmarshal(ev.Object.Data, &m)
	return fmt.Sprintf("%s %s/%s@%d", ev.Type, m.Metadata.Namespace, m.Metadata.Name, ev.Object.Revision)
}

// expectEvent fails unless the next event has type typ, is about o and has
// revision rev (any revision when rev is 0), with Data's resourceVersion
// equal to its Revision.
func expectEvent(t *testing.T, w storage.Watcher, typ storage.EventType, o object, rev int64) storage.Event {
	t.Helper()
	ev := nextEvent(t, w)
	if ev.Type != typ || ev.Object == nil {
		t.Fatalf("event %s, want %s %s/%s", describe(ev), typ, o.ns, o.name)
	}
	d := decode(t, ev.Object.Data)
	if d.Metadata.Namespace != o.ns || d.Metadata.Name != o.name || (rev != 0 && ev.Object.Revision != rev) {
		t.Fatalf("event %s, want %s %s/%s@%d", describe(ev), typ, o.ns, o.name, rev)
	}
	if d.Metadata.ResourceVersion != strconv.FormatInt(ev.Object.Revision, 10) {
		t.Fatalf("event %s has resourceVersion %q", describe(ev), d.Metadata.ResourceVersion)
	}
	return ev
}
