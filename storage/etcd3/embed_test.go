package etcd3

import (
	"context"
	"testing"
	"time"
)

func TestEmbeddedRestartKeepsData(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	start := time.Now()
	e, err := StartEmbedded(ctx, EmbeddedConfig{Dir: dir, UnsafeNoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("first start took %v, endpoint %s", time.Since(start), e.Endpoint())
	put, err := e.Client.Put(ctx, "/k", "v1")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	start = time.Now()
	e, err = StartEmbedded(ctx, EmbeddedConfig{Dir: dir, UnsafeNoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	t.Logf("restart took %v, endpoint %s", time.Since(start), e.Endpoint())
	got, err := e.Client.Get(ctx, "/k")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Kvs) != 1 || string(got.Kvs[0].Value) != "v1" || got.Kvs[0].ModRevision != put.Header.Revision {
		t.Fatalf("after restart got %v, want v1 at revision %d", got.Kvs, put.Header.Revision)
	}
}
