package versioned

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/storage"
	"github.com/miniapi/miniapi/storage/etcd3"
	"github.com/miniapi/miniapi/storage/etcd3/etcd3test"
	"github.com/miniapi/miniapi/storage/storagetest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// The decorator keeps every storage.Interface promise.
func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storagetest.Fixture {
		client := etcd3test.Start(t)
		return storagetest.Fixture{
			Store:  New(etcd3.New(etcd3.Config{Client: client}), Config{Served: "example.com/v2", Stored: "example.com/v1"}),
			Keys:   storage.ResourceKeys{Group: "example.com", Resource: "widgets", Namespaced: true},
			Client: client,
		}
	})
}

func TestSetAPIVersion(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"first member", `{"apiVersion":"example.com/v1","kind":"Widget","spec":{"apiVersion":"x"}}`, `{"apiVersion":"example.com/v2","kind":"Widget","spec":{"apiVersion":"x"}}`},
		{"already served", `{"apiVersion":"example.com/v2","kind":"Widget"}`, `{"apiVersion":"example.com/v2","kind":"Widget"}`},
		{"not first", `{"kind":"Widget","apiVersion":"example.com/v1"}`, `{"apiVersion":"example.com/v2","kind":"Widget"}`},
		{"missing", `{"kind":"Widget"}`, `{"apiVersion":"example.com/v2","kind":"Widget"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := setAPIVersion([]byte(tc.in), "example.com/v2")
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
	if _, err := setAPIVersion([]byte(`[1]`), "v"); err == nil {
		t.Error("a non-object was rewritten")
	}
}

// Stored bytes carry the stored version; every read path shows the
// served one.
func TestRewrite(t *testing.T) {
	client := etcd3test.Start(t)
	under := etcd3.New(etcd3.Config{Client: client})
	s := New(under, Config{Served: "example.com/v2", Stored: "example.com/v1"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	key := "/registry/example.com/widgets/ns/a"
	w, err := s.Watch(ctx, "/registry/example.com/widgets/", storage.WatchOptions{ResourceVersion: "1"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	obj, err := s.Create(ctx, key, []byte(`{"apiVersion":"example.com/v2","kind":"Widget","metadata":{"name":"a","namespace":"ns"}}`))
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, data []byte, want string) {
		t.Helper()
		var m struct {
			APIVersion string `json:"apiVersion"`
		}
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		if m.APIVersion != want {
			t.Errorf("%s: apiVersion %q, want %q", what, m.APIVersion, want)
		}
	}
	check("create result", obj.Data, "example.com/v2")
	raw, err := under.Get(ctx, key, storage.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	check("stored", raw.Data, "example.com/v1")
	got, err := s.Get(ctx, key, storage.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	check("get", got.Data, "example.com/v2")
	select {
	case ev := <-w.ResultChan():
		check("watch event", ev.Object.Data, "example.com/v2")
	case <-ctx.Done():
		t.Fatal("no watch event")
	}
	// An update that returns what it was shown writes nothing.
	same, err := s.GuaranteedUpdate(ctx, key, storage.UpdateOptions{}, func(cur *storage.Object) ([]byte, error) {
		check("tryUpdate input", cur.Data, "example.com/v2")
		return cur.Data, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if same.Revision != obj.Revision {
		t.Errorf("no-op update moved the revision from %d to %d", obj.Revision, same.Revision)
	}
}

// shapeConverter converts between example.com/v1 (spec.size) and
// example.com/v2 (spec.replicas), counting calls, or fails with fail.
type shapeConverter struct {
	mu        sync.Mutex
	calls     int
	converted int
	fail      error
}

func (c *shapeConverter) convert(data []byte, to string) ([]byte, error) {
	if c.fail != nil {
		return nil, c.fail
	}
	var obj map[string]any
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, err
	}
	spec, _ := obj["spec"].(map[string]any)
	from, field := "replicas", "size"
	if to == "example.com/v2" {
		from, field = field, from
	}
	if v, ok := spec[from]; ok {
		spec[field] = v
		delete(spec, from)
	}
	obj["apiVersion"] = to
	return json.Marshal(obj)
}

func (c *shapeConverter) config() Config {
	count := func(n int) {
		c.mu.Lock()
		c.calls++
		c.converted += n
		c.mu.Unlock()
	}
	return Config{
		Served: "example.com/v2", Stored: "example.com/v1",
		Resource: api.GroupResource{Group: "example.com", Resource: "widgets"},
		ToStored: func(data []byte) ([]byte, error) { count(1); return c.convert(data, "example.com/v1") },
		ToServed: func(data []byte) ([]byte, error) { count(1); return c.convert(data, "example.com/v2") },
		ToServedList: func(data [][]byte) ([][]byte, error) {
			count(len(data))
			out := make([][]byte, len(data))
			for i, d := range data {
				var err error
				if out[i], err = c.convert(d, "example.com/v2"); err != nil {
					return nil, err
				}
			}
			return out, nil
		},
	}
}

func (c *shapeConverter) counts() (calls, converted int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls, c.converted
}

// A converter that takes several objects converts a list page, and a
// watch event with its previous state, in one call.
func TestConvertBatches(t *testing.T) {
	client := etcd3test.Start(t)
	under := etcd3.New(etcd3.Config{Client: client})
	conv := &shapeConverter{}
	s := New(under, conv.config())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	prefix := "/registry/example.com/widgets/"
	for _, name := range []string{"a", "b", "c"} {
		if _, err := under.Create(ctx, prefix+"ns/"+name, []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"`+name+`","namespace":"ns"},"spec":{"size":1}}`)); err != nil {
			t.Fatal(err)
		}
	}
	l, err := s.List(ctx, prefix, storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if calls, n := conv.counts(); calls != 1 || n != 3 || len(l.Items) != 3 {
		t.Errorf("list of 3: %d calls converting %d objects, %d items", calls, n, len(l.Items))
	}
	if !strings.Contains(string(l.Items[0].Data), `"replicas":1`) {
		t.Errorf("listed %s", l.Items[0].Data)
	}
	w, err := s.Watch(ctx, prefix, storage.WatchOptions{ResourceVersion: storage.FormatResourceVersion(l.Revision)})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := under.GuaranteedUpdate(ctx, prefix+"ns/a", storage.UpdateOptions{}, func(*storage.Object) ([]byte, error) {
		return []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a","namespace":"ns"},"spec":{"size":2}}`), nil
	}); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-w.ResultChan():
		if ev.Type != storage.Modified || ev.PrevObject == nil || !strings.Contains(string(ev.Object.Data), `"replicas":2`) || !strings.Contains(string(ev.PrevObject.Data), `"replicas":1`) {
			t.Errorf("event %v %s", ev.Type, ev.Object.Data)
		}
	case <-ctx.Done():
		t.Fatal("no watch event")
	}
	if calls, n := conv.counts(); calls != 2 || n != 5 {
		t.Errorf("after one event: %d calls converting %d objects, want 2 and 5", calls, n)
	}
}

// A failed conversion is answered in kube-apiserver's words: a write 500
// with the converter's message, a read 500 InternalError for a corrupt
// object, a list 500 StorageReadError.
func TestConversionErrors(t *testing.T) {
	client := etcd3test.Start(t)
	under := etcd3.New(etcd3.Config{Client: client})
	conv := &shapeConverter{fail: errors.New("conversion webhook for example.com/v1, Kind=Widget failed: down")}
	s := New(under, conv.config())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	key := "/registry/example.com/widgets/ns/a"
	status := func(err error) api.Status {
		t.Helper()
		var se *api.StatusError
		if !errors.As(err, &se) {
			t.Fatalf("%v is not a Status", err)
		}
		return se.Status()
	}
	_, err := s.Create(ctx, key, []byte(`{"apiVersion":"example.com/v2","kind":"Widget","metadata":{"name":"a","namespace":"ns"}}`))
	if st := status(err); st.Code != 500 || st.Reason != "" || st.Message != conv.fail.Error() {
		t.Errorf("create: %+v", st)
	}
	obj, err := under.Create(ctx, key, []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a","namespace":"ns"}}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Get(ctx, key, storage.GetOptions{})
	want := fmt.Sprintf("StorageError: corrupt object, Code: 7, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision=%d: %s", key, obj.Revision, conv.fail)
	if st := status(err); st.Code != 500 || st.Reason != api.ReasonInternalError || st.Message != "Internal error occurred: "+want {
		t.Errorf("get: %+v", st)
	}
	_, err = s.List(ctx, "/registry/example.com/widgets/", storage.ListOptions{})
	st := status(err)
	if st.Code != 500 || st.Reason != "StorageReadError" || st.Message != "failed to read one or more widgets.example.com from the storage: "+want ||
		st.Details == nil || len(st.Details.Causes) != 1 || st.Details.Causes[0].Field != key {
		t.Errorf("list: %+v", st)
	}
}
