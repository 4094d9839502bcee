package miniapitest_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if anything the tests started (servers, etcd,
// clients) leaves a goroutine behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// klog starts its flush daemon at init, once per process.
		goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),
	)
}
