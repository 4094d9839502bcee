package miniapitest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/miniapi/miniapi/server"
)

// sharedDirPrefix starts the name of a shared member's data directory
// in the OS temporary directory; the process ID follows, so a later
// process can tell a directory whose process was killed (sweepShared).
const sharedDirPrefix = "miniapitest-etcd-"

// shareLinger is how long the shared member outlives the last
// environment using it, so that sequential tests, each starting its
// environment after the previous one stopped, share it too: a logical
// cluster starts in a third of the time of a member and its bootstrap.
// It is short enough that a TestMain's goleak.VerifyTestMain, which
// retries for about 430 ms by default, sees the member gone.
const shareLinger = 100 * time.Millisecond

// shared is the process's etcd member that environments share (see
// server.SharedEtcd): started by the Start that finds none running,
// stopped shareLinger after the last environment using it stops, so
// that nothing of it outlives the tests (a TestMain's leak check
// included). Tests that overlap, parallel ones, and tests that follow
// each other share it; a TestMain that holds an environment
// (StartMain) keeps it for the whole run.
var shared struct {
	mu    sync.Mutex
	etcd  *server.SharedEtcd
	dir   string
	users int
	// closing stops the member once it has been idle for shareLinger.
	closing *time.Timer
}

// acquireEtcd returns the process's shared member, starting it if none
// runs, and the release to call once the environment using it has
// stopped.
func acquireEtcd(ctx context.Context) (*server.SharedEtcd, func(), error) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.closing != nil {
		// Had it fired already, closeIdle finds a user and leaves the
		// member running.
		shared.closing.Stop()
		shared.closing = nil
	}
	if shared.etcd == nil {
		sweepShared()
		dir, err := os.MkdirTemp("", sharedDirPrefix+strconv.Itoa(os.Getpid())+"-")
		if err != nil {
			return nil, nil, fmt.Errorf("shared etcd: %w", err)
		}
		e, err := server.StartSharedEtcd(ctx, server.SharedEtcdConfig{Dir: dir, UnsafeNoFsync: true})
		if err != nil {
			os.RemoveAll(dir)
			return nil, nil, err
		}
		shared.etcd, shared.dir = e, dir
	}
	shared.users++
	var once sync.Once
	return shared.etcd, func() { once.Do(releaseEtcd) }, nil
}

// releaseEtcd ends one environment's use of the shared member and, if
// it was the last, stops the member after shareLinger unless another
// environment takes it first.
func releaseEtcd() {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	shared.users--
	if shared.users > 0 {
		return
	}
	e := shared.etcd
	shared.closing = time.AfterFunc(shareLinger, func() { closeIdle(e) })
}

// closeIdle stops e if it is still the shared member and unused.
func closeIdle(e *server.SharedEtcd) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.etcd != e || shared.users > 0 {
		return
	}
	shared.etcd.Close()
	os.RemoveAll(shared.dir)
	shared.etcd, shared.dir, shared.closing = nil, "", nil
}

// sweepShared removes the data directories of shared members whose
// process has exited: a test binary exits without waiting for
// when it is killed or a test calls os.Exit, leaving its member's
// directory behind.
func sweepShared() {
	tmp := os.TempDir()
	dirs, err := filepath.Glob(filepath.Join(tmp, sharedDirPrefix+"*"))
	if err != nil {
		return
	}
	for _, dir := range dirs {
		rest := strings.TrimPrefix(filepath.Base(dir), sharedDirPrefix)
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid == os.Getpid() {
			continue
		}
		p, err := os.FindProcess(pid)
		if err != nil {
			continue
		}
		if err := p.Signal(syscall.Signal(0)); errors.Is(err, os.ErrProcessDone) {
			os.RemoveAll(dir)
		}
	}
}
