package main

import (
	"go/build"
	"slices"
	"testing"
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
