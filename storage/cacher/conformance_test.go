package cacher

import (
	"context"
	"testing"

	"github.com/miniapi/miniapi/storage"
	"github.com/miniapi/miniapi/storage/etcd3"
	"github.com/miniapi/miniapi/storage/etcd3/etcd3test"
	"github.com/miniapi/miniapi/storage/storagetest"
)

// TestConformance runs the storage suite against a Cacher over an etcd3
// Store: the registry must not be able to tell the two apart.
func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storagetest.Fixture {
		client := etcd3test.Start(t)
		keys := storage.ResourceKeys{Resource: "configmaps", Namespaced: true}
		c, err := New(etcd3.New(etcd3.Config{Client: client}), Config{Prefix: keys.Prefix(), Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		if err := c.Ready(ctx); err != nil {
			t.Fatal(err)
		}
		return storagetest.Fixture{
			Store:  c,
			Keys:   keys,
			Client: client,
			Compact: func(ctx context.Context, rev int64) error {
				if err := etcd3test.Compact(ctx, client, rev); err != nil {
					return err
				}
				c.Expire(rev)
				return nil
			},
		}
	})
}
