package server

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miniapi/miniapi/storage/etcd3/etcd3test"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestCompactorTurns: compactors on one cluster take turns through
// compactRevKey, as kube-apiserver replicas do. Of two that tick
// together, one compacts and the other adopts its turn and learns what
// it compacted to; neither compacts twice per interval.
func TestCompactorTurns(t *testing.T) {
	client := etcd3test.Start(t)
	ctx := context.Background()
	put := func(key string) int64 {
		resp, err := client.Put(ctx, key, "v")
		if err != nil {
			t.Fatal(err)
		}
		return resp.Header.Revision
	}
	a := &compactor{client: client}
	b := &compactor{client: client}

	// First tick: A records the current revision; B finds A took the
	// turn, and nothing is compacted yet.
	aTurns, aRev, compacted, err := a.turn(ctx, 0, 0)
	if err != nil || aTurns != 1 || compacted != 0 {
		t.Fatalf("A's first turn = %d, %d, %v; want 1 turn, nothing compacted", aTurns, compacted, err)
	}
	bTurns, bRev, compacted, err := b.turn(ctx, 0, 0)
	if err != nil || bTurns != 1 || compacted != 0 {
		t.Fatalf("B's first turn = %d, %d, %v; want A's turn adopted, nothing compacted", bTurns, compacted, err)
	}
	old := put("old")
	put("new")

	// Second tick: A compacts to the revision of its first tick; B
	// learns it rather than compacting too.
	aTurns, _, compacted, err = a.turn(ctx, aTurns, aRev)
	if err != nil || aTurns != 2 || compacted != aRev {
		t.Fatalf("A's second turn = %d, %d, %v; want 2 turns, compacted to %d", aTurns, compacted, err, aRev)
	}
	bTurns, _, compacted, err = b.turn(ctx, bTurns, bRev)
	if err != nil || bTurns != 2 || compacted != aRev {
		t.Fatalf("B's second turn = %d, %d, %v; want A's turn adopted and its compaction (%d) learnt", bTurns, compacted, err, aRev)
	}
	if _, err := client.Get(ctx, "old", clientv3.WithRev(aRev-1)); err == nil {
		t.Fatalf("etcd still serves revision %d after the compaction to %d", aRev-1, aRev)
	}
	if _, err := client.Get(ctx, "old", clientv3.WithRev(old)); err != nil {
		t.Fatalf("etcd no longer serves revision %d, written after the revision compacted to: %v", old, err)
	}

	// A deleted key starts the count again rather than failing.
	if _, err := client.Delete(ctx, compactRevKey); err != nil {
		t.Fatal(err)
	}
	if turns, _, _, err := a.turn(ctx, aTurns, aRev); err != nil || turns != 0 {
		t.Fatalf("turn after the key was deleted = %d, %v; want 0 turns", turns, err)
	}
	if turns, _, _, err := a.turn(ctx, 0, 0); err != nil || turns != 1 {
		t.Fatalf("turn after that = %d, %v; want 1", turns, err)
	}
}

// TestReplicaLearnsOthersCompaction: a replica that does not compact
// (--etcd-compaction-interval=0) learns of another's compactions, so its
// caches refuse the revisions etcd no longer serves, as kube-apiserver's
// do, rather than serving them from memory.
func TestReplicaLearnsOthersCompaction(t *testing.T) {
	etcd := etcd3test.StartEmbedded(t)
	var replicas [2]*Server
	for i, interval := range []time.Duration{100 * time.Millisecond, -1} {
		replicas[i] = startConfig(t, Config{UnsafePlainHTTP: true, EtcdServers: []string{etcd.Endpoint()}, CompactionInterval: interval})
	}
	a, b := replicas[0].URL(), replicas[1].URL()
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	post(t, c, a+"/api/v1/namespaces", `{"metadata":{"name":"ns1"}}`)
	first, _ := strconv.ParseInt(createCM(t, c, a, "old", ""), 10, 64)
	createCM(t, c, a, "newer", "")
	// B's cache serves the first write's revision until it learns.
	if code, msg := listExact(t, c, b, first); code != http.StatusOK {
		t.Fatalf("Exact list on B before any compaction = %d %q", code, msg)
	}
	waitFor(t, "B to refuse the compacted revision", func() bool {
		code, msg := listExact(t, c, b, first)
		return code == http.StatusGone && strings.Contains(msg, "too old")
	})
}

// TestSharedMemberTellsClusters: the shared member's compactions reach
// the caches of every logical cluster serving on it, and a cluster shut
// down is told no more.
func TestSharedMemberTellsClusters(t *testing.T) {
	se, err := StartSharedEtcd(context.Background(), SharedEtcdConfig{Dir: t.TempDir(), UnsafeNoFsync: true, CompactionInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// Cleanups run last first: the member closes after the servers.
	t.Cleanup(func() { se.Close() })
	var clusters [2]*Server
	for i := range clusters {
		clusters[i] = startConfig(t, Config{UnsafePlainHTTP: true, Etcd: se, DataDir: t.TempDir()})
	}
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	var firsts [2]int64
	for i, srv := range clusters {
		post(t, c, srv.URL()+"/api/v1/namespaces", `{"metadata":{"name":"ns1"}}`)
		firsts[i], _ = strconv.ParseInt(createCM(t, c, srv.URL(), "old", ""), 10, 64)
		createCM(t, c, srv.URL(), "newer", "")
	}
	for i, srv := range clusters {
		waitFor(t, fmt.Sprintf("cluster %d to refuse its compacted revision", i), func() bool {
			code, msg := listExact(t, c, srv.URL(), firsts[i])
			return code == http.StatusGone && strings.Contains(msg, "too old")
		})
	}
	if err := clusters[0].Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	se.compactions.mu.Lock()
	_, stillTold := se.compactions.servers[clusters[0]]
	n := len(se.compactions.servers)
	se.compactions.mu.Unlock()
	if stillTold || n != 1 {
		t.Fatalf("after one of two clusters shut down the member tells %d (the one shut down: %v), want 1", n, stillTold)
	}
}
