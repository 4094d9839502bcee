package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/miniapi/miniapi/faults"
	"github.com/miniapi/miniapi/journal"
)

// TestFaultsAdminDoc runs the kubectl commands of docs/testing.md's
// "Injecting faults" against the binary, in order: the rule is added,
// meets a list, is listed with its count, and is removed.
func TestFaultsAdminDoc(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	doc := readDoc(t, "docs/testing.md")
	_, section, ok := strings.Cut(doc, "## Injecting faults")
	if !ok {
		t.Fatal(`docs/testing.md has no "Injecting faults" section`)
	}
	_, block, ok := strings.Cut(section, "```sh\n")
	if ok {
		block, _, ok = strings.Cut(block, "```")
	}
	if !ok {
		t.Fatal(`docs/testing.md's "Injecting faults" has no sh block`)
	}
	srv := startServer(t, t.TempDir())
	dir := t.TempDir()
	list := func() faults.List {
		var l faults.List
		out := kubectl(t, srv, "get", "--raw", faults.Path)
		if err := json.Unmarshal([]byte(out), &l); err != nil {
			t.Fatalf("get --raw %s: %v\n%s", faults.Path, err, out)
		}
		return l
	}
	var ran []string
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		line, _, _ = strings.Cut(line, "   #")
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "echo '"):
			js, _, _ := strings.Cut(strings.TrimPrefix(line, "echo '"), "'")
			if err := os.WriteFile(filepath.Join(dir, "rule.json"), []byte(js), 0o600); err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(line, "kubectl "):
			args := strings.Fields(strings.TrimPrefix(line, "kubectl "))
			for n, a := range args {
				if a == "rule.json" {
					args[n] = filepath.Join(dir, a)
				}
			}
			out := kubectl(t, srv, args...)
			ran = append(ran, args[0])
			switch strings.Join(ran, " ") {
			case "create":
				// The rule is live: a list meets it.
				kubectl(t, srv, "get", "configmaps", "-A")
			case "create get":
				var l faults.List
				if err := json.Unmarshal([]byte(out), &l); err != nil || len(l.Rules) != 1 || l.Rules[0].Name != "slow-lists" || l.Rules[0].Injected < 1 {
					t.Errorf("kubectl get --raw %s printed %s (%v), want slow-lists with a fault injected", faults.Path, out, err)
				}
			case "create get delete", "create get delete delete":
				if l := list(); len(l.Rules) != 0 {
					t.Errorf("after %s: rules %+v", line, l.Rules)
				}
			}
		default:
			t.Fatalf("docs/testing.md: no way to run %q", line)
		}
	}
	if got := strings.Join(ran, " "); got != "create get delete delete" {
		t.Errorf("ran kubectl %s, want create, get, delete, delete", got)
	}
}

// TestJournalEndpoint: the binary keeps a journal when asked and serves
// it to kubectl get --raw.
func TestJournalEndpoint(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	srv := startServer(t, t.TempDir(), "--journal-size=1000")
	kubectl(t, srv, "create", "configmap", "journaled", "--from-literal=a=b")
	var l journal.List
	out := kubectl(t, srv, "get", "--raw", journal.Path)
	if err := json.Unmarshal([]byte(out), &l); err != nil || l.Kind != "JournalList" {
		t.Fatalf("get --raw %s: %v\n%s", journal.Path, err, out)
	}
	found := false
	for _, e := range l.Entries {
		if e.Verb == "create" && e.Resource == "configmaps" && e.Name == "journaled" && e.Code == 201 && e.After != "" &&
			strings.HasPrefix(e.UserAgent, "kubectl") && e.FieldManager == "kubectl-create" {
			found = true
		}
	}
	if !found {
		t.Errorf("the journal has no create of configmap journaled by kubectl:\n%s", journal.Timeline(l.Entries))
	}
}
