package controllers

import (
	"context"
	"sync"
	"time"

	"github.com/miniapi/miniapi/registry"
)

// typePollInterval is how often the controllers look for types added to
// or removed from the registry. Reading the snapshot is one atomic load.
const typePollInterval = time.Second

// followTypes calls start, each in its own goroutine, for every served
// type that accept admits, as types are added; it cancels start's context
// when the type is removed, and then calls stopped for it (unless ctx has
// ended). It returns once ctx has ended and every start has returned.
func followTypes(ctx context.Context, reg *registry.Registry, accept func(*registry.Resource) bool,
	start func(context.Context, *registry.Resource), stopped func(*registry.Resource)) {
	var wg sync.WaitGroup
	running := map[*registry.Resource]context.CancelFunc{}
	defer func() {
		for _, cancel := range running {
			cancel()
		}
		wg.Wait()
	}()
	tick := time.NewTicker(typePollInterval)
	defer tick.Stop()
	var last *registry.Snapshot
	for {
		if snap := reg.Snapshot(); snap != last {
			last = snap
			served := map[*registry.Resource]bool{}
			for _, res := range snap.Resources() {
				served[res] = true
				if _, ok := running[res]; ok || !accept(res) {
					continue
				}
				tctx, cancel := context.WithCancel(ctx)
				running[res] = cancel
				wg.Go(func() {
					start(tctx, res)
					if ctx.Err() == nil && stopped != nil {
						stopped(res)
					}
				})
			}
			for res, cancel := range running {
				if !served[res] {
					cancel()
					delete(running, res)
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
