package miniapitest_test

import (
	"testing"

	"github.com/go-logr/logr"
	"go.uber.org/goleak"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// TestMain fails the run if anything the tests started (servers, etcd,
// clients) leaves a goroutine behind. controller-runtime's logger is set
// here, once: SetLogger is not safe beside another call to it, and the
// tests that run managers are parallel.
func TestMain(m *testing.M) {
	log.SetLogger(logr.Discard())
	goleak.VerifyTestMain(m,
		// klog starts its flush daemon at init, once per process.
		goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),
	)
}
