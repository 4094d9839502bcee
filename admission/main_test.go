package admission_test

import (
	"testing"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"go.uber.org/goleak"
)

// TestMain fails the run if a test leaves a goroutine behind: servers,
// their etcd, the plugins' informers, webhook servers and the clients
// must all be gone.
func TestMain(m *testing.M) {
	// Once, before any test runs: controller-runtime's logger may be
	// set only once, and the webhook servers log through it.
	log.SetLogger(logr.Discard())
	goleak.VerifyTestMain(m,
		// klog starts its flush daemon at init, once per process.
		goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),
	)
}
