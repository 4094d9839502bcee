package cacher

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/miniapi/miniapi/storage"
)

func keysOf(l *storage.List) []string {
	var ks []string
	for _, o := range l.Items {
		ks = append(ks, fmt.Sprintf("%s@%d", o.Key, o.Revision))
	}
	return ks
}

func TestGetResourceVersions(t *testing.T) {
	h := newHarness(t, Config{FreshnessTimeout: 200 * time.Millisecond})
	a := h.create("ns", "a", nil)
	h.waitRevision(a.Revision)

	for _, rv := range []string{"", "0", fmt.Sprint(a.Revision)} {
		t.Run("rv="+rv, func(t *testing.T) {
			got, err := h.c.Get(h.ctx, a.Key, storage.GetOptions{ResourceVersion: rv})
			if err != nil || got.Revision != a.Revision || rvOf(t, got) != fmt.Sprint(a.Revision) {
				t.Fatalf("got %+v, %v", got, err)
			}
		})
	}
	t.Run("from cache, shared", func(t *testing.T) {
		x, _ := h.c.Get(h.ctx, a.Key, storage.GetOptions{ResourceVersion: "0"})
		y, _ := h.c.Get(h.ctx, a.Key, storage.GetOptions{ResourceVersion: "0"})
		if x != y {
			t.Fatal("cached Gets must return the cached object")
		}
	})
	t.Run("not found", func(t *testing.T) {
		_, err := h.c.Get(h.ctx, testPrefix+"ns/missing", storage.GetOptions{ResourceVersion: "0"})
		if !storage.IsNotFound(err) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("too large", func(t *testing.T) {
		_, err := h.c.Get(h.ctx, a.Key, storage.GetOptions{ResourceVersion: fmt.Sprint(a.Revision + 1000)})
		if !storage.IsTooLargeResourceVersion(err) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("invalid", func(t *testing.T) {
		_, err := h.c.Get(h.ctx, a.Key, storage.GetOptions{ResourceVersion: "x"})
		if !storage.IsInvalid(err) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("read your write", func(t *testing.T) {
		b := h.update("ns", "a", nil, "1")
		got, err := h.c.Get(h.ctx, a.Key, storage.GetOptions{ResourceVersion: fmt.Sprint(b.Revision)})
		if err != nil || got.Revision != b.Revision {
			t.Fatalf("got %+v, %v", got, err)
		}
	})
}

// TestListMatchesEtcd compares every list path of the cacher with the
// etcd3 store's answer to the same request.
func TestListMatchesEtcd(t *testing.T) {
	h := newHarness(t, Config{HistorySize: 1000})
	var revs []int64
	for i := range 12 {
		ns := []string{"a", "b", "c"}[i%3]
		o := h.create(ns, fmt.Sprintf("o%02d", i), map[string]string{"i": fmt.Sprint(i % 2)})
		revs = append(revs, o.Revision)
	}
	revs = append(revs, h.update("a", "o00", nil, "x").Revision)
	revs = append(revs, h.del("b", "o01").Revision)
	revs = append(revs, h.create("b", "o01", nil).Revision)
	last := h.del("c", "o05").Revision
	revs = append(revs, last)
	h.waitRevision(last)

	odd := storage.Predicate{Label: labels.SelectorFromSet(labels.Set{"i": "1"})}
	type req struct {
		name   string
		prefix string
		opts   storage.ListOptions
	}
	reqs := []req{
		{"consistent", testPrefix, storage.ListOptions{}},
		{"rv=0", testPrefix, storage.ListOptions{ResourceVersion: "0"}},
		{"namespace", testPrefix + "a/", storage.ListOptions{ResourceVersion: "0"}},
		{"selector", testPrefix, storage.ListOptions{Predicate: odd}},
		{"not older than", testPrefix, storage.ListOptions{ResourceVersion: fmt.Sprint(revs[3]), ResourceVersionMatch: storage.MatchNotOlderThan}},
	}
	for _, rev := range revs {
		reqs = append(reqs, req{fmt.Sprintf("exact %d", rev), testPrefix,
			storage.ListOptions{ResourceVersion: fmt.Sprint(rev), ResourceVersionMatch: storage.MatchExact}})
		reqs = append(reqs, req{fmt.Sprintf("legacy paged %d", rev), testPrefix,
			storage.ListOptions{ResourceVersion: fmt.Sprint(rev), Limit: 4}})
		reqs = append(reqs, req{fmt.Sprintf("exact %d, namespace b", rev), testPrefix + "b/",
			storage.ListOptions{ResourceVersion: fmt.Sprint(rev), ResourceVersionMatch: storage.MatchExact}})
	}
	var paged []req
	for _, r := range reqs {
		for _, limit := range []int64{1, 5} {
			p := r
			p.name = fmt.Sprintf("%s limit=%d", r.name, limit)
			p.opts.Limit = limit
			paged = append(paged, p)
		}
	}
	for _, r := range append(reqs, paged...) {
		t.Run(r.name, func(t *testing.T) {
			// Walk every page on both, checking each page's shape.
			walk := func(s storage.Interface) (pages [][]string, remaining []int64) {
				opts := r.opts
				for range 100 {
					l, err := s.List(h.ctx, r.prefix, opts)
					if err != nil {
						t.Fatal(err)
					}
					pages = append(pages, keysOf(l))
					if l.RemainingItemCount != nil {
						remaining = append(remaining, *l.RemainingItemCount)
					}
					if l.Continue == "" {
						return pages, remaining
					}
					opts = storage.ListOptions{Continue: l.Continue, Limit: r.opts.Limit, Predicate: r.opts.Predicate}
				}
				t.Fatal("pagination does not end")
				return nil, nil
			}
			gotPages, gotRem := walk(h.c)
			wantPages, wantRem := walk(h.store)
			got, want := slices.Concat(gotPages...), slices.Concat(wantPages...)
			if !slices.Equal(got, want) {
				t.Fatalf("cacher %v\netcd   %v", got, want)
			}
			if r.opts.ResourceVersion == "0" {
				// kube's cacher ignores the limit at "0": one page.
				if len(gotPages) != 1 || gotRem != nil {
					t.Fatalf("at resourceVersion 0: pages %d remaining %v, want the whole list", len(gotPages), gotRem)
				}
				return
			}
			if r.opts.Predicate.Empty() && (!slices.Equal(gotRem, wantRem) || len(gotPages) != len(wantPages)) {
				t.Fatalf("pages %d remaining %v; etcd pages %d remaining %v", len(gotPages), gotRem, len(wantPages), wantRem)
			}
		})
	}

	t.Run("continue tokens are interchangeable", func(t *testing.T) {
		for _, first := range []storage.Interface{h.c, h.store} {
			l, err := first.List(h.ctx, testPrefix, storage.ListOptions{Limit: 3})
			if err != nil {
				t.Fatal(err)
			}
			var fromCacher, fromStore *storage.List
			if fromCacher, err = h.c.List(h.ctx, testPrefix, storage.ListOptions{Limit: 3, Continue: l.Continue}); err != nil {
				t.Fatal(err)
			}
			if fromStore, err = h.store.List(h.ctx, testPrefix, storage.ListOptions{Limit: 3, Continue: l.Continue}); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(keysOf(fromCacher), keysOf(fromStore)) || fromCacher.Continue != fromStore.Continue {
				t.Fatalf("second page differs: %v / %v", keysOf(fromCacher), keysOf(fromStore))
			}
		}
	})

	t.Run("a token for the latest revision reads the latest", func(t *testing.T) {
		// kube-apiserver reads a token whose revision is negative as
		// "the latest" and pins the pages after to the revision read.
		all, err := h.store.List(h.ctx, testPrefix, storage.ListOptions{})
		if err != nil || len(all.Items) < 4 {
			t.Fatalf("list: %d items, %v", len(all.Items), err)
		}
		tok, err := storage.EncodeContinue(all.Items[1].Key, testPrefix, -1)
		if err != nil {
			t.Fatal(err)
		}
		for name, s := range map[string]storage.Interface{"cacher": h.c, "etcd": h.store} {
			l, err := s.List(h.ctx, testPrefix, storage.ListOptions{Limit: 2, Continue: tok})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if want := keysOf(&storage.List{Items: all.Items[1:3]}); !slices.Equal(keysOf(l), want) || l.Continue == "" {
				t.Fatalf("%s: %v (continue %q), want %v and more", name, keysOf(l), l.Continue, want)
			}
			if _, rev, err := storage.DecodeContinue(l.Continue, testPrefix); err != nil || rev != l.Revision || rev < all.Revision {
				t.Fatalf("%s: next token pinned to %d (%v), want the list's revision %d", name, rev, err, l.Revision)
			}
		}
	})

	t.Run("cached items are shared", func(t *testing.T) {
		x, _ := h.c.List(h.ctx, testPrefix, storage.ListOptions{ResourceVersion: "0"})
		y, _ := h.c.List(h.ctx, testPrefix, storage.ListOptions{ResourceVersion: "0"})
		for i := range x.Items {
			if x.Items[i] != y.Items[i] {
				t.Fatal("lists from cache must reuse the cached objects")
			}
		}
	})
}

func TestListRejectsWhatEtcdRejects(t *testing.T) {
	h := newHarness(t, Config{})
	l, err := h.c.List(h.ctx, testPrefix, storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cases := []storage.ListOptions{
		{ResourceVersionMatch: storage.MatchNotOlderThan},
		{ResourceVersionMatch: storage.MatchExact, ResourceVersion: "0"},
		{ResourceVersionMatch: "Sometime", ResourceVersion: "1"},
		{ResourceVersion: "abc"},
		{Continue: "not-a-token"},
		{Continue: "x", ResourceVersion: fmt.Sprint(l.Revision)},
	}
	for _, opts := range cases {
		t.Run(fmt.Sprintf("%+v", opts), func(t *testing.T) {
			_, cerr := h.c.List(h.ctx, testPrefix, opts)
			_, serr := h.store.List(h.ctx, testPrefix, opts)
			if !storage.IsInvalid(cerr) || !storage.IsInvalid(serr) {
				t.Fatalf("cacher %v, etcd %v", cerr, serr)
			}
		})
	}
}

// TestConsistentListUsesProgress checks that a consistent list on an idle
// type is served from the cache after etcd's revision moved on because of
// other keys: the cache learns it is current from a progress notification.
func TestConsistentListUsesProgress(t *testing.T) {
	h := newHarness(t, Config{})
	h.create("ns", "a", nil)
	var rev int64
	for i := range 5 {
		resp, err := h.client.Put(h.ctx, fmt.Sprintf("/registry/other/k%d", i), "v")
		if err != nil {
			t.Fatal(err)
		}
		rev = resp.Header.Revision
	}
	l, err := h.c.List(h.ctx, testPrefix, storage.ListOptions{})
	if err != nil || l.Revision < rev || len(l.Items) != 1 {
		t.Fatalf("list %+v, %v", l, err)
	}
	if got := h.c.Stats().Revision; got < rev {
		t.Fatalf("cache revision %d did not reach etcd's %d", got, rev)
	}
	// The same for a read at a revision another type's write returned.
	resp, err := h.client.Put(h.ctx, "/registry/other/last", "v")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.c.Get(h.ctx, testPrefix+"ns/a", storage.GetOptions{ResourceVersion: fmt.Sprint(resp.Header.Revision)}); err != nil {
		t.Fatalf("get at another type's revision: %v", err)
	}
	ctx, cancel := context.WithCancel(h.ctx)
	cancel()
	if _, err := h.c.List(ctx, testPrefix, storage.ListOptions{ResourceVersion: fmt.Sprint(rev + 100)}); err == nil {
		t.Fatal("a canceled wait must fail")
	}
}
