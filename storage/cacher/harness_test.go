package cacher

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/miniapi/miniapi/storage"
	"github.com/miniapi/miniapi/storage/etcd3"
	"github.com/miniapi/miniapi/storage/etcd3/etcd3test"
)

// waitLimit bounds every wait in these tests. It is a deadline for
// something that should happen, never a measurement.
const waitLimit = 20 * time.Second

// harness is a Cacher over an etcd3 Store over an embedded etcd member.
type harness struct {
	t      testing.TB
	ctx    context.Context
	client *clientv3.Client
	store  *etcd3.Store
	c      *Cacher
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newHarness starts etcd and a Cacher for testPrefix; cfg.Prefix is
// filled in. The cacher is ready when it returns and closed at cleanup.
func newHarness(t testing.TB, cfg Config) *harness {
	t.Helper()
	client := etcd3test.Start(t)
	store := etcd3.New(etcd3.Config{Client: client})
	return newHarnessOver(t, client, store, store, cfg)
}

func newHarnessOver(t testing.TB, client *clientv3.Client, store *etcd3.Store, under storage.Interface, cfg Config) *harness {
	t.Helper()
	cfg.Prefix = testPrefix
	if cfg.Logger == nil {
		cfg.Logger = quietLogger()
	}
	c, err := New(under, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := c.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, ctx: context.Background(), client: client, store: store, c: c}
}

func cmData(ns, name string, lbls map[string]string, value string) []byte {
	meta := map[string]any{"name": name, "namespace": ns}
	if lbls != nil {
		meta["labels"] = lbls
	}
	m, _ := json.Marshal(meta)
	v, _ := json.Marshal(value)
	return fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":%s,"data":{"v":%s}}`, m, v)
}

func (h *harness) create(ns, name string, lbls map[string]string) *storage.Object {
	h.t.Helper()
	o, err := h.c.Create(h.ctx, testPrefix+ns+"/"+name, cmData(ns, name, lbls, "0"))
	if err != nil {
		h.t.Fatal(err)
	}
	return o
}

func (h *harness) update(ns, name string, lbls map[string]string, value string) *storage.Object {
	h.t.Helper()
	o, err := h.c.GuaranteedUpdate(h.ctx, testPrefix+ns+"/"+name, storage.UpdateOptions{},
		func(*storage.Object) ([]byte, error) { return cmData(ns, name, lbls, value), nil })
	if err != nil {
		h.t.Fatal(err)
	}
	return o
}

func (h *harness) del(ns, name string) *storage.Object {
	h.t.Helper()
	o, err := h.c.Delete(h.ctx, testPrefix+ns+"/"+name, storage.DeleteOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return o
}

// waitRevision waits until the cache reflects rev.
func (h *harness) waitRevision(rev int64) {
	h.t.Helper()
	if err := h.c.wc.waitUntil(h.ctx, rev, waitLimit, "", nil); err != nil {
		h.t.Fatalf("cache did not reach revision %d: %v", rev, err)
	}
}

func (h *harness) watch(prefix string, opts storage.WatchOptions) storage.Watcher {
	h.t.Helper()
	w, err := h.c.Watch(h.ctx, prefix, opts)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(w.Stop)
	return w
}

// next returns the watcher's next event, failing the test if none comes
// within waitLimit or the channel closes.
func next(t testing.TB, w storage.Watcher) storage.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch channel closed")
		}
		return ev
	case <-time.After(waitLimit):
		t.Fatal("no watch event")
	}
	return storage.Event{}
}

// expectClosed waits for the channel to close, returning the events that
// arrived before.
func expectClosed(t testing.TB, w storage.Watcher) []storage.Event {
	t.Helper()
	var evs []storage.Event
	deadline := time.After(waitLimit)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return evs
			}
			evs = append(evs, ev)
		case <-deadline:
			t.Fatal("watch channel not closed")
		}
	}
}

// rvOf returns the resourceVersion in o's data.
func rvOf(t testing.TB, o *storage.Object) string {
	t.Helper()
	var m struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(o.Data, &m); err != nil {
		t.Fatal(err)
	}
	return m.Metadata.ResourceVersion
}

func labelsOf(t testing.TB, o *storage.Object) map[string]string {
	t.Helper()
	return mustAttrs(t, o).Labels
}
