package main

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"time"

	"github.com/miniapi/miniapi/storage"
	"github.com/miniapi/miniapi/storage/cacher"
	"github.com/miniapi/miniapi/storage/etcd3"
)

// MemoryResult is the memory the watch cache costs per object and a
// watch costs per idle watcher. Heap figures are live heap after a full
// collection (runtime.MemStats.HeapAlloc); stacks are counted apart
// (StackInuse). The embedded etcd shares the process, so each figure is a
// difference of two samples between which only the measured thing
// changed.
type MemoryResult struct {
	Objects     int `json:"objects"`
	ObjectBytes int `json:"objectBytes"`
	// CacheBytesPerObject is the heap a Cacher grew by when it filled
	// with Objects objects, per object; ReleasedPerObject is what Close
	// gave back, per object (a cross-check). ListBytesPerObject is the
	// baseline: the heap a plain etcd3.Store.List result of the same
	// objects holds, per object.
	CacheBytesPerObject    float64 `json:"cacheBytesPerObject"`
	ReleasedBytesPerObject float64 `json:"releasedBytesPerObject"`
	ListBytesPerObject     float64 `json:"listBytesPerObject"`

	// Idle watchers: in-process on the Cacher against the same number
	// of etcd3.Store watches; over HTTP against the raw-stream baseline.
	// Over HTTP both figures include the client side (transport
	// goroutines and buffers, the reader), which is identical.
	InProcess         WatcherMemory `json:"inProcess"`
	InProcessBaseline WatcherMemory `json:"inProcessBaseline"`
	HTTP              WatcherMemory `json:"http"`
	HTTPBaseline      WatcherMemory `json:"httpBaseline"`
}

// WatcherMemory is the cost of one idle watcher.
type WatcherMemory struct {
	What                 string  `json:"what"`
	Watchers             int     `json:"watchers"`
	HeapPerWatcher       float64 `json:"heapBytesPerWatcher"`
	StackPerWatcher      float64 `json:"stackBytesPerWatcher"`
	GoroutinesPerWatcher float64 `json:"goroutinesPerWatcher"`
}

// perWatcher is the difference between two samples, per watcher.
func perWatcher(what string, n int, before, after memSample) WatcherMemory {
	return WatcherMemory{
		What:                 what,
		Watchers:             n,
		HeapPerWatcher:       (float64(after.Heap) - float64(before.Heap)) / float64(n),
		StackPerWatcher:      (float64(after.Stack) - float64(before.Stack)) / float64(n),
		GoroutinesPerWatcher: float64(after.Goroutines-before.Goroutines) / float64(n),
	}
}

// runMemory measures the cache per object and watchers per watcher.
func runMemory(ctx context.Context, cfg config) (*MemoryResult, error) {
	res := &MemoryResult{Objects: cfg.MemObjects}
	if err := memoryInProcess(ctx, cfg, res); err != nil {
		return res, err
	}
	if err := memoryHTTP(ctx, cfg, res); err != nil {
		return res, err
	}
	return res, nil
}

// memoryInProcess fills a Cacher from an etcd member that already holds
// the objects (so etcd's own memory does not change meanwhile), then opens
// idle watches on it and on the etcd3 Store.
func memoryInProcess(ctx context.Context, cfg config, res *MemoryResult) error {
	e, closeEtcd, err := startEtcd(ctx)
	if err != nil {
		return err
	}
	defer closeEtcd()
	st := etcd3.New(etcd3.Config{Client: e.Client})
	n := cfg.MemObjects
	if res.ObjectBytes, err = fillStore(ctx, st, benchNS, "mem", n, cfg.ObjectSize); err != nil {
		return err
	}
	time.Sleep(500 * time.Millisecond) // let etcd finish what the writes started
	before := sampleMemory()
	c, err := cacher.New(st, cacher.Config{Prefix: configMapPrefix.Prefix(), Attrs: configMapAttrs(), Logger: quietLogger()})
	if err != nil {
		return err
	}
	closed := false
	defer func() {
		if !closed {
			c.Close()
		}
	}()
	if err := c.Ready(ctx); err != nil {
		return err
	}
	if got := c.Stats().Objects; got != n {
		return fmt.Errorf("cacher holds %d objects, want %d", got, n)
	}
	filled := sampleMemory()
	res.CacheBytesPerObject = (float64(filled.Heap) - float64(before.Heap)) / float64(n)

	prefix := configMapPrefix.NamespacePrefix(benchNS)
	l, err := st.List(ctx, prefix, storage.ListOptions{})
	if err != nil {
		return err
	}
	listed := sampleMemory()
	res.ListBytesPerObject = (float64(listed.Heap) - float64(filled.Heap)) / float64(len(l.Items))
	runtime.KeepAlive(l)
	l = nil
	logf(cfg, "memory: cache %.0f B/object, plain list %.0f B/object (object %d B)",
		res.CacheBytesPerObject, res.ListBytesPerObject, res.ObjectBytes)

	rv := storage.FormatResourceVersion(c.Stats().Revision)
	watch := func(s storage.Interface, count func() int, what string) (WatcherMemory, error) {
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		before := sampleMemory()
		ws := make([]storage.Watcher, 0, cfg.MemWatchers)
		defer func() {
			for _, w := range ws {
				w.Stop()
			}
		}()
		for range cfg.MemWatchers {
			w, err := s.Watch(wctx, prefix, storage.WatchOptions{ResourceVersion: rv})
			if err != nil {
				return WatcherMemory{}, err
			}
			ws = append(ws, w)
		}
		if count != nil && !waitFor(ctx, 10*time.Second, func() bool { return count() >= cfg.MemWatchers }) {
			return WatcherMemory{}, fmt.Errorf("%s: %d of %d watchers registered", what, count(), cfg.MemWatchers)
		}
		time.Sleep(300 * time.Millisecond) // etcd registers its watches asynchronously
		after := sampleMemory()
		return perWatcher(what, cfg.MemWatchers, before, after), nil
	}
	if res.InProcess, err = watch(c, func() int { return c.Stats().Watchers }, "cacher.Watch"); err != nil {
		return err
	}
	waitFor(ctx, 10*time.Second, func() bool { return c.Stats().Watchers == 0 })
	if res.InProcessBaseline, err = watch(st, nil, "etcd3.Store.Watch"); err != nil {
		return err
	}
	time.Sleep(300 * time.Millisecond)

	beforeClose := sampleMemory()
	closed = true
	c.Close()
	c = nil // the watch cache is garbage only once the Cacher is
	afterClose := sampleMemory()
	res.ReleasedBytesPerObject = (float64(beforeClose.Heap) - float64(afterClose.Heap)) / float64(n)
	logf(cfg, "memory: idle watcher in-process %.0f B heap + %.0f B stack (etcd watch %.0f + %.0f); cacher close released %.0f B/object",
		res.InProcess.HeapPerWatcher, res.InProcess.StackPerWatcher,
		res.InProcessBaseline.HeapPerWatcher, res.InProcessBaseline.StackPerWatcher, res.ReleasedBytesPerObject)
	return nil
}

// memoryHTTP opens idle watches over HTTP on miniapi and on the raw-stream
// baseline.
func memoryHTTP(ctx context.Context, cfg config, res *MemoryResult) error {
	m, err := startMiniapi(ctx, serverConfig())
	if err != nil {
		return err
	}
	defer m.close()
	if err := m.createConfigMaps(ctx, benchNS, "fan", 1, cfg.ObjectSize, 1); err != nil {
		return err
	}
	sample, err := do(ctx, m.http, http.MethodGet, m.collectionURL(benchNS)+"/"+objName("fan", 0), nil, http.StatusOK)
	if err != nil {
		return err
	}
	raw, err := startRawStreams(sample)
	if err != nil {
		return err
	}
	defer raw.close()
	measure := func(t fanoutTarget, what string) (WatcherMemory, error) {
		before := sampleMemory()
		a, closeAll, err := attachWatchers(ctx, cfg, t, cfg.MemWatchers)
		if err != nil {
			return WatcherMemory{}, err
		}
		defer closeAll()
		time.Sleep(300 * time.Millisecond)
		after := sampleMemory()
		runtime.KeepAlive(a)
		return perWatcher(what, cfg.MemWatchers, before, after), nil
	}
	if res.HTTP, err = measure(&miniapiTarget{m: m, objects: 1, size: cfg.ObjectSize}, "miniapi watch over HTTP (server + client)"); err != nil {
		return err
	}
	if res.HTTPBaseline, err = measure(&rawTarget{r: raw, size: cfg.ObjectSize}, "raw stream over HTTP (server + client)"); err != nil {
		return err
	}
	logf(cfg, "memory: idle HTTP watcher %.0f B heap + %.0f B stack, %.1f goroutines (raw stream %.0f + %.0f, %.1f)",
		res.HTTP.HeapPerWatcher, res.HTTP.StackPerWatcher, res.HTTP.GoroutinesPerWatcher,
		res.HTTPBaseline.HeapPerWatcher, res.HTTPBaseline.StackPerWatcher, res.HTTPBaseline.GoroutinesPerWatcher)
	return nil
}
