package cacher

import (
	"encoding/json"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/miniapi/miniapi/storage"
)

func asError(err error, target **storage.Error) bool { return errors.As(err, target) }

func TestFilterConvertSelectorTransitions(t *testing.T) {
	web := map[string]string{"app": "web"}
	db := map[string]string{"app": "db"}
	sel := storage.Predicate{Label: labels.SelectorFromSet(labels.Set{"app": "web"})}
	mk := func(typ storage.EventType, prevLabels, curLabels map[string]string) *event {
		e := &event{typ: typ, rev: 9, key: k("a")}
		if prevLabels != nil {
			e.prev = testObj(k("a"), 5, prevLabels)
			e.prevAttrs = mustAttrs(t, e.prev)
		}
		switch typ {
		case storage.Deleted:
			e.obj = testObj(k("a"), 9, prevLabels)
			e.attrs = e.prevAttrs
		default:
			e.obj = testObj(k("a"), 9, curLabels)
			e.attrs = mustAttrs(t, e.obj)
		}
		return e
	}
	cases := []struct {
		name    string
		e       *event
		f       filter
		want    storage.EventType // "" for nothing
		wantRev int64
		wantLbl string
	}{
		{"added, matching", mk(storage.Added, nil, web), newFilter(testPrefix, sel), storage.Added, 9, "web"},
		{"added, not matching", mk(storage.Added, nil, db), newFilter(testPrefix, sel), "", 0, ""},
		{"modified, both match", mk(storage.Modified, web, web), newFilter(testPrefix, sel), storage.Modified, 9, "web"},
		{"modified, starts matching", mk(storage.Modified, db, web), newFilter(testPrefix, sel), storage.Added, 9, "web"},
		{"modified, stops matching", mk(storage.Modified, web, db), newFilter(testPrefix, sel), storage.Deleted, 9, "web"},
		{"modified, neither matches", mk(storage.Modified, db, db), newFilter(testPrefix, sel), "", 0, ""},
		{"deleted, matching", mk(storage.Deleted, web, nil), newFilter(testPrefix, sel), storage.Deleted, 9, "web"},
		{"deleted, not matching", mk(storage.Deleted, db, nil), newFilter(testPrefix, sel), "", 0, ""},
		{"other namespace", mk(storage.Added, nil, web), newFilter(testPrefix+"other/", storage.Predicate{}), "", 0, ""},
		{"exact key", mk(storage.Added, nil, web), newFilter(k("a"), storage.Predicate{}), storage.Added, 9, "web"},
		{"exact key, other object", mk(storage.Added, nil, web), newFilter(k("ab"), storage.Predicate{}), "", 0, ""},
		{"field selector on name", mk(storage.Added, nil, db),
			newFilter(testPrefix, storage.Predicate{Field: fields.OneTermEqualSelector("metadata.name", "a")}), storage.Added, 9, "db"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ev, ok := tc.f.convert(tc.e)
			if tc.want == "" {
				if ok {
					t.Fatalf("got %v, want nothing", ev.Type)
				}
				return
			}
			if !ok || ev.Type != tc.want {
				t.Fatalf("got %v %v, want %v", ev.Type, ok, tc.want)
			}
			a := mustAttrs(t, ev.Object)
			if ev.Object.Revision != tc.wantRev || a.Labels["app"] != tc.wantLbl {
				t.Fatalf("object rev %d labels %v", ev.Object.Revision, a.Labels)
			}
			var m struct {
				Metadata struct{ ResourceVersion string } `json:"metadata"`
			}
			_ = jsonUnmarshal(ev.Object.Data, &m)
			if m.Metadata.ResourceVersion != "9" {
				t.Fatalf("data resourceVersion %q", m.Metadata.ResourceVersion)
			}
		})
	}
}

func TestDeletedPrevComputedOnce(t *testing.T) {
	e := &event{typ: storage.Modified, rev: 9, key: k("a"), prev: testObj(k("a"), 5, nil)}
	a, b := e.deletedPrev(), e.deletedPrev()
	if a != b {
		t.Fatal("the transition DELETED object must be shared")
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
