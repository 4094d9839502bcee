package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/builtin"
	"github.com/miniapi/miniapi/registry"
	"github.com/miniapi/miniapi/storage"
	"github.com/miniapi/miniapi/storage/cacher"
	"github.com/miniapi/miniapi/storage/etcd3"
	"github.com/miniapi/miniapi/storage/etcd3/etcd3test"
)

// widgetType is a type as a resources file declares it, served beside
// the built-ins.
var widgetType = registry.Type{
	Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets",
	Namespaced: true, Strategy: registry.GenericStrategy{Status: true},
}

// waitTimeout bounds every wait for a controller to act.
const waitTimeout = 15 * time.Second

// fixture is a registry over a fresh embedded etcd, each type behind a
// watch cache as the server wires it, with the selected controllers
// running.
type fixture struct {
	t   *testing.T
	reg *registry.Registry
}

// newFixture starts the controllers that selection (in --controllers
// form) picks; they stop, and are waited for, when the test ends, before
// the registry and etcd close.
func newFixture(t *testing.T, selection ...string) *fixture {
	t.Helper()
	if testing.Short() {
		t.Skip("needs etcd")
	}
	sel, err := Select(selection)
	if err != nil {
		t.Fatal(err)
	}
	client := etcd3test.Start(t)
	var cachers []*cacher.Cacher
	reg := registry.New(registry.Config{
		Storage: func(_ *registry.Type, keys storage.ResourceKeys, attrs storage.AttrFunc) (storage.Interface, func() error, error) {
			c, err := cacher.New(etcd3.New(etcd3.Config{Client: client}), cacher.Config{Prefix: keys.Prefix(), Attrs: attrs})
			if err != nil {
				return nil, nil, err
			}
			cachers = append(cachers, c)
			return c, c.Close, nil
		},
		DisableGarbageCollection: !sel.Enabled(GarbageCollectorName),
	})
	t.Cleanup(func() { reg.Close() })
	for _, typ := range append(builtin.Types(builtin.Config{}), widgetType) {
		if err := reg.Add(typ); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	for _, c := range cachers {
		if err := c.Ready(ctx); err != nil {
			t.Fatal(err)
		}
	}
	stop := runControllers(New(Config{Registry: reg, Selection: sel}))
	t.Cleanup(stop)
	return &fixture{t: t, reg: reg}
}

// runControllers runs cs and returns a function that stops them and
// waits until they have returned.
func runControllers(cs []Controller) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Go(func() { c.Run(ctx) })
	}
	return func() {
		cancel()
		wg.Wait()
	}
}

// store returns the Store serving plural in group.
func (f *fixture) store(group, plural string) *registry.Store {
	f.t.Helper()
	for _, res := range f.reg.Snapshot().Resources() {
		if res.Type.Group == group && res.Type.Plural == plural {
			return res.Store
		}
	}
	f.t.Fatalf("%s.%s is not served", plural, group)
	return nil
}

func (f *fixture) configMaps() *registry.Store  { return f.store("", "configmaps") }
func (f *fixture) namespaces() *registry.Store  { return f.store("", "namespaces") }
func (f *fixture) widgets() *registry.Store     { return f.store("example.com", "widgets") }
func (f *fixture) ctx() context.Context         { return context.Background() }
func (f *fixture) namespace(name string) string { f.create(f.namespaces(), "", name, nil); return name }

// create stores a new object named name in ns with the given metadata
// fields merged in (finalizers, ownerReferences, ...), and returns it.
func (f *fixture) create(s *registry.Store, ns, name string, metadata map[string]any) *api.Object {
	f.t.Helper()
	m := map[string]any{"name": name}
	for k, v := range metadata {
		m[k] = v
	}
	body, err := json.Marshal(map[string]any{"metadata": m})
	if err != nil {
		f.t.Fatal(err)
	}
	var obj api.Object
	if err := json.Unmarshal(body, &obj); err != nil {
		f.t.Fatal(err)
	}
	out, err := s.CreateObject(f.ctx(), ns, &obj, registry.CreateOptions{})
	if err != nil {
		f.t.Fatalf("create %s %s/%s: %v", s.Type().Plural, ns, name, err)
	}
	return decodeObj(f.t, out)
}

// get returns the object, or nil if it does not exist.
func (f *fixture) get(s *registry.Store, ns, name string) *api.Object {
	f.t.Helper()
	out, err := s.Get(f.ctx(), ns, name, "")
	if api.IsNotFound(err) {
		return nil
	}
	if err != nil {
		f.t.Fatal(err)
	}
	return decodeObj(f.t, out)
}

// delete deletes the object with propagation policy and returns what the
// registry answered.
func (f *fixture) delete(s *registry.Store, ns, name, policy string) *api.Object {
	f.t.Helper()
	out, _, err := s.Delete(f.ctx(), ns, name, registry.DeleteOptions{PropagationPolicy: policy})
	if err != nil {
		f.t.Fatalf("delete %s %s/%s: %v", s.Type().Plural, ns, name, err)
	}
	return decodeObj(f.t, out)
}

// dropFinalizers removes every finalizer from the object, retrying when
// a controller changed it meanwhile.
func (f *fixture) dropFinalizers(s *registry.Store, ns, name string) {
	f.t.Helper()
	for attempt := 1; ; attempt++ {
		obj := f.get(s, ns, name)
		if obj == nil {
			f.t.Fatalf("%s %s/%s is gone", s.Type().Plural, ns, name)
		}
		obj.Metadata.Finalizers = nil
		_, err := s.UpdateObject(f.ctx(), ns, name, obj, registry.UpdateOptions{})
		if err == nil {
			return
		}
		if !api.IsConflict(err) || attempt == 10 {
			f.t.Fatal(err)
		}
	}
}

// ownerRef is an ownerReference to owner, a ConfigMap.
func ownerRef(owner *api.Object, block bool) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "name": owner.Metadata.Name, "uid": owner.Metadata.UID,
		"blockOwnerDeletion": block,
	}
}

// waitFor waits, bounded by waitTimeout, until cond holds. The
// controllers act asynchronously; this re-checks on a short tick.
func (f *fixture) waitFor(what string, cond func() bool) {
	f.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			f.t.Fatalf("timed out after %v waiting for %s", waitTimeout, what)
		}
		<-tick.C
	}
}

// waitGone waits until the object no longer exists.
func (f *fixture) waitGone(s *registry.Store, ns, name string) {
	f.t.Helper()
	f.waitFor(fmt.Sprintf("%s %s/%s to go", s.Type().Plural, ns, name), func() bool { return f.get(s, ns, name) == nil })
}

func decodeObj(t *testing.T, o *storage.Object) *api.Object {
	t.Helper()
	var obj api.Object
	if err := json.Unmarshal(o.Data, &obj); err != nil {
		t.Fatal(err)
	}
	return &obj
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
