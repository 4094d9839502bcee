//go:build race

package e2e

// raceEnabled is true when the tests run with -race; the binary under test
// is then built with -race too, so a data race in the server fails its exit
// code check.
const raceEnabled = true
