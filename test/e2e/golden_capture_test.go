package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

// goldenCaptureEnv names the kubeconfig of a kube-apiserver 1.37 whose
// answers TestGoldenCapture records. The server must run no controllers
// (as envtest's does not) and no ServiceAccount admission; the capture
// works in its own namespaces (golden-*) and cluster-scoped objects named
// golden-* and removes each object once answered.
//
//	MINIAPI_GOLDEN_KUBECONFIG=/path/to/kubeconfig go test ./test/e2e -run TestGoldenCapture
const goldenCaptureEnv = "MINIAPI_GOLDEN_KUBECONFIG"

// TestGoldenCapture creates every case of the corpus on the reference
// server, as TestGolden replays them on miniapi, and writes its answers,
// normalized, next to the manifests; then the kubectl sample's answers.
// It checks that kube accepts exactly the cases not named bad-*, and
// that no time the server picked escaped normalization.
func TestGoldenCapture(t *testing.T) {
	kubeconfig := os.Getenv(goldenCaptureEnv)
	if kubeconfig == "" {
		t.Skipf("set %s to the kubeconfig of a kube-apiserver to record its answers", goldenCaptureEnv)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cases := loadGoldenCases(t)
	ref := newGoldenTarget(t, cfg)
	namespaces := goldenNamespaces(cases)
	ref.createNamespaces(ctx, t, namespaces)
	t.Cleanup(func() { ref.deleteNamespaces(ctx, t, namespaces) })

	answers := map[string][]goldenAnswer{} // by answers file
	for _, c := range cases {
		a, name := ref.createJSON(ctx, t, c)
		if name != "" {
			ref.remove(ctx, t, c, name)
		}
		if pa, name, ok := ref.createProtobuf(ctx, t, c); ok {
			if name != "" {
				ref.remove(ctx, t, c, name)
			}
			if len(answerDiff(a, pa)) > 0 {
				a.Protobuf = &pa
			}
		}
		switch {
		case c.refused() && a.Status == nil:
			t.Errorf("%s: kube accepted a case named %s*", c.id(), goldenRefusedPrefix)
		case !c.refused() && a.Status != nil:
			t.Errorf("%s: kube refused it: %v", c.id(), a.Status["message"])
		}
		for _, p := range recentTimes(a.Object, "", time.Now()) {
			t.Errorf("%s: %s is a time the server picked: add it to normalizeGolden", c.id(), p)
		}
		answers[c.answersFile()] = append(answers[c.answersFile()], a)
	}
	if t.Failed() {
		t.Fatal("not writing answers")
	}
	for path, as := range answers {
		writeGoldenYAML(t, path, as)
	}

	kubectlAnswers := runGoldenKubectl(t, kubeconfig, cases)
	if t.Failed() {
		t.Fatal("not writing kubectl answers")
	}
	writeGoldenYAML(t, filepath.Join(goldenDir, goldenKubectlFile), kubectlAnswers)
}

// writeGoldenYAML writes v as YAML, with a header saying where it came
// from.
func writeGoldenYAML(t *testing.T, path string, v any) {
	t.Helper()
	data, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	header := "# kube-apiserver's answers, recorded by TestGoldenCapture (golden_capture_test.go); do not edit.\n"
	if err := os.WriteFile(path, append([]byte(header), data...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// recentTimes lists the paths under v of strings that are times within a
// day of now: times a server picked, not ones a manifest gave.
func recentTimes(v any, path string, now time.Time) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			out = append(out, recentTimes(e, strings.TrimPrefix(path+"."+k, "."), now)...)
		}
	case []any:
		for i, e := range v {
			out = append(out, recentTimes(e, fmt.Sprintf("%s[%d]", path, i), now)...)
		}
	case string:
		if ts, err := time.Parse(time.RFC3339Nano, v); err == nil && ts.After(now.Add(-24*time.Hour)) && ts.Before(now.Add(24*time.Hour)) {
			out = append(out, path)
		}
	}
	return out
}
