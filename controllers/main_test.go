package controllers

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind: every
// controller must have stopped by the time its test ends.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
