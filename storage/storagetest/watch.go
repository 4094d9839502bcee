package storagetest

import (
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/miniapi/miniapi/storage"
)

// expectAdded reads n Added events, in any order, and fails unless they
// are about exactly the objects named ("ns/name").
func expectAdded(t *testing.T, w storage.Watcher, want ...string) {
	t.Helper()
	var got []string
	for range want {
		ev := nextEvent(t, w)
		if ev.Type != storage.Added || ev.Object == nil {
			t.Fatalf("event %s, want ADDED for one of %v", describe(ev), want)
		}
		got = append(got, names(t, []*storage.Object{ev.Object})...)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("initial events for %v, want %v", got, want)
	}
}

func rvString(rev int64) string { return strconv.FormatInt(rev, 10) }

func testWatchFromZero(t *testing.T, f Fixture) {
	a := object{ns: "ns", name: "a", value: "one"}
	f.create(t, a)
	f.create(t, object{ns: "other", name: "b"})
	existing := []string{"ns/a", "other/b"}
	for _, rv := range []string{"0", ""} {
		w := f.watch(t, f.Keys.Prefix(), storage.WatchOptions{ResourceVersion: rv})
		expectAdded(t, w, existing...)
		c := object{ns: "ns", name: "c" + rv}
		created := f.create(t, c)
		existing = append(existing, "ns/"+c.name)
		expectEvent(t, w, storage.Added, c, created.Revision)
		updated := f.update(t, c, "two")
		ev := expectEvent(t, w, storage.Modified, c, updated.Revision)
		if ev.PrevObject == nil || ev.PrevObject.Revision != created.Revision {
			t.Fatalf("MODIFIED PrevObject = %v, want the object at revision %d", ev.PrevObject, created.Revision)
		}
		if v := decode(t, ev.Object.Data).value; v != "two" {
			t.Fatalf("MODIFIED carries value %q, want two", v)
		}
		w.Stop()
	}
}

func testWatchFromN(t *testing.T, f Fixture) {
	a := object{ns: "ns", name: "a", value: "one"}
	b := object{ns: "ns", name: "b"}
	r1 := f.create(t, a).Revision
	r2 := f.update(t, a, "two").Revision
	r3 := f.create(t, b).Revision
	r4 := f.delete(t, a).Revision
	w := f.watch(t, f.Keys.Prefix(), storage.WatchOptions{ResourceVersion: rvString(r1)})
	expectEvent(t, w, storage.Modified, a, r2)
	expectEvent(t, w, storage.Added, b, r3)
	expectEvent(t, w, storage.Deleted, a, r4)
	// Nothing else happened after r1: the next event is the next change.
	sentinel := object{ns: "ns", name: "sentinel"}
	expectEvent(t, w, storage.Added, sentinel, f.create(t, sentinel).Revision)

	w = f.watch(t, f.Keys.Prefix(), storage.WatchOptions{ResourceVersion: rvString(r3)})
	expectEvent(t, w, storage.Deleted, a, r4)
	expectEvent(t, w, storage.Added, sentinel, 0)
}

func testWatchDeleted(t *testing.T, f Fixture) {
	w := f.watch(t, f.Keys.Prefix(), storage.WatchOptions{ResourceVersion: rvString(f.etcdRevision(t))})
	a := object{ns: "ns", name: "a", value: "one", labels: map[string]string{"k": "v"}}
	f.create(t, a)
	updated := f.update(t, a, "last")
	deleted := f.delete(t, a)
	expectEvent(t, w, storage.Added, a, 0)
	expectEvent(t, w, storage.Modified, a, updated.Revision)
	ev := expectEvent(t, w, storage.Deleted, a, deleted.Revision)
	d := decode(t, ev.Object.Data)
	if d.value != "last" || d.Metadata.Labels["k"] != "v" {
		t.Fatalf("DELETED carries %s, want the last state (value last, label k=v)", ev.Object.Data)
	}
	if ev.PrevObject != nil && ev.PrevObject.Revision != updated.Revision {
		t.Fatalf("DELETED PrevObject at revision %d, want %d", ev.PrevObject.Revision, updated.Revision)
	}
}

func testWatchSelectorTransitions(t *testing.T, f Fixture) {
	prod := map[string]string{"env": "prod"}
	dev := map[string]string{"env": "dev"}
	w := f.watch(t, f.Keys.Prefix(), storage.WatchOptions{
		ResourceVersion: rvString(f.etcdRevision(t)),
		Predicate:       storage.Predicate{Label: mustLabels(t, "env=prod")},
	})
	x := object{ns: "ns", name: "x", value: "one", labels: dev}
	f.create(t, x)
	y := object{ns: "ns", name: "y", labels: dev}
	f.create(t, y)
	f.delete(t, y)
	toProd := f.relabel(t, x, prod)
	ev := expectEvent(t, w, storage.Added, x, toProd.Revision)
	if decode(t, ev.Object.Data).Metadata.Labels["env"] != "prod" {
		t.Fatalf("ADDED on entering the selection carries %s", ev.Object.Data)
	}
	expectEvent(t, w, storage.Modified, x, f.update(t, x, "two").Revision)
	toDev := f.relabel(t, x, dev)
	ev = expectEvent(t, w, storage.Deleted, x, toDev.Revision)
	if d := decode(t, ev.Object.Data); d.Metadata.Labels["env"] != "prod" || d.value != "two" {
		t.Fatalf("DELETED on leaving the selection carries %s, want the previous state (env=prod, value two)", ev.Object.Data)
	}
	f.update(t, x, "three") // still dev: nothing
	sentinel := object{ns: "ns", name: "sentinel", labels: prod}
	expectEvent(t, w, storage.Added, sentinel, f.create(t, sentinel).Revision)
}

func testWatchCompacted(t *testing.T, f Fixture) {
	a := object{ns: "ns", name: "a"}
	r1 := f.create(t, a).Revision
	f.update(t, a, "two")
	f.update(t, a, "three")
	f.compact(t, f.etcdRevision(t))
	w := f.watch(t, f.Keys.Prefix(), storage.WatchOptions{ResourceVersion: rvString(r1)})
	ev := nextEvent(t, w)
	if ev.Type != storage.ErrorEvent || !storage.IsCompacted(ev.Err) {
		t.Fatalf("watch from compacted revision %d: event %s, want one ERROR that is Compacted", r1, describe(ev))
	}
	var serr *storage.Error
	if errors.As(ev.Err, &serr) && serr.ResourceVersion <= r1 {
		t.Errorf("Compacted error names revision %d as the oldest available, at or before the compacted %d", serr.ResourceVersion, r1)
	}
	waitClosed(t, w)
}

func testWatchStop(t *testing.T, f Fixture) {
	w := f.watch(t, f.Keys.Prefix(), storage.WatchOptions{ResourceVersion: "0"})
	w.Stop()
	w.Stop()
	waitClosed(t, w)

	// A watch stopped with undelivered events closes too.
	for _, n := range []string{"a", "b", "c"} {
		f.create(t, object{ns: "ns", name: n})
	}
	w = f.watch(t, f.Keys.Prefix(), storage.WatchOptions{ResourceVersion: "0"})
	w.Stop()
	deadline := time.After(waitTimeout)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return
			}
			if ev.Type != storage.Added {
				t.Fatalf("stopped watch delivered %s", describe(ev))
			}
		case <-deadline:
			t.Fatalf("stopped watch not closed within %v", waitTimeout)
		}
	}
}

func testWatchSendInitialEvents(t *testing.T, f Fixture) {
	f.create(t, object{ns: "ns", name: "a"})
	last := f.create(t, object{ns: "ns", name: "b"}).Revision
	yes := true
	w := f.watch(t, f.Keys.Prefix(), storage.WatchOptions{SendInitialEvents: &yes, AllowBookmarks: true})
	expectAdded(t, w, "ns/a", "ns/b")
	ev := nextEvent(t, w)
	if ev.Type != storage.Bookmark || !ev.InitialEventsEnd || ev.Object == nil {
		t.Fatalf("event %s after the initial events, want the initial-events-end BOOKMARK", describe(ev))
	}
	if ev.Object.Revision < last {
		t.Fatalf("initial-events-end bookmark at revision %d, before the last write %d", ev.Object.Revision, last)
	}
	c := object{ns: "ns", name: "c"}
	created := f.create(t, c)
	for {
		ev := nextEvent(t, w)
		if ev.Type == storage.Bookmark && !ev.InitialEventsEnd {
			continue // a periodic bookmark is allowed
		}
		if ev.Type != storage.Added || ev.Object.Revision != created.Revision {
			t.Fatalf("event %s, want ADDED ns/c@%d", describe(ev), created.Revision)
		}
		break
	}
}

func testWatchNoInitialEvents(t *testing.T, f Fixture) {
	f.create(t, object{ns: "ns", name: "a"})
	no := false
	w := f.watch(t, f.Keys.Prefix(), storage.WatchOptions{SendInitialEvents: &no})
	b := object{ns: "ns", name: "b"}
	expectEvent(t, w, storage.Added, b, f.create(t, b).Revision)
}

func testWatchOneKey(t *testing.T, f Fixture) {
	a := object{ns: "ns", name: "a"}
	b := object{ns: "ns", name: "b"}
	f.create(t, a)
	f.create(t, b)
	w := f.watch(t, f.key(a), storage.WatchOptions{ResourceVersion: rvString(f.etcdRevision(t))})
	f.update(t, b, "two")
	expectEvent(t, w, storage.Modified, a, f.update(t, a, "two").Revision)

	w = f.watch(t, f.key(a), storage.WatchOptions{ResourceVersion: "0"})
	expectAdded(t, w, "ns/a")
	expectEvent(t, w, storage.Deleted, a, f.delete(t, a).Revision)
}

func testWatchInvalidResourceVersion(t *testing.T, f Fixture) {
	w, err := f.Store.Watch(testContext(t), f.Keys.Prefix(), storage.WatchOptions{ResourceVersion: "abc"})
	if err == nil {
		w.Stop()
	}
	if !storage.IsInvalid(err) {
		t.Fatalf("watch at resourceVersion abc: %v, want Invalid", err)
	}
}
