package admission_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if a test leaves a goroutine behind: servers,
// their etcd, the plugins' informers, webhook servers and the clients
// must all be gone.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// klog starts its flush daemon at init, once per process.
		goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),
	)
}
