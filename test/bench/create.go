package main

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/miniapi/miniapi/storage"
	"github.com/miniapi/miniapi/storage/etcd3"
)

// CreateResult is create throughput by concurrency.
type CreateResult struct {
	ObjectBytes int            `json:"objectBytes"`
	Seconds     float64        `json:"secondsPerMeasurement"`
	Rows        []CreateTiming `json:"rows"`
}

// CreateTiming is one concurrency: miniapi's creates over HTTP, the same
// creates through an etcd3.Store in-process (storage level: the
// transaction miniapi makes, without HTTP and the registry), and the
// baseline, clientv3 Puts of the same bytes. The Store and the puts run
// on a twin embedded member configured as miniapi's (in-process client,
// fsync off), since miniapi does not expose its own client.
type CreateTiming struct {
	Clients            int     `json:"clients"`
	CreatesPerSec      float64 `json:"createsPerSec"`
	StoreCreatesPerSec float64 `json:"storeCreatesPerSec"`
	EtcdPutsPerSec     float64 `json:"etcdPutsPerSec"`
	// HTTPFloorPerSec is the same client POSTing the same bodies to a
	// bare net/http server that answers 201 with the stored object's
	// bytes and does nothing else: what HTTP alone costs here.
	HTTPFloorPerSec float64 `json:"httpFloorPerSec"`
	Ratio           float64 `json:"ratio"`
	// CPU is the cores used during miniapi's measurement.
	CPU CPUUse `json:"cpu"`
}

// runCreate measures creates at every concurrency, alternating miniapi,
// the Store and raw puts so noise falls on all three.
func runCreate(ctx context.Context, cfg config) (*CreateResult, error) {
	m, err := startMiniapi(ctx, serverConfig())
	if err != nil {
		return nil, err
	}
	defer m.close()
	e, closeEtcd, err := startEtcd(ctx)
	if err != nil {
		return nil, err
	}
	defer closeEtcd()
	st := etcd3.New(etcd3.Config{Client: e.Client})

	// The bytes miniapi stores for one object: what raw puts write.
	if err := m.createConfigMaps(ctx, benchNS, "sample", 1, cfg.ObjectSize, 1); err != nil {
		return nil, err
	}
	sample, err := do(ctx, m.http, http.MethodGet, m.collectionURL(benchNS)+"/"+objName("sample", 0), nil, http.StatusOK)
	if err != nil {
		return nil, err
	}
	value, err := storage.SetResourceVersion(sample, 0)
	if err != nil {
		return nil, err
	}
	floor, err := serveStatus(http.StatusCreated, sample)
	if err != nil {
		return nil, err
	}
	defer floor.Close()
	floorURL := "http://" + floor.Addr().String() + "/"
	res := &CreateResult{ObjectBytes: len(value), Seconds: cfg.CreateDuration.Seconds()}
	maxClients := 0
	for _, c := range cfg.Concurrency {
		maxClients = max(maxClients, c)
	}
	client := newHTTPClient(2 * maxClients)
	defer client.CloseIdleConnections()

	for _, clients := range cfg.Concurrency {
		prefix := fmt.Sprintf("c%d", clients)
		name := func(w, i int) string { return fmt.Sprintf("%s-%d-%06d", prefix, w, i) }
		stopProfile := cfg.profile(fmt.Sprintf("create-miniapi-%d", clients))
		meter := startCPU()
		start := time.Now()
		acks, errs, firstErr := unpaced(ctx, clients, cfg.CreateDuration, func(ctx context.Context, w, i int) (int64, error) {
			body, err := do(ctx, client, http.MethodPost, m.collectionURL(benchNS),
				configMapJSON(benchNS, name(w, i), 0, cfg.ObjectSize), http.StatusCreated)
			if err != nil {
				return 0, err
			}
			return parseRV(body)
		})
		stopProfile()
		if errs > 0 {
			return res, fmt.Errorf("%d creates failed: %s", errs, firstErr)
		}
		row := CreateTiming{Clients: clients, CreatesPerSec: float64(len(acks)) / time.Since(start).Seconds(), CPU: meter.stop()}

		start = time.Now()
		acks, errs, firstErr = unpaced(ctx, clients, cfg.CreateDuration, func(ctx context.Context, w, i int) (int64, error) {
			n := name(w, i)
			obj, err := st.Create(ctx, configMapPrefix.Key(benchNS, n), storedConfigMap(benchNS, n, cfg.ObjectSize))
			if err != nil {
				return 0, err
			}
			return obj.Revision, nil
		})
		if errs > 0 {
			return res, fmt.Errorf("%d etcd3.Store creates failed: %s", errs, firstErr)
		}
		row.StoreCreatesPerSec = float64(len(acks)) / time.Since(start).Seconds()

		if row.EtcdPutsPerSec, err = rawPuts(ctx, e.Client, clients, cfg.CreateDuration, value, func(w, i int) string {
			return "/raw" + configMapPrefix.Key(benchNS, name(w, i))
		}); err != nil {
			return res, err
		}
		start = time.Now()
		acks, errs, firstErr = unpaced(ctx, clients, cfg.CreateDuration, func(ctx context.Context, w, i int) (int64, error) {
			body, err := do(ctx, client, http.MethodPost, floorURL, configMapJSON(benchNS, name(w, i), 0, cfg.ObjectSize), http.StatusCreated)
			if err != nil {
				return 0, err
			}
			return parseRV(body)
		})
		if errs > 0 {
			return res, fmt.Errorf("%d POSTs to the bare server failed: %s", errs, firstErr)
		}
		row.HTTPFloorPerSec = float64(len(acks)) / time.Since(start).Seconds()
		row.Ratio = row.CreatesPerSec / row.EtcdPutsPerSec
		res.Rows = append(res.Rows, row)
		logf(cfg, "create clients=%d: miniapi %.0f/s (cores: self %.2f, machine %.2f), etcd3.Store %.0f/s, raw etcd puts %.0f/s (%.0f%%), bare HTTP %.0f/s",
			clients, row.CreatesPerSec, row.CPU.Self, row.CPU.Machine, row.StoreCreatesPerSec, row.EtcdPutsPerSec, 100*row.Ratio, row.HTTPFloorPerSec)
	}
	return res, nil
}
