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

	"github.com/miniapi/miniapi/server"
)

// sharedDirPrefix starts the name of a shared member's data directory
// in the OS temporary directory; the process ID follows, so a later
// process can tell a directory whose process was killed (sweepShared).
const sharedDirPrefix = "miniapitest-etcd-"

// shared is the process's etcd member that environments share (see
// server.SharedEtcd): started by the Start that finds none running,
// stopped when the last environment using it stops, so that nothing of
// it outlives the tests (a TestMain's leak check included). Tests that
// overlap, parallel ones, share it; a TestMain that holds an
// environment (StartMain) keeps it for the whole run.
var shared struct {
	mu    sync.Mutex
	etcd  *server.SharedEtcd
	dir   string
	users int
}

// acquireEtcd returns the process's shared member, starting it if none
// runs, and the release to call once the environment using it has
// stopped.
func acquireEtcd(ctx context.Context) (*server.SharedEtcd, func(), error) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
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

// releaseEtcd ends one environment's use of the shared member and
// stops the member if it was the last.
func releaseEtcd() {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	shared.users--
	if shared.users > 0 {
		return
	}
	shared.etcd.Close()
	os.RemoveAll(shared.dir)
	shared.etcd, shared.dir = nil, ""
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
