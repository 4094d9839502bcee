package cacher

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/miniapi/miniapi/storage"
)

func ptr[T any](v T) *T { return &v }

// nextNonBookmark returns the next event that is not a periodic bookmark.
func nextNonBookmark(t testing.TB, w storage.Watcher) storage.Event {
	t.Helper()
	for {
		ev := next(t, w)
		if ev.Type != storage.Bookmark || ev.InitialEventsEnd {
			return ev
		}
	}
}

func describe(ev storage.Event) string {
	switch {
	case ev.Type == storage.Bookmark && ev.InitialEventsEnd:
		return fmt.Sprintf("BOOKMARK(end)@%d", ev.Object.Revision)
	case ev.Type == storage.Bookmark:
		return fmt.Sprintf("BOOKMARK@%d", ev.Object.Revision)
	case ev.Type == storage.ErrorEvent:
		return fmt.Sprintf("ERROR %v", ev.Err)
	}
	return fmt.Sprintf("%s %s@%d", ev.Type, strings.TrimPrefix(ev.Object.Key, testPrefix), ev.Object.Revision)
}

func TestWatchStarts(t *testing.T) {
	// Every case runs on its own etcd with the same history: a at
	// revision 2, b at 3.
	const cur = 3
	a := &storage.Object{Key: testPrefix + "ns/a", Revision: 2}
	b := &storage.Object{Key: testPrefix + "ns/b", Revision: 3}
	end := func(rev int64) string { return fmt.Sprintf("BOOKMARK(end)@%d", rev) }
	added := func(o *storage.Object) string {
		return "ADDED " + strings.TrimPrefix(o.Key, testPrefix) + fmt.Sprintf("@%d", o.Revision)
	}

	cases := []struct {
		name string
		opts storage.WatchOptions
		want []string
	}{
		{"rv unset", storage.WatchOptions{}, []string{added(a), added(b)}},
		{"rv unset, bookmarks: initial-events-end as kube-apiserver 1.37",
			storage.WatchOptions{AllowBookmarks: true}, []string{added(a), added(b), end(cur)}},
		{"rv 0", storage.WatchOptions{ResourceVersion: "0"}, []string{added(a), added(b)}},
		{"sendInitialEvents", storage.WatchOptions{ResourceVersion: "0", SendInitialEvents: ptr(true), AllowBookmarks: true},
			[]string{added(a), added(b), end(cur)}},
		{"sendInitialEvents from N", storage.WatchOptions{ResourceVersion: fmt.Sprint(a.Revision), SendInitialEvents: ptr(true), AllowBookmarks: true},
			[]string{added(a), added(b), end(cur)}},
		{"sendInitialEvents without bookmarks: no end marker, as kube-apiserver",
			storage.WatchOptions{ResourceVersion: "0", SendInitialEvents: ptr(true)}, []string{added(a), added(b)}},
		{"sendInitialEvents=false, rv unset", storage.WatchOptions{SendInitialEvents: ptr(false)}, nil},
		{"sendInitialEvents=false, rv 0", storage.WatchOptions{ResourceVersion: "0", SendInitialEvents: ptr(false)}, nil},
		{"from a's revision", storage.WatchOptions{ResourceVersion: fmt.Sprint(a.Revision)}, []string{added(b)}},
		{"from the list revision before a", storage.WatchOptions{ResourceVersion: fmt.Sprint(a.Revision - 1)}, []string{added(a), added(b)}},
		{"from the current revision", storage.WatchOptions{ResourceVersion: fmt.Sprint(cur)}, nil},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Config{})
			if h.create("ns", "a", nil).Revision != a.Revision || h.create("ns", "b", nil).Revision != b.Revision {
				t.Fatal("a fresh etcd should give a and b revisions 2 and 3")
			}
			h.waitRevision(cur)
			w := h.watch(testPrefix, tc.opts)
			var got []string
			for range tc.want {
				got = append(got, describe(next(t, w)))
			}
			// Then live events, and nothing in between.
			m := h.create("marker", fmt.Sprint(i), nil)
			got = append(got, describe(nextNonBookmark(t, w)))
			want := append(tc.want, added(m))
			if strings.Join(got, ", ") != strings.Join(want, ", ") {
				t.Fatalf("got  %v\nwant %v", got, want)
			}
			w.Stop()
		})
	}
}

func TestWatchPrefixes(t *testing.T) {
	h := newHarness(t, Config{})
	start := h.c.Stats().Revision
	h.create("a", "x", nil)
	h.create("ab", "x", nil)
	h.create("a", "xy", nil)
	last := h.update("a", "x", nil, "1")
	h.waitRevision(last.Revision)
	cases := []struct {
		prefix string
		want   []string
	}{
		{testPrefix + "a/", []string{"ADDED a/x", "ADDED a/xy", "MODIFIED a/x"}},
		{testPrefix + "a/x", []string{"ADDED a/x", "MODIFIED a/x"}},
		{testPrefix + "ab/", []string{"ADDED ab/x"}},
	}
	for _, tc := range cases {
		t.Run(tc.prefix, func(t *testing.T) {
			for _, rv := range []string{fmt.Sprint(start), ""} {
				w := h.watch(tc.prefix, storage.WatchOptions{ResourceVersion: rv})
				var got []string
				n := len(tc.want)
				if rv == "" {
					n = strings.Count(strings.Join(tc.want, ","), "ADDED")
				}
				for range n {
					d := describe(next(t, w))
					got = append(got, d[:strings.Index(d, "@")])
				}
				if rv != "" && strings.Join(got, ",") != strings.Join(tc.want, ",") {
					t.Fatalf("rv=%s: got %v, want %v", rv, got, tc.want)
				}
				w.Stop()
			}
		})
	}
}

func TestWatchTooOldAndTooNew(t *testing.T) {
	h := newHarness(t, Config{HistorySize: 4, FreshnessTimeout: 100 * time.Millisecond})
	first := h.create("ns", "o0", nil)
	var last *storage.Object
	for i := 1; i < 10; i++ {
		last = h.create("ns", fmt.Sprintf("o%d", i), nil)
	}
	h.waitRevision(last.Revision)

	w := h.watch(testPrefix, storage.WatchOptions{ResourceVersion: fmt.Sprint(first.Revision)})
	evs := expectClosed(t, w)
	if len(evs) != 1 || evs[0].Type != storage.ErrorEvent || !storage.IsCompacted(evs[0].Err) {
		t.Fatalf("want exactly one Compacted error event, got %v", evs)
	}
	var se *storage.Error
	floor := h.c.wc.floor
	if !asError(evs[0].Err, &se) || se.ResourceVersion != floor ||
		!strings.Contains(se.Error(), fmt.Sprintf("too old resource version: %d (%d)", first.Revision, floor)) {
		t.Fatalf("error %v, floor %d", evs[0].Err, floor)
	}
	// Exactly the oldest servable revision works.
	w = h.watch(testPrefix, storage.WatchOptions{ResourceVersion: fmt.Sprint(floor)})
	if ev := next(t, w); ev.Type != storage.Added || ev.Object.Revision <= floor {
		t.Fatalf("from the floor: %s", describe(ev))
	}
	w.Stop()

	if _, err := h.c.Watch(h.ctx, testPrefix, storage.WatchOptions{ResourceVersion: "-1"}); !storage.IsInvalid(err) {
		t.Fatalf("invalid resourceVersion: %v", err)
	}
}

// TestWatchFromTheFuture: a watch from a revision the cache has not
// reached is accepted at once, as by kube-apiserver 1.37's cacher, and
// gets the events after that revision, however long they take.
func TestWatchFromTheFuture(t *testing.T) {
	h := newHarness(t, Config{FreshnessTimeout: time.Millisecond})
	rev := h.c.Stats().Revision
	w, err := h.c.Watch(h.ctx, testPrefix, storage.WatchOptions{ResourceVersion: fmt.Sprint(rev + 3)})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var last *storage.Object
	for _, n := range []string{"a", "b", "c", "d"} {
		last = h.create("ns", n, nil)
	}
	if ev := next(t, w); ev.Type != storage.Added || ev.Object.Key != last.Key {
		t.Fatalf("got %s, want only the events after %d (%s)", describe(ev), rev+3, last.Key)
	}
}

// TestWatchFutureRevisionWaits starts a watch from a revision the cache
// has not reached yet; it is accepted once a write gets there.
func TestWatchFutureRevisionWaits(t *testing.T) {
	h := newHarness(t, Config{FreshnessTimeout: waitLimit})
	rev := h.c.Stats().Revision
	done := make(chan storage.Watcher, 1)
	go func() {
		w, err := h.c.Watch(h.ctx, testPrefix, storage.WatchOptions{ResourceVersion: fmt.Sprint(rev + 1)})
		if err != nil {
			t.Error(err)
		}
		done <- w
	}()
	h.create("ns", "a", nil)
	b := h.create("ns", "b", nil)
	w := <-done
	if w == nil {
		return
	}
	defer w.Stop()
	if ev := next(t, w); ev.Object.Key != b.Key {
		t.Fatalf("got %s, want only the events after %d", describe(ev), rev+1)
	}
}

func TestSelectorTransitions(t *testing.T) {
	h := newHarness(t, Config{})
	web := map[string]string{"app": "web"}
	db := map[string]string{"app": "db"}
	start := h.c.Stats().Revision
	byLabel := h.watch(testPrefix, storage.WatchOptions{ResourceVersion: fmt.Sprint(start),
		Predicate: storage.Predicate{Label: labels.SelectorFromSet(labels.Set{"app": "web"})}})
	byName := h.watch(testPrefix, storage.WatchOptions{ResourceVersion: fmt.Sprint(start),
		Predicate: storage.Predicate{Field: fields.OneTermEqualSelector("metadata.name", "a")}})

	steps := []struct {
		write      func() *storage.Object
		label      string // what byLabel sees, "" for nothing
		labelsSeen map[string]string
		name       string // what byName sees
	}{
		{func() *storage.Object { return h.create("ns", "a", db) }, "", nil, "ADDED"},
		{func() *storage.Object { return h.update("ns", "a", web, "1") }, "ADDED", web, "MODIFIED"},
		{func() *storage.Object { return h.update("ns", "a", web, "2") }, "MODIFIED", web, "MODIFIED"},
		{func() *storage.Object { return h.update("ns", "a", db, "3") }, "DELETED", web, "MODIFIED"},
		{func() *storage.Object { return h.update("ns", "a", db, "4") }, "", nil, "MODIFIED"},
		{func() *storage.Object { return h.create("ns", "b", web) }, "ADDED", web, ""},
		{func() *storage.Object { return h.del("ns", "a") }, "", nil, "DELETED"},
		{func() *storage.Object { return h.del("ns", "b") }, "DELETED", web, ""},
	}
	// A marker every watcher sees ends each step.
	marker := func(i int) *storage.Object {
		return h.create("zz", fmt.Sprint(i), web)
	}
	for i, s := range steps {
		o := s.write()
		m := marker(i)
		if s.label != "" {
			ev := nextNonBookmark(t, byLabel)
			if string(ev.Type) != s.label || ev.Object.Revision != o.Revision || rvOf(t, ev.Object) != fmt.Sprint(o.Revision) {
				t.Fatalf("step %d: label watcher got %s, want %s@%d", i, describe(ev), s.label, o.Revision)
			}
			if got := labelsOf(t, ev.Object); got["app"] != s.labelsSeen["app"] {
				t.Fatalf("step %d: labels %v", i, got)
			}
		}
		if ev := nextNonBookmark(t, byLabel); ev.Object.Key != m.Key {
			t.Fatalf("step %d: label watcher got %s, want the marker", i, describe(ev))
		}
		if s.name != "" {
			ev := nextNonBookmark(t, byName)
			if string(ev.Type) != s.name || ev.Object.Revision != o.Revision {
				t.Fatalf("step %d: name watcher got %s, want %s@%d", i, describe(ev), s.name, o.Revision)
			}
		}
	}
	// The name watcher saw no markers: its next event is the next "a".
	a := h.create("ns", "a", nil)
	if ev := nextNonBookmark(t, byName); ev.Object.Revision != a.Revision {
		t.Fatalf("name watcher got %s", describe(ev))
	}
}

func TestBookmarks(t *testing.T) {
	h := newHarness(t, Config{BookmarkInterval: 50 * time.Millisecond})
	start := h.c.Stats().Revision
	with := h.watch(testPrefix, storage.WatchOptions{ResourceVersion: fmt.Sprint(start), AllowBookmarks: true})
	without := h.watch(testPrefix, storage.WatchOptions{ResourceVersion: fmt.Sprint(start)})

	// An idle watch gets periodic bookmarks at the cache's revision.
	for range 2 {
		ev := next(t, with)
		if ev.Type != storage.Bookmark || ev.InitialEventsEnd || ev.Object.Revision < start {
			t.Fatalf("got %s", describe(ev))
		}
	}
	a := h.create("ns", "a", nil)
	if ev := nextNonBookmark(t, with); ev.Object.Revision != a.Revision {
		t.Fatalf("got %s", describe(ev))
	}
	// The next bookmark covers the event just delivered.
	if ev := next(t, with); ev.Type != storage.Bookmark || ev.Object.Revision < a.Revision {
		t.Fatalf("got %s, want a bookmark at or after %d", describe(ev), a.Revision)
	}
	// Bookmarks were offered meanwhile; a watch that did not ask for them
	// got only the event.
	if ev := next(t, without); ev.Type != storage.Added || ev.Object.Revision != a.Revision {
		t.Fatalf("got %s", describe(ev))
	}
	b := h.create("ns", "b", nil)
	if ev := next(t, without); ev.Type != storage.Added || ev.Object.Revision != b.Revision {
		t.Fatalf("got %s", describe(ev))
	}
}

// TestBookmarkBeforeDeadline checks that a watch whose context has a
// deadline gets a bookmark shortly before it, even with a long interval,
// and ends at the deadline.
func TestBookmarkBeforeDeadline(t *testing.T) {
	h := newHarness(t, Config{BookmarkInterval: time.Hour})
	rev := h.c.Stats().Revision
	ctx, cancel := context.WithTimeout(h.ctx, bookmarkBeforeDeadline+500*time.Millisecond)
	defer cancel()
	w, err := h.c.Watch(ctx, testPrefix, storage.WatchOptions{ResourceVersion: "", SendInitialEvents: ptr(false), AllowBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	evs := expectClosed(t, w)
	if len(evs) != 1 || evs[0].Type != storage.Bookmark || evs[0].Object.Revision < rev {
		var d []string
		for _, ev := range evs {
			d = append(d, describe(ev))
		}
		t.Fatalf("want one bookmark before the deadline, got %v", d)
	}
}

// TestNoBookmarkPastDeadline checks that a watch whose deadline is two
// seconds away or less gets no bookmark, as kube's cacheWatcher sends
// none when the moment before the deadline has already passed: only the
// initial-events-end bookmark it asked for.
func TestNoBookmarkPastDeadline(t *testing.T) {
	h := newHarness(t, Config{BookmarkInterval: time.Hour})
	h.waitRevision(h.create("ns", "a", nil).Revision)
	for _, initial := range []bool{false, true} {
		ctx, cancel := context.WithTimeout(h.ctx, bookmarkBeforeDeadline-time.Second)
		w, err := h.c.Watch(ctx, testPrefix, storage.WatchOptions{ResourceVersion: "", SendInitialEvents: ptr(initial), AllowBookmarks: true})
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		var d []string
		for _, ev := range expectClosed(t, w) {
			if ev.Type == storage.Bookmark && !ev.InitialEventsEnd {
				d = append(d, describe(ev))
			}
		}
		w.Stop()
		cancel()
		if len(d) != 0 {
			t.Errorf("sendInitialEvents=%v: want no bookmark but the initial-events-end one, got %v", initial, d)
		}
	}
}

// TestRunWatch: a watch run on its consumer's goroutine gets what Watch
// would send (initial events, changes, the initial-events bookmark), is
// unregistered when fn says stop, and ends when the Cacher closes.
func TestRunWatch(t *testing.T) {
	h := newHarness(t, Config{})
	h.create("ns", "a", nil)
	last := h.create("ns", "b", nil)
	h.waitRevision(last.Revision)

	var got []string
	err := h.c.RunWatch(h.ctx, testPrefix, storage.WatchOptions{ResourceVersion: "0", SendInitialEvents: ptr(true), AllowBookmarks: true},
		func(ev storage.Event) bool {
			got = append(got, string(ev.Type))
			return !ev.InitialEventsEnd
		})
	if want := []string{"ADDED", "ADDED", "BOOKMARK"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("RunWatch = %v, events %v; want %v", err, got, want)
	}
	if n := h.c.d.count(); n != 0 {
		t.Errorf("%d watchers registered after fn stopped the watch", n)
	}

	changes := make(chan storage.EventType, 10)
	done := make(chan error, 1)
	go func() {
		done <- h.c.RunWatch(h.ctx, testPrefix, storage.WatchOptions{ResourceVersion: strconv.FormatInt(last.Revision, 10)},
			func(ev storage.Event) bool { changes <- ev.Type; return true })
	}()
	h.update("ns", "a", nil, "1")
	if ev := <-changes; ev != storage.Modified {
		t.Errorf("change %s, want MODIFIED", ev)
	}
	h.c.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("RunWatch ended by Close: %v", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("RunWatch still running after Close")
	}
}
