package etcd3

import (
	"context"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/namespace"

	"github.com/miniapi/miniapi/storage"
)

// TestStoreWatchesShareOneStream: the embedded member's watches of one
// server (one WatchPrefix) share one of the member's watch streams; a
// watch nobody reads holds up no other; the stream closes with its last
// watch.
func TestStoreWatchesShareOneStream(t *testing.T) {
	ctx := context.Background()
	e, err := StartEmbedded(ctx, EmbeddedConfig{Dir: t.TempDir(), UnsafeNoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	// Two servers: one over the member's keys, one over /x, as a
	// logical cluster (server.SharedEtcd).
	own := New(Config{Client: e.Client})
	xc := clientv3.NewCtxClient(ctx)
	xc.KV = namespace.NewKV(e.Client.KV, "/x")
	logical := New(Config{Client: xc, Watcher: e.Client.Watcher, WatchPrefix: "/x"})

	groups := func() map[string]int {
		e.watches.mu.Lock()
		defer e.watches.mu.Unlock()
		out := map[string]int{}
		for name, g := range e.watches.groups {
			out[name] = g.refs
		}
		return out
	}
	var watches []storage.Watcher
	watch := func(s *Store, prefix string) storage.Watcher {
		w, err := s.Watch(ctx, prefix, storage.WatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		watches = append(watches, w)
		return w
	}
	slow := watch(own, "/slow/")
	fast := watch(own, "/fast/")
	for i := range 3 {
		watch(own, fmt.Sprintf("/other-%d/", i))
		watch(logical, fmt.Sprintf("/other-%d/", i))
	}
	xfast := watch(logical, "/fast/")
	// A Store's watch opens its member watch on its own goroutine.
	deadline := time.Now().Add(10 * time.Second)
	for g := groups(); g[""] != 5 || g["/x"] != 4; g = groups() {
		if time.Now().After(deadline) {
			t.Fatalf("watch streams by server (open watches each): %v, want one for each server, with 5 and 4", g)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if g := groups(); len(g) != 2 {
		t.Fatalf("watch streams by server: %v, want 2", g)
	}

	// More events than the unread watch and its stream can buffer.
	const writes = 3 * watchBufferSize
	for i := range writes {
		if _, err := own.Create(ctx, fmt.Sprintf("/slow/%d", i), []byte(`{"metadata":{}}`)); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []*Store{own, logical} {
		if _, err := s.Create(ctx, "/fast/a", []byte(`{"metadata":{}}`)); err != nil {
			t.Fatal(err)
		}
	}
	for name, w := range map[string]storage.Watcher{"own": fast, "logical": xfast} {
		select {
		case ev := <-w.ResultChan():
			if ev.Type != storage.Added || ev.Object.Key != "/fast/a" {
				t.Errorf("%s server's watch: %s %+v, want Added /fast/a", name, ev.Type, ev.Object)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s server's watch got nothing while another watch was not read", name)
		}
	}
	got := 0
	for got < writes {
		select {
		case ev := <-slow.ResultChan():
			if ev.Type != storage.Added || ev.Object.Key != fmt.Sprintf("/slow/%d", got) {
				t.Fatalf("slow watch event %d: %s %+v", got, ev.Type, ev.Object)
			}
			got++
		case <-time.After(10 * time.Second):
			t.Fatalf("the watch read late got %d of %d events", got, writes)
		}
	}

	for _, w := range watches {
		w.Stop()
	}
	for g := groups(); len(g) > 0; g = groups() {
		if time.Now().After(deadline.Add(10 * time.Second)) {
			t.Fatalf("watch streams left after every watch stopped: %v", g)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
