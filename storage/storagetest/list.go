package storagetest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/miniapi/miniapi/storage"
)

func mustLabels(t *testing.T, s string) labels.Selector {
	t.Helper()
	sel, err := labels.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return sel
}

func checkNames(t *testing.T, what string, objs []*storage.Object, want ...string) {
	t.Helper()
	if got := names(t, objs); !slices.Equal(got, want) {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
	for _, o := range objs {
		if rv := decode(t, o.Data).Metadata.ResourceVersion; rv != strconv.FormatInt(o.Revision, 10) {
			t.Fatalf("%s: item %s has resourceVersion %q and Revision %d", what, o.Key, rv, o.Revision)
		}
	}
}

func testListNamespaces(t *testing.T, f Fixture) {
	for _, o := range []object{{ns: "b", name: "w"}, {ns: "a", name: "y"}, {ns: "ab", name: "z"}, {ns: "a", name: "x"}} {
		f.create(t, o)
	}
	rev := f.etcdRevision(t)
	all := f.list(t, f.Keys.Prefix(), storage.ListOptions{})
	checkNames(t, "list of all namespaces", all.Items, "a/x", "a/y", "ab/z", "b/w")
	if all.Revision != rev {
		t.Errorf("list Revision = %d, want etcd's %d", all.Revision, rev)
	}
	if all.Continue != "" || all.RemainingItemCount != nil {
		t.Errorf("unpaged list has Continue %q, RemainingItemCount %v", all.Continue, all.RemainingItemCount)
	}
	checkNames(t, `list of namespace "a"`, f.list(t, f.Keys.NamespacePrefix("a"), storage.ListOptions{}).Items, "a/x", "a/y")
	checkNames(t, "list of an empty namespace", f.list(t, f.Keys.NamespacePrefix("none"), storage.ListOptions{}).Items)
	checkNames(t, `list with resourceVersion "0"`, f.list(t, f.Keys.Prefix(), storage.ListOptions{ResourceVersion: "0"}).Items,
		"a/x", "a/y", "ab/z", "b/w")
}

func testListLabelSelector(t *testing.T, f Fixture) {
	f.create(t, object{ns: "ns", name: "p1", labels: map[string]string{"env": "prod"}})
	f.create(t, object{ns: "ns", name: "d1", labels: map[string]string{"env": "dev"}})
	f.create(t, object{ns: "ns", name: "p2", labels: map[string]string{"env": "prod", "tier": "web"}})
	f.create(t, object{ns: "ns", name: "none"})
	l := f.list(t, f.Keys.Prefix(), storage.ListOptions{Predicate: storage.Predicate{Label: mustLabels(t, "env=prod")}})
	checkNames(t, "env=prod", l.Items, "ns/p1", "ns/p2")
	l = f.list(t, f.Keys.Prefix(), storage.ListOptions{Predicate: storage.Predicate{Label: mustLabels(t, "env!=prod")}})
	checkNames(t, "env!=prod", l.Items, "ns/d1", "ns/none")
	l = f.list(t, f.Keys.Prefix(), storage.ListOptions{Predicate: storage.Predicate{Label: mustLabels(t, "tier")}})
	checkNames(t, "tier", l.Items, "ns/p2")
}

func testListFieldSelector(t *testing.T, f Fixture) {
	f.create(t, object{ns: "a", name: "x"})
	f.create(t, object{ns: "b", name: "x"})
	f.create(t, object{ns: "b", name: "y"})
	l := f.list(t, f.Keys.Prefix(), storage.ListOptions{Predicate: storage.Predicate{Field: fields.OneTermEqualSelector("metadata.name", "x")}})
	checkNames(t, "metadata.name=x", l.Items, "a/x", "b/x")
	l = f.list(t, f.Keys.Prefix(), storage.ListOptions{Predicate: storage.Predicate{Field: fields.OneTermNotEqualSelector("metadata.namespace", "a")}})
	checkNames(t, "metadata.namespace!=a", l.Items, "b/x", "b/y")
}

func testListPagination(t *testing.T, f Fixture) {
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		f.create(t, object{ns: "ns", name: n, value: "one"})
	}
	page1 := f.list(t, f.Keys.Prefix(), storage.ListOptions{Limit: 2})
	checkNames(t, "page 1", page1.Items, "ns/a", "ns/b")
	if page1.Continue == "" {
		t.Fatal("page 1 has no continue token")
	}
	if page1.RemainingItemCount == nil || *page1.RemainingItemCount != 3 {
		t.Fatalf("page 1 RemainingItemCount = %v, want 3", page1.RemainingItemCount)
	}
	// Writes between pages do not show: later pages are read at the
	// first page's revision.
	f.update(t, object{ns: "ns", name: "c"}, "two")
	f.delete(t, object{ns: "ns", name: "d"})
	f.create(t, object{ns: "ns", name: "bb", value: "new"})
	page2 := f.list(t, f.Keys.Prefix(), storage.ListOptions{Limit: 2, Continue: page1.Continue})
	checkNames(t, "page 2", page2.Items, "ns/c", "ns/d")
	if page2.Revision != page1.Revision {
		t.Fatalf("page 2 at revision %d, page 1 at %d", page2.Revision, page1.Revision)
	}
	if page2.RemainingItemCount == nil || *page2.RemainingItemCount != 1 {
		t.Fatalf("page 2 RemainingItemCount = %v, want 1", page2.RemainingItemCount)
	}
	page3 := f.list(t, f.Keys.Prefix(), storage.ListOptions{Limit: 2, Continue: page2.Continue})
	checkNames(t, "page 3", page3.Items, "ns/e")
	if page3.Continue != "" || page3.RemainingItemCount != nil {
		t.Fatalf("last page has Continue %q, RemainingItemCount %v", page3.Continue, page3.RemainingItemCount)
	}
	for _, p := range [][]*storage.Object{page1.Items, page2.Items, page3.Items} {
		for _, o := range p {
			if v := decode(t, o.Data).value; v != "one" || o.Revision > page1.Revision {
				t.Fatalf("paged item %s has value %q at revision %d, want its state at revision %d", o.Key, v, o.Revision, page1.Revision)
			}
		}
	}
	fresh := f.list(t, f.Keys.Prefix(), storage.ListOptions{})
	checkNames(t, "a new list", fresh.Items, "ns/a", "ns/b", "ns/bb", "ns/c", "ns/e")
}

func testListPagesWithSelector(t *testing.T, f Fixture) {
	var want []string
	for i := range 10 {
		o := object{ns: "ns", name: fmt.Sprintf("obj-%d", i)}
		if i%3 == 0 {
			o.labels = map[string]string{"keep": "yes"}
			want = append(want, "ns/"+o.name)
		}
		f.create(t, o)
	}
	opts := storage.ListOptions{Limit: 2, Predicate: storage.Predicate{Label: mustLabels(t, "keep=yes")}}
	var got []string
	for page := 1; ; page++ {
		if page > 5 {
			t.Fatalf("more than 5 pages of 2 for %d matching objects", len(want))
		}
		l := f.list(t, f.Keys.Prefix(), opts)
		if len(l.Items) > 2 {
			t.Fatalf("page %d has %d items, limit 2", page, len(l.Items))
		}
		if page == 1 && len(l.Items) != 2 {
			t.Fatalf("first page has %d items; a selector must not leave a page short while matches remain", len(l.Items))
		}
		if l.RemainingItemCount != nil {
			t.Fatalf("page %d has RemainingItemCount %d with a selector", page, *l.RemainingItemCount)
		}
		got = append(got, names(t, l.Items)...)
		if l.Continue == "" {
			break
		}
		opts.Continue = l.Continue
	}
	if !slices.Equal(got, want) {
		t.Fatalf("paged selector list = %v, want %v", got, want)
	}
}

func testListContinueCompacted(t *testing.T, f Fixture) {
	for _, n := range []string{"a", "b", "c"} {
		f.create(t, object{ns: "ns", name: n})
	}
	page1 := f.list(t, f.Keys.Prefix(), storage.ListOptions{Limit: 1})
	if page1.Continue == "" {
		t.Fatal("page 1 has no continue token")
	}
	f.update(t, object{ns: "ns", name: "a"}, "two")
	f.compact(t, f.etcdRevision(t))
	_, err := f.Store.List(testContext(t), f.Keys.Prefix(), storage.ListOptions{Limit: 1, Continue: page1.Continue})
	if !storage.IsCompacted(err) {
		t.Fatalf("list with a compacted continue token: %v, want Compacted", err)
	}
}

func testListInvalidContinue(t *testing.T, f Fixture) {
	f.create(t, object{ns: "ns", name: "a"})
	for _, tok := range []string{"not-a-token", "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MCwic3RhcnQiOiJhIn0"} {
		_, err := f.Store.List(testContext(t), f.Keys.Prefix(), storage.ListOptions{Limit: 1, Continue: tok})
		if !storage.IsInvalid(err) {
			t.Errorf("list with continue %q: %v, want Invalid", tok, err)
		}
	}
}

func testListExact(t *testing.T, f Fixture) {
	a := object{ns: "ns", name: "a", value: "one"}
	r1 := f.create(t, a).Revision
	r2 := f.create(t, object{ns: "ns", name: "b", value: "one"}).Revision
	f.update(t, a, "two")
	r4 := f.delete(t, object{ns: "ns", name: "b"}).Revision

	l := f.list(t, f.Keys.Prefix(), storage.ListOptions{ResourceVersion: strconv.FormatInt(r1, 10), ResourceVersionMatch: storage.MatchExact})
	checkNames(t, fmt.Sprintf("list at revision %d", r1), l.Items, "ns/a")
	if l.Revision != r1 || decode(t, l.Items[0].Data).value != "one" {
		t.Fatalf("exact list at %d has Revision %d and value %q", r1, l.Revision, decode(t, l.Items[0].Data).value)
	}
	l = f.list(t, f.Keys.Prefix(), storage.ListOptions{ResourceVersion: strconv.FormatInt(r2, 10), ResourceVersionMatch: storage.MatchExact})
	checkNames(t, fmt.Sprintf("list at revision %d", r2), l.Items, "ns/a", "ns/b")
	// NotOlderThan accepts any state at or after N (a cache may lag the
	// last write); at the last write's revision it is the latest state.
	l = f.list(t, f.Keys.Prefix(), storage.ListOptions{ResourceVersion: strconv.FormatInt(r1, 10), ResourceVersionMatch: storage.MatchNotOlderThan})
	if l.Revision < r1 {
		t.Fatalf("list not older than %d has Revision %d", r1, l.Revision)
	}
	l = f.list(t, f.Keys.Prefix(), storage.ListOptions{ResourceVersion: strconv.FormatInt(r4, 10), ResourceVersionMatch: storage.MatchNotOlderThan})
	checkNames(t, fmt.Sprintf("list not older than %d", r4), l.Items, "ns/a")
	if v := decode(t, l.Items[0].Data).value; v != "two" || l.Revision < r4 {
		t.Fatalf("list not older than %d shows value %q at Revision %d, want the latest", r4, v, l.Revision)
	}
}

func testListTooLargeResourceVersion(t *testing.T, f Fixture) {
	rev := f.create(t, object{ns: "ns", name: "a"}).Revision
	rv := strconv.FormatInt(rev+1000, 10)
	for _, match := range []string{"", storage.MatchNotOlderThan, storage.MatchExact} {
		_, err := f.Store.List(testContext(t), f.Keys.Prefix(), storage.ListOptions{ResourceVersion: rv, ResourceVersionMatch: match})
		// kube-apiserver's words, whichever part of it answers.
		if want := fmt.Sprintf("too large resource version: %s, current: ", rv); !storage.IsTooLargeResourceVersion(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("list at resourceVersion %s match %q (current %d): %v, want TooLargeResourceVersion saying %q", rv, match, rev, err, want)
		}
	}
	if _, err := f.Store.List(testContext(t), f.Keys.Prefix(), storage.ListOptions{ResourceVersion: "x"}); !storage.IsInvalid(err) {
		t.Errorf("list at resourceVersion x: %v, want Invalid", err)
	}
}
