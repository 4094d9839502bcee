package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	"github.com/miniapi/miniapi/storage"
	"github.com/miniapi/miniapi/storage/etcd3"
	"github.com/miniapi/miniapi/storage/etcd3/etcd3test"
)

// newRegistry serves every built-in kind over a fresh embedded etcd, as
// the server does (without caches: reads go to etcd).
func newRegistry(t testing.TB) *registry.Registry {
	t.Helper()
	if testing.Short() {
		t.Skip("needs etcd")
	}
	client := etcd3test.Start(t)
	reg := registry.New(registry.Config{Storage: func(*registry.Type, storage.ResourceKeys, storage.AttrFunc) (storage.Interface, func() error, error) {
		return etcd3.New(etcd3.Config{Client: client}), nil, nil
	}})
	get := func(ctx context.Context, name string) ([]byte, error) {
		out, err := storeFor(t, reg, "", "v1", "namespaces").Get(ctx, "", name, "")
		if err != nil {
			return nil, err
		}
		return out.Data, nil
	}
	for _, typ := range Types(Config{Namespaces: NamespaceGetter(get)}) {
		if err := reg.Add(typ); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { reg.Close() })
	return reg
}

func storeFor(t testing.TB, reg *registry.Registry, group, version, plural string) *registry.Store {
	t.Helper()
	res, ok := reg.Snapshot().Lookup(group, version, plural)
	if !ok {
		t.Fatalf("%s/%s %s not served", group, version, plural)
	}
	return res.Store
}

// create creates body (JSON) and returns the stored object.
func create(t *testing.T, s *registry.Store, ns, body string) *api.Object {
	t.Helper()
	out, err := s.Create(context.Background(), ns, []byte(body), registry.CreateOptions{})
	if err != nil {
		t.Fatalf("create %s: %v", body, err)
	}
	return decodeObject(t, out)
}

func decodeObject(t *testing.T, o *storage.Object) *api.Object {
	t.Helper()
	var obj api.Object
	if err := json.Unmarshal(o.Data, &obj); err != nil {
		t.Fatal(err)
	}
	return &obj
}

// wantStatus checks err is a StatusError with code and a message that
// starts with prefix.
func wantStatus(t *testing.T, err error, code int32, prefix string) *api.StatusError {
	t.Helper()
	var se *api.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want a %d Status", err, code)
	}
	if se.ErrStatus.Code != code || !strings.HasPrefix(se.ErrStatus.Message, prefix) {
		t.Fatalf("status %d %q, want %d %q...", se.ErrStatus.Code, se.ErrStatus.Message, code, prefix)
	}
	return se
}

// topField returns a top-level field of obj as compact JSON.
func topField(obj *api.Object, name string) string { return string(obj.Fields[name]) }
