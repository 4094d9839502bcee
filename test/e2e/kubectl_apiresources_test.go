package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestKubectlAPIResources compares `kubectl api-resources -o wide` on
// miniapi with what it prints for kube-apiserver 1.37 with its default
// flags (testdata/kube-apiserver-api-resources.txt, captured from the
// real server): every resource, in kube's order, with its short names,
// group version, scope, kind, verbs and categories, the review resources
// of authentication and authorization included.
func TestKubectlAPIResources(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	kubectlPath(t)
	srv := startServer(t, t.TempDir())
	got := parseAPIResources(t, kubectl(t, srv, "api-resources", "-o", "wide"))
	data, err := os.ReadFile(filepath.Join("testdata", "kube-apiserver-api-resources.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := parseAPIResources(t, string(data))
	for i := 0; i < max(len(got), len(want)); i++ {
		var g, w []string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if !slices.Equal(g, w) {
			t.Errorf("row %d:\n got %q\nwant %q", i, g, w)
		}
	}
}

// parseAPIResources splits kubectl's api-resources table into its cells,
// by the columns of its header (cells may be empty).
func parseAPIResources(t *testing.T, out string) [][]string {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	header := lines[0]
	var starts []int
	for i := range header {
		if header[i] != ' ' && (i == 0 || header[i-1] == ' ') {
			starts = append(starts, i)
		}
	}
	if len(starts) != 7 {
		t.Fatalf("api-resources header has %d columns, want 7: %q", len(starts), header)
	}
	var rows [][]string
	for _, line := range lines[1:] {
		row := make([]string, len(starts))
		for c, s := range starts {
			end := len(line)
			if c+1 < len(starts) {
				end = min(starts[c+1], len(line))
			}
			if s < len(line) {
				row[c] = strings.TrimSpace(line[s:end])
			}
		}
		rows = append(rows, row)
	}
	return rows
}
