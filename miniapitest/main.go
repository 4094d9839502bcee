package miniapitest

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"
)

// StartMain starts an environment outside any test, as Start does: for
// a TestMain that builds a fixture once (see Env.Snapshot and Fork).
// stop shuts it down and removes its files; call it before m.Run
// returns or os.Exit skips it. A failure is returned instead of failing
// a test.
func StartMain(opts ...Option) (env *Env, stop func(), err error) {
	t := &mainTB{}
	done := make(chan struct{})
	// Start fails with t.Fatalf, which ends its goroutine.
	go func() {
		defer close(done)
		env = Start(t, opts...)
	}()
	<-done
	if err := t.err(); err != nil {
		t.cleanup()
		return nil, nil, err
	}
	return env, t.cleanup, nil
}

// mainTB is the testing.TB of StartMain: failures are recorded (Fatal
// ends the calling goroutine, as in a test), cleanups run at stop. The
// methods Start and Env use are implemented; the embedded nil TB makes
// any other a panic.
type mainTB struct {
	testing.TB
	mu       sync.Mutex
	errs     []error
	cleanups []func()
}

func (m *mainTB) Helper()      {}
func (m *mainTB) Name() string { return "TestMain" }

func (m *mainTB) Cleanup(f func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cleanups = append(m.cleanups, f)
}

func (m *mainTB) TempDir() string {
	dir, err := os.MkdirTemp("", "miniapitest-")
	if err != nil {
		m.Fatalf("miniapitest: %v", err)
	}
	m.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func (m *mainTB) Errorf(format string, args ...any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.errs = append(m.errs, fmt.Errorf(format, args...))
}

func (m *mainTB) Fatalf(format string, args ...any) {
	m.Errorf(format, args...)
	runtime.Goexit()
}

func (m *mainTB) Error(args ...any)               { m.Errorf("%s", fmt.Sprint(args...)) }
func (m *mainTB) Fatal(args ...any)               { m.Fatalf("%s", fmt.Sprint(args...)) }
func (m *mainTB) Log(args ...any)                 {}
func (m *mainTB) Logf(format string, args ...any) {}
func (m *mainTB) Failed() bool                    { return m.err() != nil }

func (m *mainTB) err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return errors.Join(m.errs...)
}

// cleanup runs the cleanups, last added first, once.
func (m *mainTB) cleanup() {
	m.mu.Lock()
	fs := m.cleanups
	m.cleanups = nil
	m.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}
