package journal

import (
	"strings"
	"testing"
)

// The ring keeps the last entries, oldest first, and says how many it
// forgot.
func TestRing(t *testing.T) {
	j := New(3)
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		j.add(Entry{Kind: Request, Verb: "get", Resource: "pods", Namespace: "ns", Name: name, Code: 200})
	}
	var names []string
	for _, e := range j.Entries() {
		names = append(names, e.Name)
	}
	if got := strings.Join(names, ","); got != "c,d,e" {
		t.Errorf("entries %s, want c,d,e", got)
	}
	if d := j.Dropped(); d != 2 {
		t.Errorf("dropped %d, want 2", d)
	}
	mark := j.Mark()
	j.add(Entry{Kind: Request, Verb: "create", Resource: "pods", Namespace: "ns", Name: "f", Code: 201, After: "9"})
	since := j.Entries(Since(mark))
	if len(since) != 1 || since[0].Name != "f" {
		t.Errorf("since the mark: %+v", since)
	}
	if n := len(j.Entries(Stored(), Object("pods", "ns", "f"))); n != 1 {
		t.Errorf("stored writes of pods ns/f: %d", n)
	}
	if tl := Timeline(j.Entries()); strings.Count(tl, "\n") != 3 || !strings.Contains(tl, "create  pods ns/f 201") {
		t.Errorf("timeline:\n%s", tl)
	}
}

func TestSplitKey(t *testing.T) {
	for _, c := range []struct {
		key        string
		namespaced bool
		ns, name   string
	}{
		{"/registry/configmaps/ns1/cm", true, "ns1", "cm"},
		{"/registry/namespaces/ns1", false, "", "ns1"},
		{"/registry/apps/deployments/default/web", true, "default", "web"},
	} {
		if ns, name := splitKey(c.key, c.namespaced); ns != c.ns || name != c.name {
			t.Errorf("splitKey(%q) = %q, %q; want %q, %q", c.key, ns, name, c.ns, c.name)
		}
	}
}
