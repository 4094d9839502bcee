package cacher

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapi/miniapi/storage"
	"github.com/miniapi/miniapi/storage/etcd3"
	"github.com/miniapi/miniapi/storage/etcd3/etcd3test"
)

// BenchmarkDispatch measures fan-out: one event to N watchers, through
// the dispatcher, each watcher's goroutine and filter, to a consumer
// draining its channel. ns/op is per event; deliveries/s counts events
// received by consumers.
func BenchmarkDispatch(b *testing.B) {
	for _, n := range []int{100, 1000, 5000} {
		b.Run(fmt.Sprintf("watchers=%d", n), func(b *testing.B) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			d := newDispatcher(realClock{}, quietLogger(), time.Minute)
			var consumers, goroutines sync.WaitGroup
			obj := testObj(k("a"), 1, map[string]string{"app": "web"})
			attrs := mustAttrs(b, obj)
			for range n {
				wctx, wcancel := context.WithCancel(ctx)
				w := &cacheWatcher{
					filter: newFilter(testPrefix, storage.Predicate{}),
					input:  make(chan *event, DefaultWatcherBuffer),
					result: make(chan storage.Event, DefaultWatcherBuffer),
					ctx:    wctx, cancel: wcancel, clock: realClock{},
				}
				d.add(w)
				goroutines.Go(func() { w.run(d.remove) })
				consumers.Go(func() {
					for got := 0; got < b.N; got++ {
						if _, ok := <-w.result; !ok {
							return
						}
					}
				})
			}
			events := make([]*event, b.N)
			for i := range events {
				events[i] = &event{typ: storage.Modified, rev: int64(i + 2), key: obj.Key, obj: obj, attrs: attrs, prev: obj, prevAttrs: attrs}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for _, e := range events {
				d.dispatch(ctx, e)
			}
			consumers.Wait()
			b.StopTimer()
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "deliveries/s")
			if t := d.terminated.Load(); t != 0 {
				b.Fatalf("%d watchers terminated", t)
			}
			cancel()
			goroutines.Wait()
		})
	}
}

// BenchmarkRing measures the history ring: appending (with eviction once
// full) and iterating from a revision in the middle.
func BenchmarkRing(b *testing.B) {
	for _, size := range []int{1024, 100 * 1024} {
		b.Run(fmt.Sprintf("op=append/size=%d", size), func(b *testing.B) {
			r := newRing[*event](size)
			e := &event{}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				r.Append(int64(i), e)
			}
		})
		b.Run(fmt.Sprintf("op=ascend-half/size=%d", size), func(b *testing.B) {
			r := newRing[*event](size)
			e := &event{}
			for i := range 2 * size { // wrapped
				r.Append(int64(i), e)
			}
			from := int64(size + size/2)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				n := 0
				for range r.AscendFrom(from) {
					n++
				}
				if n != size/2 {
					b.Fatal(n)
				}
			}
		})
	}
}

// BenchmarkList lists 10,000 objects of about 1 KiB from the etcd3 Store
// and from a Cacher over it, in the same run; the cache sub-benchmark
// reports its speed-up over the etcd one as x-vs-etcd.
func BenchmarkList(b *testing.B) {
	const objects = 10000
	client := etcd3test.Start(b)
	fillEtcd(b, client, objects)
	store := etcd3.New(etcd3.Config{Client: client})
	h := newHarnessOver(b, client, store, store, Config{})
	if n := h.c.Stats().Objects; n != objects {
		b.Fatalf("cache holds %d objects", n)
	}
	var etcdPerOp float64
	for _, src := range []struct {
		name string
		s    storage.Interface
		opts storage.ListOptions
	}{
		{"from=etcd", store, storage.ListOptions{}},
		{"from=cache/rv=0", h.c, storage.ListOptions{ResourceVersion: "0"}},
		{"from=cache/consistent", h.c, storage.ListOptions{}},
	} {
		b.Run(src.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				l, err := src.s.List(h.ctx, testPrefix, src.opts)
				if err != nil || len(l.Items) != objects {
					b.Fatalf("%v, %d items", err, len(l.Items))
				}
			}
			perOp := float64(b.Elapsed()) / float64(b.N)
			if src.s == storage.Interface(store) {
				etcdPerOp = perOp
			} else if etcdPerOp > 0 {
				b.ReportMetric(etcdPerOp/perOp, "x-vs-etcd")
			}
		})
	}
}

// BenchmarkConsistentReads measures the two consistent reads a server
// makes for kubectl get: an object by name, which reads etcd, and a
// namespace's list, which the cache serves once it has reached etcd's
// current revision. Each through a client whose Gets are linearizable
// (a cluster of several members) and one whose Gets are serializable
// (etcd3.SingleMemberReads, the embedded member), in the same run.
func BenchmarkConsistentReads(b *testing.B) {
	const objects = 1000
	raw := etcd3test.Start(b)
	fillEtcd(b, raw, objects)
	single := clientv3.NewCtxClient(context.Background())
	single.KV, single.Watcher = etcd3.SingleMemberReads(raw.KV), raw.Watcher
	for _, tc := range []struct {
		name   string
		client *clientv3.Client
	}{{"reads=linearizable", raw}, {"reads=single-member", single}} {
		store := etcd3.New(etcd3.Config{Client: tc.client})
		h := newHarnessOver(b, tc.client, store, store, Config{})
		b.Run(tc.name+"/get", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := h.c.Get(h.ctx, testPrefix+"ns3/cm-00003", storage.GetOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(tc.name+"/list-namespace", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				l, err := h.c.List(h.ctx, testPrefix+"ns3/", storage.ListOptions{})
				if err != nil || len(l.Items) != objects/10 {
					b.Fatalf("%v, %d items", err, len(l.Items))
				}
			}
		})
	}
}

// fillEtcd writes n ConfigMaps of about 1 KiB under testPrefix, many per
// transaction, in the encoding the etcd3 Store stores.
func fillEtcd(b *testing.B, client *clientv3.Client, n int) {
	b.Helper()
	pad := strings.Repeat("x", 900)
	var ops []clientv3.Op
	flush := func() {
		if _, err := client.Txn(context.Background()).Then(ops...).Commit(); err != nil {
			b.Fatal(err)
		}
		ops = ops[:0]
	}
	for i := range n {
		ns, name := fmt.Sprintf("ns%d", i%10), fmt.Sprintf("cm-%05d", i)
		data := cmData(ns, name, map[string]string{"app": fmt.Sprint(i % 7)}, pad)
		ops = append(ops, clientv3.OpPut(testPrefix+ns+"/"+name, string(data)))
		if len(ops) == 100 {
			flush()
		}
	}
	if len(ops) > 0 {
		flush()
	}
}

// BenchmarkMetricsCost measures what kube's metrics add to a write and
// its delivery: a create through the cacher to etcd, the reflector's
// apply and a watcher receiving the event, with the etcd3 Store and the
// cacher recording metrics (Resource set) or not, in the same run.
func BenchmarkMetricsCost(b *testing.B) {
	client := etcd3test.Start(b)
	runs := 0
	for _, mode := range []string{"off", "on"} {
		b.Run("metrics="+mode, func(b *testing.B) {
			var gr schema.GroupResource
			if mode == "on" {
				gr = schema.GroupResource{Resource: "configmaps"}
			}
			runs++ // each run (b.N guess, -count) gets fresh keys
			prefix := fmt.Sprintf("/registry/bench-%s-%d/", mode, runs)
			c, err := New(etcd3.New(etcd3.Config{Client: client, Resource: gr}),
				Config{Resource: gr, Prefix: prefix, Logger: quietLogger()})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			ctx := context.Background()
			if err := c.Ready(ctx); err != nil {
				b.Fatal(err)
			}
			w, err := c.Watch(ctx, prefix, storage.WatchOptions{ResourceVersion: "0"})
			if err != nil {
				b.Fatal(err)
			}
			defer w.Stop()
			data := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"ns"},"data":{"k":"` + strings.Repeat("v", 512) + `"}}`)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := c.Create(ctx, fmt.Sprintf("%sns/x%d", prefix, i), data); err != nil {
					b.Fatal(err)
				}
				if ev := <-w.ResultChan(); ev.Type != storage.Added {
					b.Fatalf("event %v", ev.Type)
				}
			}
		})
	}
}
