package server

import (
	"context"
	"slices"
	"testing"
	"time"

	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/miniapi/miniapi/internal/workqueues"
)

// TestEveryQueueOwned: every work queue a server with every controller,
// nodes, the scheduler and the kubelet makes is counted as the server's,
// so WaitForControllers sees all its work, and none of another server's.
// A queue made outside workqueues.Own (a kube upgrade moving one) fails
// it.
func TestEveryQueueOwned(t *testing.T) {
	if !workqueues.Installed() {
		t.Fatal("client-go's work queues do not report to package workqueues: package initialization order changed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := Start(ctx, Config{
		Listen: "127.0.0.1:0", DataDir: t.TempDir(), UnsafeNoFsync: true, CertDir: t.TempDir(),
		Nodes: 1, Scheduler: true, Kubelet: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	// The resource quota controller is built last, once it has read
	// discovery.
	for !slices.Contains(s.queues.Queues(), "resourcequota_primary") {
		select {
		case <-ctx.Done():
			t.Fatalf("the resource quota controller's queue never came; the server's queues: %q", s.queues.Queues())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if got := workqueues.Unowned(); len(got) > 0 {
		t.Fatalf("queues made outside workqueues.Own: %q", got)
	}
	for _, want := range []string{"deployment", "autoregister", "priority_and_fairness_config_queue", "ClusterRoleAggregator", "scheduler"} {
		if !slices.Contains(s.queues.Queues(), want) {
			t.Errorf("queue %q is not the server's; its queues: %q", want, s.queues.Queues())
		}
	}
	// /metrics still serves kube's work-queue metrics.
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				found = found || f.GetName() == "workqueue_adds_total" && l.GetName() == "name" && l.GetValue() == "deployment"
			}
		}
	}
	if !found {
		t.Error("no workqueue_adds_total{name=\"deployment\"} in the metrics")
	}
}
