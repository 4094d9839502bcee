package controllers

import (
	"context"
	"sync"

	"github.com/miniapi/miniapi/registry"
)

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
	for {
		snap := reg.Snapshot()
		served := map[*registry.Resource]bool{}
		for _, res := range snap.Resources() {
			served[res] = true
			if _, ok := running[res]; ok || registry.IsVirtual(&res.Type) || !accept(res) {
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
		// Wake as soon as the registry changes, so a type added while
		// serving is followed at once; what changes before its informer's
		// first list is caught by that list (and the collector's recheck).
		select {
		case <-ctx.Done():
			return
		case <-snap.Replaced():
		}
	}
}
