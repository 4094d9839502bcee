package controllers

import (
	"context"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miniapi/miniapi/storage/cacher"
)

func TestSelect(t *testing.T) {
	// only is the selection with exactly on turned on.
	only := func(on ...string) map[string]bool {
		m := map[string]bool{}
		for _, n := range Names() {
			m[n] = slices.Contains(on, n)
		}
		return m
	}
	all := only(Names()...)
	allBut := func(off string) map[string]bool {
		m := only(Names()...)
		m[off] = false
		return m
	}
	for _, tc := range []struct {
		name string
		list []string
		want map[string]bool
		err  bool
	}{
		{name: "default", list: nil, want: all},
		{name: "star", list: []string{"*"}, want: all},
		{name: "star minus one", list: []string{"*", "-" + GarbageCollectorName}, want: allBut(GarbageCollectorName)},
		{name: "star minus an alias", list: []string{"*", "-deployment"}, want: allBut("deployment-controller")},
		{name: "only one", list: []string{NamespaceControllerName}, want: only(NamespaceControllerName)},
		{name: "aliases", list: []string{"job", "podgc"}, want: only("job-controller", "pod-garbage-collector-controller")},
		{name: "none", list: []string{"-" + NamespaceControllerName}, want: only()},
		{name: "unknown", list: []string{"*", "-node-lifecycle-controller"}, err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Select(tc.list)
			if tc.err {
				if err == nil {
					t.Fatalf("Select(%v) = %v, want an error", tc.list, got)
				}
				return
			}
			if err != nil || !maps.Equal(map[string]bool(got), tc.want) {
				t.Fatalf("Select(%v) = %v, %v; want %v", tc.list, got, err, tc.want)
			}
		})
	}
}

// TestNamed: the controllers a list names itself, by name or alias,
// not those "*" or a "-name" brings in.
func TestNamed(t *testing.T) {
	got := Named([]string{"*", "-podgc", "job", " deployment-controller ", "-cronjob"})
	if want := []string{"job-controller", "deployment-controller"}; !slices.Equal(got, want) {
		t.Errorf("Named = %q, want %q", got, want)
	}
}

func TestQueue(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	q := newQueue[string](time.Millisecond, 4*time.Millisecond)
	q.add("a")
	q.add("b")
	q.add("a") // already waiting: no second copy
	q.addAfter("c", time.Hour)
	q.add("c") // ready now after all
	var got []string
	for range 3 {
		k, ok := q.get(ctx)
		if !ok {
			t.Fatal("get ended early")
		}
		got = append(got, k)
	}
	if !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("keys %v, want [a b c]", got)
	}
	// A delayed key comes once due; retries back off up to max.
	q.retry("d")
	q.retry("d")
	if k, ok := q.get(ctx); !ok || k != "d" {
		t.Fatalf("get = %q, %v; want d", k, ok)
	}
	for range 5 {
		q.retry("e")
	}
	if d := q.fails["e"]; d != 5 {
		t.Fatalf("fails = %d", d)
	}
	if k, ok := q.get(ctx); !ok || k != "e" {
		t.Fatalf("get = %q, %v; want e", k, ok)
	}
	// get returns when its context ends.
	short, stop := context.WithCancel(ctx)
	stop()
	if _, ok := q.get(short); ok {
		t.Fatal("get on an ended context returned a key")
	}
}

func TestControllersStopCleanly(t *testing.T) {
	// A fixture with no controllers of its own: this test runs them.
	f := newFixture(t, "-"+NamespaceControllerName, "-"+GarbageCollectorName)
	stop := runControllers(New(Config{Registry: f.reg}))
	ns := f.namespace("busy")
	owner := f.create(f.configMaps(), ns, "owner", nil)
	f.create(f.configMaps(), ns, "dep", map[string]any{"ownerReferences": []any{ownerRef(owner, true)}})
	f.delete(f.configMaps(), ns, "owner", "")
	f.waitGone(f.configMaps(), ns, "dep")

	done := make(chan struct{})
	go func() {
		defer close(done)
		stop()
	}()
	select {
	case <-done:
	case <-time.After(waitTimeout):
		t.Fatal("controllers did not stop")
	}
	// Every goroutine the controllers started, and the watches their
	// informers opened, has exited. (TestMain's leak check covers the
	// whole package; etcd's own goroutines come and go meanwhile.)
	deadline := time.Now().Add(waitTimeout)
	for left := controllerGoroutines(); len(left) > 0; left = controllerGoroutines() {
		if time.Now().After(deadline) {
			t.Fatalf("goroutines left after the controllers stopped:\n%s", strings.Join(left, "\n\n"))
		}
		runtime.Gosched()
		time.Sleep(10 * time.Millisecond)
	}
}

// controllerGoroutines returns the stacks of goroutines running this
// package's code, or a cache watcher (only the controllers watch here),
// other than the test binary's.
func controllerGoroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "testing.tRunner") || strings.Contains(g, "testing.(*M).Run") {
			continue // the test binary's own goroutines
		}
		if strings.Contains(g, "miniapi/controllers.") || strings.Contains(g, "cacher.(*cacheWatcher).run") {
			out = append(out, g)
		}
	}
	return out
}

func TestInformerListsAgainAfterCompaction(t *testing.T) {
	f := newFixture(t, "-"+NamespaceControllerName, "-"+GarbageCollectorName)
	ns := f.namespace("app")
	f.create(f.configMaps(), ns, "a", nil)
	last := f.create(f.configMaps(), ns, "b", nil)
	// History before b is compacted away, as the server's compactor does
	// it (etcd, then each cache told).
	rev, err := strconv.ParseInt(last.Metadata.ResourceVersion, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	f.configMaps().Storage().(*cacher.Cacher).Expire(rev)

	var mu sync.Mutex
	added, deleted := map[string]bool{}, map[string]bool{}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	in := &informer{
		store: f.configMaps(),
		log:   discardLogger(),
		changed: func(old, cur *meta) {
			mu.Lock()
			defer mu.Unlock()
			if cur == nil {
				deleted[old.Name] = true
			} else if old == nil {
				added[cur.Name] = true
			}
		},
		synced: cancel,
		// An object seen before the informer lost track, deleted since.
		known: map[string]*meta{ns + "/ghost": {Namespace: ns, Name: "ghost", UID: "u"}},
	}
	// A watch from a compacted revision ends with 410 and asks for a
	// fresh list.
	if next, err := in.watch(ctx, 1); next != 0 || err != nil {
		t.Fatalf("watch from a compacted revision = %d, %v; want 0, nil", next, err)
	}
	if _, err := in.watch(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != context.Canceled {
		t.Fatal("the list did not complete")
	}
	mu.Lock()
	defer mu.Unlock()
	if !added["a"] || !added["b"] || !deleted["ghost"] || len(in.known) != 2 {
		t.Fatalf("after the list: added %v, deleted %v, known %d", added, deleted, len(in.known))
	}
}
