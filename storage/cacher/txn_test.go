package cacher

import (
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/miniapi/miniapi/storage"
)

// TestTransactionIsOneChange writes three objects and deletes a fourth in
// one etcd transaction, as a snapshot load does (or another etcd client
// might): the etcd3 watch marks the events of the revision, and the
// cache applies them together, so a list never shows part of it and
// every watch gets every event.
func TestTransactionIsOneChange(t *testing.T) {
	h := newHarness(t, Config{})
	gone := h.create("ns", "gone", nil)
	direct, err := h.store.Watch(h.ctx, testPrefix, storage.WatchOptions{ResourceVersion: storage.FormatResourceVersion(gone.Revision)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(direct.Stop)
	cached := h.watch(testPrefix, storage.WatchOptions{ResourceVersion: storage.FormatResourceVersion(gone.Revision)})

	resp, err := h.client.Txn(h.ctx).Then(
		clientv3.OpPut(testPrefix+"ns/a", string(cmData("ns", "a", nil, "1"))),
		clientv3.OpPut(testPrefix+"ns/b", string(cmData("ns", "b", nil, "1"))),
		clientv3.OpDelete(testPrefix+"ns/gone"),
		clientv3.OpPut(testPrefix+"other/c", string(cmData("other", "c", nil, "1"))),
	).Commit()
	if err != nil {
		t.Fatal(err)
	}
	rev := resp.Header.Revision

	type seen struct {
		typ  storage.EventType
		key  string
		more bool
	}
	want := []seen{
		{storage.Added, testPrefix + "ns/a", true},
		{storage.Added, testPrefix + "ns/b", true},
		{storage.Deleted, testPrefix + "ns/gone", true},
		{storage.Added, testPrefix + "other/c", false},
	}
	for i, w := range want {
		ev := next(t, direct)
		if got := (seen{ev.Type, ev.Object.Key, ev.MoreAtRevision}); got != w || ev.Object.Revision != rev {
			t.Errorf("etcd3 event %d: got %+v at %d, want %+v at %d", i, got, ev.Object.Revision, w, rev)
		}
	}
	for i, w := range want {
		ev := next(t, cached)
		if ev.Type != w.typ || ev.Object.Key != w.key || ev.Object.Revision != rev {
			t.Errorf("cached event %d: got %s %s at %d, want %s %s at %d", i, ev.Type, ev.Object.Key, ev.Object.Revision, w.typ, w.key, rev)
		}
	}

	h.waitRevision(rev)
	l, err := h.c.List(h.ctx, testPrefix, storage.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range l.Items {
		keys = append(keys, o.Key)
	}
	if len(keys) != 3 || keys[0] != testPrefix+"ns/a" || keys[1] != testPrefix+"ns/b" || keys[2] != testPrefix+"other/c" {
		t.Errorf("list at %d: got %v, want ns/a, ns/b, other/c", l.Revision, keys)
	}
	// A watch from before the transaction, started after it, replays
	// all of it from history.
	late := h.watch(testPrefix+"ns/", storage.WatchOptions{ResourceVersion: storage.FormatResourceVersion(rev - 1)})
	for i, w := range want[:3] {
		ev := next(t, late)
		if ev.Type != w.typ || ev.Object.Key != w.key {
			t.Errorf("replayed event %d: got %s %s, want %s %s", i, ev.Type, ev.Object.Key, w.typ, w.key)
		}
	}
}
