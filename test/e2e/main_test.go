package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// binPath is the miniapi binary TestMain built; empty under -short, where
// every test that needs it skips.
var binPath string

// buildTimeout bounds building the binary (etcd is a large dependency;
// a cold build cache takes a while).
const buildTimeout = 10 * time.Minute

// TestMain builds the miniapi binary once for all tests, runs them, and
// fails the run if the test process itself leaks goroutines.
func TestMain(m *testing.M) {
	flag.Parse()
	var dir string
	if !testing.Short() {
		var err error
		dir, err = os.MkdirTemp("", "miniapi-e2e-bin-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "e2e:", err)
			os.Exit(1)
		}
		binPath, err = buildBinary(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "e2e:", err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		if dir != "" {
			os.RemoveAll(dir)
		}
		removeKubectl()
		os.Exit(code)
	}))
}

// buildBinary runs `go build ./cmd/miniapi` from the module root into dir
// (with -race when the tests run with it) and returns the binary's path.
func buildBinary(dir string) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "miniapi")
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.CommandContext(ctx, "go", append(args, "./cmd/miniapi")...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/miniapi: %w\n%s", err, out)
	}
	return bin, nil
}

// moduleRoot is the directory of the main module's go.mod.
func moduleRoot() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return "", fmt.Errorf("go list -m: %w", err)
	}
	root := strings.TrimSpace(string(out))
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return "", fmt.Errorf("module root %q has no go.mod: %w", root, err)
	}
	return root, nil
}
