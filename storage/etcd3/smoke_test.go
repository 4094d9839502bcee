package etcd3_test

import (
	"context"
	"testing"

	"github.com/miniapi/miniapi/storage"
	"github.com/miniapi/miniapi/storage/etcd3"
	"github.com/miniapi/miniapi/storage/etcd3/etcd3test"
)

func TestSmoke(t *testing.T) {
	ctx := context.Background()
	s := etcd3.New(etcd3.Config{Client: etcd3test.Start(t)})
	w, err := s.Watch(ctx, "/r/", storage.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	obj, err := s.Create(ctx, "/r/a", []byte(`{"apiVersion":"v1","kind":"K","metadata":{"name":"a","resourceVersion":"3"}}`))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d %s", obj.Revision, obj.Data)
	ev := <-w.ResultChan()
	t.Logf("%s %d %s", ev.Type, ev.Object.Revision, ev.Object.Data)
	w.Stop()
	for range w.ResultChan() {
	}
}
