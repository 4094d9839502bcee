package cacher

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/miniapi/miniapi/storage"
)

const testPrefix = "/registry/core/configmaps/"

// testObj returns an object at key in api.Object's canonical encoding,
// with resourceVersion rev and the given labels.
func testObj(key string, rev int64, lbls map[string]string) *storage.Object {
	ns, name, _ := strings.Cut(strings.TrimPrefix(key, testPrefix), "/")
	meta := map[string]any{"name": name, "namespace": ns, "resourceVersion": fmt.Sprint(rev)}
	if lbls != nil {
		meta["labels"] = lbls
	}
	m, _ := json.Marshal(meta)
	data := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":%s}`, m)
	return &storage.Object{Key: key, Revision: rev, Data: []byte(data)}
}

func mustAttrs(t testing.TB, o *storage.Object) storage.Attrs {
	t.Helper()
	a, err := storage.DefaultAttrs(o.Data)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func applyTo(t testing.TB, wc *watchCache, typ storage.EventType, o *storage.Object) *event {
	t.Helper()
	var a storage.Attrs
	if typ != storage.Deleted {
		a = mustAttrs(t, o)
	}
	if out := wc.applyRun([]storage.Event{{Type: typ, Object: o}}, []storage.Attrs{a}); len(out) > 0 {
		return out[0]
	}
	return nil
}

func listed(t testing.TB, wc *watchCache, rev int64, objs ...*storage.Object) []*event {
	t.Helper()
	attrs := make([]storage.Attrs, len(objs))
	for i, o := range objs {
		attrs[i] = mustAttrs(t, o)
	}
	return wc.replace(objs, attrs, rev)
}

func k(name string) string { return testPrefix + "ns/" + name }

func TestWatchCacheEventsAfter(t *testing.T) {
	all := filter{prefix: testPrefix, all: true}
	revs := func(es []*event) []int64 {
		var r []int64
		for _, e := range es {
			r = append(r, e.rev)
		}
		return r
	}
	// An empty history right after a list at 10: the off-by-one fixed in
	// kubernetes PR #49992 rejected a watch from exactly the list's
	// revision.
	wc := newWatchCache(2, realClock{})
	listed(t, wc, 10)
	steps := []struct {
		name   string
		append int64 // 0: none
		from   int64
		ok     bool
		want   []int64
	}{
		{"empty history, from the list revision", 0, 10, true, nil},
		{"empty history, one before", 0, 9, false, nil},
		{"empty history, one past", 0, 11, true, nil},
		{"one event, from the list revision", 11, 10, true, []int64{11}},
		{"one event, exactly its revision", 0, 11, true, nil},
		{"full, from the list revision", 12, 10, true, []int64{11, 12}},
		{"evicted 11, from the list revision", 13, 10, false, nil},
		{"evicted 11, exactly the evicted revision", 0, 11, true, []int64{12, 13}},
		{"evicted 11, exactly the oldest", 0, 12, true, []int64{13}},
		{"evicted 11, exactly the newest", 0, 13, true, nil},
		{"evicted 11, one past the newest", 0, 14, true, nil},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			if s.append > 0 {
				applyTo(t, wc, storage.Added, testObj(k(fmt.Sprint(s.append)), s.append, nil))
			}
			wc.mu.RLock()
			got, ok := wc.eventsAfterLocked(s.from, &all)
			wc.mu.RUnlock()
			if ok != s.ok || !slices.Equal(revs(got), s.want) {
				t.Fatalf("eventsAfter(%d) = %v, %v; want %v, %v", s.from, revs(got), ok, s.want, s.ok)
			}
		})
	}
}

func TestWatchCacheApply(t *testing.T) {
	wc := newWatchCache(10, realClock{})
	listed(t, wc, 3)
	steps := []struct {
		name     string
		typ      storage.EventType
		obj      *storage.Object
		wantTyp  storage.EventType // "" means no event
		wantPrev int64
		wantRev  int64
		wantObjs int
	}{
		{"create", storage.Added, testObj(k("a"), 4, nil), storage.Added, 0, 4, 1},
		{"update", storage.Modified, testObj(k("a"), 5, nil), storage.Modified, 4, 5, 1},
		{"backend says added, cache knows it", storage.Added, testObj(k("a"), 6, nil), storage.Modified, 5, 6, 1},
		{"replayed old revision", storage.Modified, testObj(k("a"), 6, nil), "", 0, 6, 1},
		{"delete", storage.Deleted, testObj(k("a"), 7, nil), storage.Deleted, 6, 7, 0},
		{"delete of an unknown key", storage.Deleted, testObj(k("b"), 8, nil), "", 0, 8, 0},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			e := applyTo(t, wc, s.typ, s.obj)
			switch {
			case s.wantTyp == "" && e != nil:
				t.Fatalf("got event %v", e.typ)
			case s.wantTyp != "" && (e == nil || e.typ != s.wantTyp):
				t.Fatalf("got %+v, want %v", e, s.wantTyp)
			case e != nil && e.prev != nil && e.prev.Revision != s.wantPrev:
				t.Fatalf("prev revision %d, want %d", e.prev.Revision, s.wantPrev)
			}
			if got := wc.revision(); got != s.wantRev {
				t.Fatalf("revision %d, want %d", got, s.wantRev)
			}
			if len(wc.byKey) != s.wantObjs || len(wc.sorted) != s.wantObjs {
				t.Fatalf("%d/%d objects, want %d", len(wc.byKey), len(wc.sorted), s.wantObjs)
			}
		})
	}
}

func TestWatchCacheRelistSynthesizesDifference(t *testing.T) {
	wc := newWatchCache(10, realClock{})
	listed(t, wc, 7, testObj(k("a"), 5, nil), testObj(k("b"), 6, nil), testObj(k("c"), 7, nil))
	applyTo(t, wc, storage.Added, testObj(k("e"), 10, nil))

	events := listed(t, wc, 15, testObj(k("a"), 5, nil), testObj(k("b"), 13, nil), testObj(k("d"), 12, nil), testObj(k("e"), 10, nil))
	type ev struct {
		typ storage.EventType
		key string
		rev int64
	}
	var got []ev
	for _, e := range events {
		got = append(got, ev{e.typ, e.key, e.rev})
		var m struct {
			Metadata struct{ ResourceVersion string } `json:"metadata"`
		}
		if err := json.Unmarshal(e.obj.Data, &m); err != nil || m.Metadata.ResourceVersion != fmt.Sprint(e.rev) {
			t.Fatalf("%s %s: data resourceVersion %q, want %d", e.typ, e.key, m.Metadata.ResourceVersion, e.rev)
		}
	}
	want := []ev{
		{storage.Deleted, k("c"), 11},
		{storage.Added, k("d"), 12},
		{storage.Modified, k("b"), 13},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("events %v\nwant %v", got, want)
	}
	all := filter{prefix: testPrefix, all: true}
	wc.mu.RLock()
	defer wc.mu.RUnlock()
	if _, ok := wc.eventsAfterLocked(12, &all); ok {
		t.Fatal("a watch from inside the relisted gap must be told to relist")
	}
	if _, ok := wc.eventsAfterLocked(15, &all); !ok || wc.rev != 15 {
		t.Fatalf("a watch from the relist revision must succeed (rev %d)", wc.rev)
	}
}

// TestListAtPastRevisions checks the Exact-revision reconstruction against
// a model that records the full state after every change.
func TestListAtPastRevisions(t *testing.T) {
	wc := newWatchCache(64, realClock{})
	state := map[string]*storage.Object{}
	history := map[int64]map[string]*storage.Object{}
	rev := int64(10)
	for _, name := range []string{"b", "d", "f"} {
		rev++
		state[k(name)] = testObj(k(name), rev, nil)
	}
	listed(t, wc, rev, slices.Collect(maps.Values(state))...)
	history[rev] = maps.Clone(state)
	ops := []struct {
		typ  storage.EventType
		name string
	}{
		{storage.Added, "a"}, {storage.Modified, "b"}, {storage.Deleted, "d"}, {storage.Added, "c"},
		{storage.Added, "d"}, {storage.Deleted, "a"}, {storage.Modified, "f"}, {storage.Added, "g"},
		{storage.Deleted, "b"}, {storage.Modified, "d"},
	}
	for _, op := range ops {
		rev += 2 // other types' writes take revisions too
		o := testObj(k(op.name), rev, nil)
		applyTo(t, wc, op.typ, o)
		if op.typ == storage.Deleted {
			delete(state, k(op.name))
		} else {
			state[k(op.name)] = o
		}
		history[rev] = maps.Clone(state)
		history[rev-1] = history[rev-2]
	}
	for at := int64(13); at <= rev; at++ {
		want := history[at]
		for _, limit := range []int64{0, 1, 2, 3} {
			t.Run(fmt.Sprintf("rev=%d/limit=%d", at, limit), func(t *testing.T) {
				var got []string
				from := testPrefix
				for pages := 0; ; pages++ {
					if pages > 20 {
						t.Fatal("pagination does not end")
					}
					wc.mu.RLock()
					l := wc.listLocked(testPrefix, from, at, storage.ListOptions{Limit: limit})
					wc.mu.RUnlock()
					if l.Revision != at {
						t.Fatalf("list revision %d", l.Revision)
					}
					for _, o := range l.Items {
						if want[o.Key] != o {
							t.Fatalf("item %s@%d is not the state at %d", o.Key, o.Revision, at)
						}
						got = append(got, o.Key)
					}
					if l.Continue == "" {
						break
					}
					if l.RemainingItemCount == nil || *l.RemainingItemCount <= 0 {
						t.Fatalf("continue without a positive remaining count")
					}
					var err error
					var tokRev int64
					if from, tokRev, err = storage.DecodeContinue(l.Continue, testPrefix); err != nil || tokRev != at {
						t.Fatalf("token: %v, rev %d", err, tokRev)
					}
				}
				wantKeys := slices.Sorted(maps.Keys(want))
				if !slices.Equal(got, wantKeys) {
					t.Fatalf("keys %v, want %v", got, wantKeys)
				}
			})
		}
	}
}

func TestListPredicateAndNamespace(t *testing.T) {
	wc := newWatchCache(8, realClock{})
	listed(t, wc, 20,
		testObj(testPrefix+"a/x", 11, map[string]string{"app": "web"}),
		testObj(testPrefix+"a/y", 12, map[string]string{"app": "db"}),
		testObj(testPrefix+"b/x", 13, map[string]string{"app": "web"}),
		testObj(testPrefix+"ab/z", 14, map[string]string{"app": "web"}),
	)
	sel := labels.SelectorFromSet(labels.Set{"app": "web"})
	cases := []struct {
		name   string
		prefix string
		pred   storage.Predicate
		limit  int64
		want   []string
		more   bool
	}{
		{"namespace a is not ab", testPrefix + "a/", storage.Predicate{}, 0, []string{"a/x", "a/y"}, false},
		{"label selector", testPrefix, storage.Predicate{Label: sel}, 0, []string{"a/x", "ab/z", "b/x"}, false},
		{"label selector, paged", testPrefix, storage.Predicate{Label: sel}, 2, []string{"a/x", "ab/z"}, true},
		{"label selector, last match fills the page", testPrefix + "a/", storage.Predicate{Label: sel}, 1, []string{"a/x"}, false},
		{"empty namespace", testPrefix + "c/", storage.Predicate{}, 0, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wc.mu.RLock()
			l := wc.listLocked(tc.prefix, tc.prefix, 20, storage.ListOptions{Predicate: tc.pred, Limit: tc.limit})
			wc.mu.RUnlock()
			var got []string
			for _, o := range l.Items {
				got = append(got, strings.TrimPrefix(o.Key, testPrefix))
			}
			if !slices.Equal(got, tc.want) || (l.Continue != "") != tc.more {
				t.Fatalf("got %v continue=%q, want %v more=%v", got, l.Continue, tc.want, tc.more)
			}
			if !tc.pred.Empty() && l.RemainingItemCount != nil {
				t.Fatal("remaining count is unknown under a selector")
			}
		})
	}
}

func TestWatchCacheWaitUntil(t *testing.T) {
	wc := newWatchCache(8, realClock{})
	ctx := context.Background()
	if err := wc.waitUntil(ctx, 0, 10*time.Millisecond, "k", nil); !storage.IsTooLargeResourceVersion(err) {
		t.Fatalf("an unfilled cache is not ready: %v", err)
	}
	listed(t, wc, 5)
	if err := wc.waitUntil(ctx, 5, time.Hour, "k", nil); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- wc.waitUntil(ctx, 9, time.Hour, "k", nil) }()
	wc.progress(8)
	wc.progress(9)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("waiter was not woken by progress")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := wc.waitUntil(cctx, 100, time.Hour, "k", nil); err != context.Canceled {
		t.Fatalf("canceled wait: %v", err)
	}
	// A waiter pokes (the cacher requests progress) until it is satisfied.
	pokes := 0
	if err := wc.waitUntil(ctx, 10, time.Hour, "k", func() { pokes++; wc.progress(9 + int64(pokes)/2) }); err != nil || pokes < 2 {
		t.Fatalf("poked %d times: %v", pokes, err)
	}
	err := wc.waitUntil(ctx, 100, time.Millisecond, "k", nil)
	var se *storage.Error
	if !storage.IsTooLargeResourceVersion(err) || !asError(err, &se) || se.ResourceVersion != 10 {
		t.Fatalf("timeout: %v", err)
	}
}

func TestWatchCacheDynamicHistoryGrows(t *testing.T) {
	wc := newWatchCache(0, realClock{})
	listed(t, wc, 1)
	for i := range int64(minHistory * 3) {
		applyTo(t, wc, storage.Added, testObj(k(fmt.Sprint(i)), i+2, nil))
	}
	if wc.history.Cap() < minHistory*3 || wc.floor != 1 {
		t.Fatalf("history of fresh events should grow: cap %d floor %d", wc.history.Cap(), wc.floor)
	}
	fixed := newWatchCache(10, realClock{})
	listed(t, fixed, 1)
	for i := range int64(30) {
		applyTo(t, fixed, storage.Added, testObj(k(fmt.Sprint(i)), i+2, nil))
	}
	if fixed.history.Cap() != 10 || fixed.floor != 21 {
		t.Fatalf("fixed history: cap %d floor %d", fixed.history.Cap(), fixed.floor)
	}
}
