package main

import (
	"bytes"
	"go/build"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/miniapi/miniapi/admission"
	"github.com/spf13/pflag"
)

// TestImports keeps the command to flags and the constructor test/e2e
// calls too: it reads its version from package version and never
// imports the HTTP layer.
func TestImports(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, banned := range []string{"github.com/miniapi/miniapi/endpoints", "github.com/miniapi/miniapi/endpoints/handlers"} {
		if slices.Contains(pkg.Imports, banned) {
			t.Errorf("cmd/miniapi imports %s", banned)
		}
	}
	if !slices.Contains(pkg.Imports, "github.com/miniapi/miniapi/version") {
		t.Error("cmd/miniapi does not read its version from package version")
	}
}

// TestCommandLineMistakes prints the usage and the error to stderr for
// an unknown flag, a flag without its value and a stray argument, and
// fails (miniapi exits 1), instead of exiting silently.
func TestCommandLineMistakes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "Error: unknown flag: --bogus\n"},
		{[]string{"--listen"}, "Error: flag needs an argument: --listen\n"},
		{[]string{"stray-arg"}, `Error: "miniapi" does not take any arguments, got ["stray-arg"]` + "\n"},
	} {
		cmd := newCommand()
		var stdout, stderr bytes.Buffer
		cmd.SetArgs(tc.args)
		cmd.SetOut(&stdout)
		cmd.SetErr(&stderr)
		if err := execute(cmd); err == nil {
			t.Errorf("%q: no error", tc.args)
		}
		got := stderr.String()
		if !strings.HasPrefix(got, "Usage:\n  miniapi [flags]\n") || !strings.Contains(got, "--listen string") || !strings.HasSuffix(got, tc.want) {
			t.Errorf("%q: stderr is not the usage then %q:\n%s", tc.args, tc.want, got)
		}
		if stdout.Len() != 0 {
			t.Errorf("%q: stdout %q", tc.args, stdout.String())
		}
	}
}

// TestNegativeRequestTimeout refuses a negative --request-timeout with
// kube-apiserver's message, before starting anything.
func TestNegativeRequestTimeout(t *testing.T) {
	cmd := newCommand()
	var stderr bytes.Buffer
	cmd.SetArgs([]string{"--request-timeout=-1s", "--data-dir", t.TempDir()})
	cmd.SetErr(&stderr)
	if err := execute(cmd); err == nil || stderr.String() != "miniapi: --request-timeout can not be negative value\n" {
		t.Errorf("err %v, stderr %q", err, stderr.String())
	}
}

// TestOptionsDocumented holds docs/options.md to the command: every flag
// has a row, and the admission plugins it lists are the ones served.
func TestOptionsDocumented(t *testing.T) {
	data, err := os.ReadFile("../../docs/options.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	newCommand().Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" || f.Name == "version" {
			return
		}
		if !strings.Contains(doc, "| `--"+f.Name+"` |") {
			t.Errorf("docs/options.md has no row for --%s", f.Name)
		}
	})
	for _, p := range admission.PluginNames() {
		if !strings.Contains(doc, "`"+p+"`") {
			t.Errorf("docs/options.md does not name the admission plugin %s", p)
		}
	}
}
