package workqueues_test

import (
	"testing"

	"k8s.io/client-go/util/workqueue"
	// What installs component-base's provider in the server: this
	// package's must still come first.
	_ "k8s.io/component-base/metrics/prometheus/workqueue"

	"github.com/miniapi/miniapi/internal/workqueues"
)

func TestInstalledBeforeComponentBase(t *testing.T) {
	if !workqueues.Installed() {
		t.Fatal("client-go kept another work queue metrics provider: package initialization order changed")
	}
}

// TestOwnerCountsItsQueues: an owner sees its own queues' keys, waiting
// and in hand, and nothing of a queue made outside Own.
func TestOwnerCountsItsQueues(t *testing.T) {
	var a, b workqueues.Owner
	var qa, qb workqueue.TypedInterface[string]
	done := workqueues.Own(&a)
	qa = workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Name: "test"})
	done()
	done = workqueues.Own(&b)
	qb = workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Name: "test"})
	done()
	other := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Name: "test"})
	defer qa.ShutDown()
	defer qb.ShutDown()
	defer other.ShutDown()

	if got := a.Queues(); len(got) != 1 || got[0] != "test" {
		t.Fatalf("a's queues %q, want [test]", got)
	}
	other.Add("x")
	if n, idle := a.Idle(); !idle || n != 0 {
		t.Fatalf("a: %d adds, idle %v; want 0, idle: the key went to a queue of no owner", n, idle)
	}
	qa.Add("k")
	if n, idle := a.Idle(); idle || n != 1 {
		t.Fatalf("a with a key waiting: %d adds, idle %v; want 1, busy", n, idle)
	}
	if _, idle := b.Idle(); !idle {
		t.Fatal("b is busy with a's key")
	}
	k, _ := qa.Get()
	if _, idle := a.Idle(); idle {
		t.Fatal("a is idle with a key in a worker's hands")
	}
	qa.Done(k)
	if n, idle := a.Idle(); !idle || n != 1 {
		t.Fatalf("a after the key is done: %d adds, idle %v; want 1, idle", n, idle)
	}
}
