package main

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miniapi/miniapi/storage"
	"github.com/miniapi/miniapi/storage/etcd3"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// WritePathResult is the update rate miniapi reaches with watchers
// attached and writers unpaced, against the same writes as raw etcd puts.
type WritePathResult struct {
	Watchers int     `json:"watchers"`
	Writers  int     `json:"writers"`
	Seconds  float64 `json:"seconds"`
	// UpdatesPerSec is what miniapi acknowledged over HTTP; the delivery
	// fields are what its watchers received of those updates.
	UpdatesPerSec float64 `json:"updatesPerSec"`
	delivery
	// StoreUpdatesPerSec is etcd3.Store.GuaranteedUpdate in-process on a
	// twin member (storage level, no HTTP, no registry): where the time
	// goes between the two.
	StoreUpdatesPerSec float64 `json:"storeUpdatesPerSec"`
	// EtcdPutsPerSec is the baseline: clientv3 Put of the same bytes on
	// a twin member, same concurrency.
	EtcdPutsPerSec float64 `json:"etcdPutsPerSec"`
}

// runWritePath measures the update rate with cfg.WritePathWatchers
// watchers attached, each writer updating its own object as fast as it
// can.
func runWritePath(ctx context.Context, cfg config) (*WritePathResult, error) {
	m, err := startMiniapi(ctx, serverConfig())
	if err != nil {
		return nil, err
	}
	defer m.close()
	w := cfg.WritePathWriters
	if err := m.createConfigMaps(ctx, benchNS, "fan", w, cfg.ObjectSize, 16); err != nil {
		return nil, err
	}
	sample, err := do(ctx, m.http, http.MethodGet, m.collectionURL(benchNS)+"/"+objName("fan", 0), nil, http.StatusOK)
	if err != nil {
		return nil, err
	}
	t := &miniapiTarget{m: m, objects: w, size: cfg.ObjectSize}
	ws, closeAll, err := attachWatchers(ctx, cfg, t, cfg.WritePathWatchers)
	if err != nil {
		return nil, err
	}
	defer closeAll()

	res := &WritePathResult{Watchers: cfg.WritePathWatchers, Writers: w}
	wc := newHTTPClient(2 * w)
	defer wc.CloseIdleConnections()
	terminated := t.terminated()
	stopProfile := cfg.profile("writepath-miniapi")
	meter := startCPU()
	start := now()
	acks, errs, firstErr := unpaced(ctx, w, cfg.WritePathDuration, func(ctx context.Context, worker, _ int) (int64, error) {
		return t.write(ctx, wc, worker)
	})
	end := now()
	stopProfile()
	res.Seconds = float64(end-start) / 1e9
	res.UpdatesPerSec = float64(len(acks)) / res.Seconds
	res.delivery = collect(ctx, cfg, ws.ws, acks, start, end, cfg.WritePathDuration)
	res.CPU = meter.stop()
	res.Planned, res.WriteErrors, res.FirstError = len(acks)+errs, errs, firstErr
	res.Terminated = t.terminated() - terminated
	res.Rewatches, res.Duplicates, res.ErrorFrames = counters(ws.ws)
	logf(cfg, "writepath: miniapi %.0f updates/s with %d watchers (p99 %.1fms, missing %d; cores: self %.2f, machine %.2f)",
		res.UpdatesPerSec, res.Watchers, res.P99ms, res.Missing, res.CPU.Self, res.CPU.Machine)

	e, closeEtcd, err := startEtcd(ctx)
	if err != nil {
		return res, err
	}
	defer closeEtcd()
	if res.StoreUpdatesPerSec, err = storeUpdates(ctx, e.Client, w, cfg); err != nil {
		return res, err
	}
	if res.EtcdPutsPerSec, err = rawPuts(ctx, e.Client, w, cfg.WritePathDuration, sample, func(worker, _ int) string {
		return fmt.Sprintf("/registry/core/configmaps/%s/%s", benchNS, objName("fan", worker))
	}); err != nil {
		return res, err
	}
	logf(cfg, "writepath: etcd3.Store %.0f updates/s, raw etcd %.0f puts/s", res.StoreUpdatesPerSec, res.EtcdPutsPerSec)
	return res, nil
}

// storeUpdates runs GuaranteedUpdate through an etcd3.Store (no cache, no
// HTTP), each worker on its own key, and returns updates per second.
func storeUpdates(ctx context.Context, client *clientv3.Client, workers int, cfg config) (float64, error) {
	st := etcd3.New(etcd3.Config{Client: client})
	key := func(w int) string { return fmt.Sprintf("/bench/store/%s/%s", benchNS, objName("fan", w)) }
	if err := parallel(ctx, workers, workers, func(ctx context.Context, w int) error {
		_, err := st.Create(ctx, key(w), configMapJSON(benchNS, objName("fan", w), 0, cfg.ObjectSize))
		return err
	}); err != nil {
		return 0, err
	}
	var seq atomic.Int64
	start := time.Now()
	acks, errs, firstErr := unpaced(ctx, workers, cfg.WritePathDuration, func(ctx context.Context, w, _ int) (int64, error) {
		next := configMapJSON(benchNS, objName("fan", w), seq.Add(1), cfg.ObjectSize)
		obj, err := st.GuaranteedUpdate(ctx, key(w), storage.UpdateOptions{}, func(*storage.Object) ([]byte, error) { return next, nil })
		if err != nil {
			return 0, err
		}
		return obj.Revision, nil
	})
	if errs > 0 {
		return 0, fmt.Errorf("etcd3.Store updates: %d failed: %s", errs, firstErr)
	}
	return float64(len(acks)) / time.Since(start).Seconds(), nil
}

// rawPuts runs clientv3 Puts of value from workers goroutines for dur and
// returns puts per second. key names the key of a worker's i-th put.
func rawPuts(ctx context.Context, client *clientv3.Client, workers int, dur time.Duration, value []byte, key func(worker, i int) string) (float64, error) {
	v := string(value)
	start := time.Now()
	acks, errs, firstErr := unpaced(ctx, workers, dur, func(ctx context.Context, w, i int) (int64, error) {
		resp, err := client.Put(ctx, key(w, i), v)
		if err != nil {
			return 0, err
		}
		return resp.Header.Revision, nil
	})
	if errs > 0 {
		return 0, fmt.Errorf("raw etcd puts: %d failed: %s", errs, firstErr)
	}
	return float64(len(acks)) / time.Since(start).Seconds(), nil
}

// maxOps bounds the operations of one unpaced run, whatever the duration.
const maxOps = 1_000_000

// unpaced runs op from workers goroutines as fast as they go for dur
// (bounded also by maxOps) and returns the acknowledgements. op gets the
// worker's index and the worker's operation count.
func unpaced(ctx context.Context, workers int, dur time.Duration, op func(ctx context.Context, worker, i int) (int64, error)) (acks []ack, failed int, firstErr string) {
	deadline := time.Now().Add(dur)
	var mu sync.Mutex
	var total atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			var mine []ack
			for i := 0; time.Now().Before(deadline) && ctx.Err() == nil && total.Add(1) <= maxOps; i++ {
				sent := now()
				rv, err := op(ctx, w, i)
				if err != nil {
					mu.Lock()
					failed++
					if firstErr == "" {
						firstErr = err.Error()
					}
					mu.Unlock()
					continue
				}
				mine = append(mine, ack{rv: rv, sent: sent, at: now()})
			}
			mu.Lock()
			acks = append(acks, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	return acks, failed, firstErr
}
