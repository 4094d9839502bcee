package etcd3

import (
	"context"
	"strconv"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// BenchmarkEmbeddedClient compares the in-process client (the default)
// with a gRPC client over loopback, on one member, for the two calls every
// verb makes: a Put and a linearizable Get.
func BenchmarkEmbeddedClient(b *testing.B) {
	for _, tc := range []struct {
		name     string
		loopback bool
	}{{"client=inprocess", false}, {"client=loopback", true}} {
		b.Run(tc.name, func(b *testing.B) {
			e, err := StartEmbedded(context.Background(), EmbeddedConfig{Dir: b.TempDir(), UnsafeNoFsync: true, LoopbackClient: tc.loopback})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			ctx := context.Background()
			value := string(make([]byte, 512))
			b.Run("op=put", func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					if _, err := e.Client.Put(ctx, "/bench/"+strconv.Itoa(i%1000), value); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("op=get", func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					if _, err := e.Client.Get(ctx, "/bench/"+strconv.Itoa(i%1000)); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("op=get-serializable", func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					if _, err := e.Client.Get(ctx, "/bench/"+strconv.Itoa(i%1000), clientv3.WithSerializable()); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("op=put-parallel", func(b *testing.B) {
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					i := 0
					for pb.Next() {
						i++
						if _, err := e.Client.Put(ctx, "/bench/"+strconv.Itoa(i%1000), value); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		})
	}
}

// BenchmarkStartEmbedded measures starting a fresh member until it serves,
// and closing it.
func BenchmarkStartEmbedded(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		e, err := StartEmbedded(context.Background(), EmbeddedConfig{Dir: b.TempDir(), UnsafeNoFsync: true})
		if err != nil {
			b.Fatal(err)
		}
		if err := e.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
