//go:build e2e_kubectl

// Command kubectl is the real kubectl, built from k8s.io/kubectl as a test
// tool for the end-to-end tests, so that they drive miniapi with the
// kubectl users run without downloading a release binary.
//
// It is wired as kubernetes/cmd/kubectl wires it. The build tag keeps
// `go build ./...` and `go vet ./...` from compiling kubectl's large
// dependency tree for nothing; the tests build it with
// `go build -tags e2e_kubectl`.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
)

func main() {
	os.Exit(cli.Run(cmd.NewDefaultKubectlCommand()))
}
