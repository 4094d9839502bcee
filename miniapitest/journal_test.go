package miniapitest_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/miniapi/miniapi/journal"
	"github.com/miniapi/miniapi/miniapitest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestJournal writes, watches and is refused, then questions the
// journal: what each write did to the resourceVersion, what the watch
// was sent, who owns a field, what was refused.
func TestJournal(t *testing.T) {
	t.Parallel()
	env := miniapitest.Start(t, miniapitest.WithNamespaces("j"))
	ctx := t.Context()
	cfg := rest.CopyConfig(env.Config)
	cfg.UserAgent = "journal-test/v1"
	cs := kubernetes.NewForConfigOrDie(cfg)
	cms := cs.CoreV1().ConfigMaps("j")

	w, err := cms.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=cm"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	mark := env.Journal.Mark()
	// With data, so that managedFields track the object from its
	// create: kube does not start tracking on an update.
	created, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: map[string]string{"v": "0"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Data["v"] = "1"
	updated, err := cms.Update(ctx, created, metav1.UpdateOptions{FieldManager: "tester"})
	if err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "cm", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		<-w.ResultChan()
	}
	env.Settle(ctx)

	// The requests, as the store saw them.
	writes := env.Journal.Entries(journal.Since(mark), journal.Writes(), journal.Object("configmaps", "j", "cm"))
	want := []string{
		fmt.Sprintf("create 201 →%s journal-test", created.ResourceVersion),
		fmt.Sprintf("update 200 %s→%s tester", created.ResourceVersion, updated.ResourceVersion),
		fmt.Sprintf("delete 200 %s→", updated.ResourceVersion), // the deletion's revision follows
	}
	if len(writes) != len(want) {
		t.Fatalf("writes to cm: %d, want %d:\n%s", len(writes), len(want), journal.Timeline(writes))
	}
	for n, e := range writes {
		got := fmt.Sprintf("%s %d %s→%s %s", e.Verb, e.Code, e.Before, e.After, e.FieldManager)
		if !strings.HasPrefix(got, want[n]) || e.User == "" {
			t.Errorf("write %d: %q by %q, want %q…", n, got, e.User, want[n])
		}
	}
	if del := writes[2]; del.After <= updated.ResourceVersion && len(del.After) <= len(updated.ResourceVersion) {
		t.Errorf("the delete's revision %s is not after %s", del.After, updated.ResourceVersion)
	}

	// What the watch was sent.
	events := env.Journal.Entries(journal.Since(mark), journal.Events(), journal.UserAgent("journal-test"))
	var got []string
	for _, e := range events {
		got = append(got, e.EventType+" "+e.Namespace+"/"+e.Name+" "+e.After)
	}
	wantEvents := []string{"ADDED j/cm " + created.ResourceVersion, "MODIFIED j/cm " + updated.ResourceVersion, "DELETED j/cm " + writes[2].After}
	if strings.Join(got, ", ") != strings.Join(wantEvents, ", ") {
		t.Errorf("the watch was sent %q, want %q", got, wantEvents)
	}
	if len(events) > 0 && events[0].Watch == 0 {
		t.Error("events carry no watch number")
	}

	// Who owns a field: the manager of the update that set it.
	owner, ok, err := journal.Owner(updated, ".data.v")
	if err != nil || !ok || owner.Manager != "tester" {
		t.Errorf("Owner(.data.v) = %+v, %v, %v; want tester", owner, ok, err)
	}
	if owner, ok, _ := journal.Owner(created, ".data.v"); !ok || owner.Manager != "journal-test" {
		t.Errorf("Owner(.data.v) after the create = %+v, want journal-test", owner)
	}
	if _, ok, _ := journal.Owner(updated, ".data.other"); ok {
		t.Error("Owner found a manager of a field nobody set")
	}

	// Refusals are recorded with who was refused.
	anon := rest.AnonymousClientConfig(env.Config)
	if resp := rawDo(t, anon, http.MethodGet, env.URL+"/api/v1/namespaces/j/secrets", ""); resp.code != http.StatusForbidden {
		t.Fatalf("anonymous list of secrets: %d", resp.code)
	}
	refused := env.Journal.Entries(journal.Since(mark), journal.Requests(), func(e *journal.Entry) bool {
		return e.Resource == "secrets" && e.Code == http.StatusForbidden
	})
	if len(refused) != 1 || refused[0].User != "system:anonymous" || refused[0].Verb != "list" {
		t.Errorf("the refused list: %+v", refused)
	}
	if tl := journal.Timeline(writes); !strings.Contains(tl, "create  configmaps j/cm 201") || !strings.Contains(tl, "manager=tester") {
		t.Errorf("timeline:\n%s", tl)
	}
}

// TestJournalOnFailure: a failed test's log ends with the server's last
// requests.
func TestJournalOnFailure(t *testing.T) {
	t.Parallel()
	tb := &failingTB{TB: t}
	var created uint64
	// Registered first, so it runs after Start's own cleanups: the log
	// must hold the journal's last 50 entries (all it keeps), in order,
	// up to at least the test's own create.
	t.Cleanup(func() {
		tb.mu.Lock()
		defer tb.mu.Unlock()
		var seqs []uint64
		for _, line := range strings.Split(tb.logs, "\n") {
			var seq uint64
			if _, err := fmt.Sscanf(strings.TrimSpace(line), "%d ", &seq); err == nil {
				seqs = append(seqs, seq)
			}
		}
		if len(seqs) != 50 || seqs[49] < created || seqs[49]-seqs[0] != 49 {
			t.Errorf("the failed test logged entries %v, want the last 50, up to at least %d:\n%s", seqs, created, tb.logs)
		}
	})
	env := miniapitest.Start(tb, miniapitest.WithJournalSize(50))
	cs := kubernetes.NewForConfigOrDie(env.Config)
	if _, err := cs.CoreV1().ConfigMaps("default").Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "last-words"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	created = env.Journal.Mark()
	if n := len(env.Journal.Entries()); n != 50 {
		t.Errorf("a journal of 50 keeps %d entries", n)
	}
	// No journal, no log.
	none := miniapitest.Start(t, miniapitest.WithJournalSize(0))
	if none.Journal != nil {
		t.Error("WithJournalSize(0) kept a journal")
	}
}

// failingTB is a test that has failed, whose logs are kept.
type failingTB struct {
	testing.TB
	mu   sync.Mutex
	logs string
}

func (f *failingTB) Failed() bool { return true }

func (f *failingTB) Logf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.logs += fmt.Sprintf(format, args...) + "\n"
}
