package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

// knownDifference is a way miniapi's answer to a golden case differs
// from kube-apiserver's on purpose or for now: diff is exactly what
// goldenDiff reports, so the test fails when the difference disappears or
// changes, and the entry must then go or change with it.
type knownDifference struct {
	reason string
	diff   []string
}

// goldenKnownDifferences are the known differences, by case id (kubectl
// answers by "kubectl " + case id). The JSON and protobuf answers share
// an entry.
var goldenKnownDifferences = map[string]knownDifference{}

// TestGolden creates every case of the golden corpus on miniapi, as
// TestGoldenCapture did on kube-apiserver 1.37, and compares the answers
// with kube's recorded ones after the same normalization: with the
// dynamic client in JSON, with client-go's typed Go types in protobuf (a
// server each), and, for a sample, with kubectl apply, get -o yaml and
// delete.
func TestGolden(t *testing.T) {
	skipIfShort(t)
	cases := loadGoldenCases(t)
	want := recordedGoldenAnswers(t, cases)

	t.Run("json", func(t *testing.T) {
		ctx := context.Background()
		g := newGoldenTarget(t, goldenServer(t))
		g.createNamespaces(ctx, t, goldenNamespaces(cases))
		for _, c := range cases {
			got, name := g.createJSON(ctx, t, c)
			if name != "" {
				g.remove(ctx, t, c, name)
			}
			w := want[c.id()]
			w.Protobuf = nil
			checkGolden(t, c.id(), answerDiff(w, got))
		}
	})

	t.Run("protobuf", func(t *testing.T) {
		ctx := context.Background()
		g := newGoldenTarget(t, goldenServer(t))
		g.createNamespaces(ctx, t, goldenNamespaces(cases))
		typed := 0
		for _, c := range cases {
			got, name, ok := g.createProtobuf(ctx, t, c)
			if !ok {
				continue
			}
			typed++
			if name != "" {
				g.remove(ctx, t, c, name)
			}
			checkGolden(t, c.id(), answerDiff(want[c.id()].forProtobuf(), got))
		}
		// Every kind is client-go's or the apiextensions clientset's.
		if typed != len(cases) {
			t.Errorf("%d cases went through the clientsets' typed Go types, want %d", typed, len(cases))
		}
	})

	t.Run("kubectl", func(t *testing.T) {
		ctx := context.Background()
		srv := startServer(t, t.TempDir(), bareServer...)
		g := newGoldenTarget(t, clientConfig(t, srv))
		g.createNamespaces(ctx, t, goldenNamespaces(cases))
		var recorded []goldenKubectlAnswer
		readGoldenYAML(t, filepath.Join(goldenDir, goldenKubectlFile), &recorded)
		got := runGoldenKubectl(t, srv.kubeconfigPath(t), cases)
		if len(got) != len(recorded) {
			t.Fatalf("%d kubectl answers recorded for %d cases of the sample: capture again", len(recorded), len(got))
		}
		for i := range got {
			if got[i].Case != recorded[i].Case {
				t.Fatalf("kubectl answer %d recorded for %s, not %s: capture again", i, recorded[i].Case, got[i].Case)
			}
			checkGolden(t, "kubectl "+got[i].Case, goldenDiff(toJSONMap(t, recorded[i]), toJSONMap(t, got[i])))
		}
	})
}

// goldenServer starts a server that knows the reference server's admin
// token (user admin, uid admin-uid, in system:masters) and returns a
// client configuration that authenticates with it: the answers that
// record the requesting user (a CertificateSigningRequest's spec) are
// then the same as kube's.
func goldenServer(t *testing.T) *rest.Config {
	t.Helper()
	tokens := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(tokens, []byte(goldenAdminToken+`,admin,admin-uid,"system:masters"`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// As the reference server the answers were captured from: its
	// admission chain is kube-apiserver's default less ServiceAccount,
	// as envtest's (bareServer).
	srv := startServer(t, t.TempDir(), append([]string{"--token-auth-file", tokens}, bareServer...)...)
	cfg := clientConfig(t, srv)
	cfg.CertData, cfg.KeyData, cfg.BearerToken = nil, nil, goldenAdminToken
	return cfg
}

// goldenAdminToken is the admin token of the reference server the
// answers were captured from (../shared/reference's tokens.csv).
const goldenAdminToken = "refstack-admin-token"

// recordedGoldenAnswers reads kube's answers to the cases, by case id,
// failing the test unless each case has exactly one.
func recordedGoldenAnswers(t *testing.T, cases []goldenCase) map[string]goldenAnswer {
	t.Helper()
	want := map[string]goldenAnswer{}
	files := map[string][]goldenCase{}
	for _, c := range cases {
		files[c.answersFile()] = append(files[c.answersFile()], c)
	}
	for path, cs := range files {
		var as []goldenAnswer
		readGoldenYAML(t, path, &as)
		if len(as) != len(cs) {
			t.Fatalf("%s: %d answers for %d cases: capture again", path, len(as), len(cs))
		}
		for i, c := range cs {
			if as[i].Case != c.name {
				t.Fatalf("%s: answer %d is for %s, not %s: capture again", path, i, as[i].Case, c.name)
			}
			want[c.id()] = as[i]
		}
	}
	return want
}

// checkGolden fails the test unless diff is exactly the known difference
// of the case (none for most), and prints what to list otherwise.
func checkGolden(t *testing.T, id string, diff []string) {
	t.Helper()
	known, isKnown := goldenKnownDifferences[id]
	if slices.Equal(diff, known.diff) {
		return
	}
	var b strings.Builder
	for _, line := range diff {
		fmt.Fprintf(&b, "\t%q,\n", line)
	}
	if isKnown {
		t.Errorf("%s: the known difference (%s) changed; miniapi's answer now differs from kube-apiserver's by:\n%s", id, known.reason, &b)
		return
	}
	t.Errorf("%s: miniapi's answer differs from kube-apiserver's:\n%s", id, &b)
}

// toJSONMap turns v into its JSON object form.
func toJSONMap(t *testing.T, v any) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(mustJSON(t, v), &m); err != nil {
		t.Fatal(err)
	}
	return m
}
