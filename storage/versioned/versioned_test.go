package versioned

import (
	"context"
	"encoding/json"
	"testing"
	"time"

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
