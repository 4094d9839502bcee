// Package e2e holds miniapi's end-to-end tests: black-box tests against the
// built miniapi binary, driven over HTTP exactly as a user (or curl) would.
//
// TestMain builds ./cmd/miniapi once into a temporary directory; each test
// then starts its own server process on a free loopback port with its own
// data directory, and stops it with a signal, checking that it exits 0:
//
//	srv := startServer(t, t.TempDir())
//	r := srv.do(t, "GET", "/api/v1/namespaces", nil)
//	...
//	srv.stop(t) // or leave it to t.Cleanup
//
// TestGolden compares miniapi's answers for every built-in kind with
// kube-apiserver's, recorded in testdata/golden (see its README.md).
//
// The tests need the Go toolchain (to build the binary) and skip under
// -short.
package e2e
