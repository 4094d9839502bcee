package apiextensions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	"github.com/miniapi/miniapi/storage"
)

// Delays of the controller's retries, and how long it waits for a new
// type's cache to fill before it reports the type Established.
const (
	retryBase     = 50 * time.Millisecond
	retryMax      = 5 * time.Second
	cacheFillWait = 10 * time.Second
)

// Controller keeps the registry in step with the stored CRDs: it gives
// each CRD its accepted names and conditions, serves one registry type
// per served version, replaces them when the CRD changes, and on deletion
// deletes the CRD's objects, stops serving it and removes the cleanup
// finalizer. It works level-triggered: any change to any CRD makes it
// reconcile them all, which keeps name conflicts (decided oldest CRD
// first) simple and is cheap at the number of CRDs a cluster has.
type Controller struct {
	reg *registry.Registry
	log *slog.Logger
	// kick wakes the worker (1-buffered, coalescing).
	kick chan struct{}

	// mu serialises Sync; it protects served.
	mu sync.Mutex
	// served maps a CRD's name to the resources it serves now.
	served map[string][]registry.GVR
}

// NewController returns a controller over reg, which must serve the CRD
// type (CRDType).
func NewController(reg *registry.Registry, log *slog.Logger) *Controller {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Controller{
		reg: reg, log: log.With("controller", "customresourcedefinitions"),
		kick: make(chan struct{}, 1), served: map[string][]registry.GVR{},
	}
}

// Run reconciles on every change to a CRD until ctx ends, and returns
// once its goroutines have exited.
func (c *Controller) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { c.watch(ctx) })
	wg.Go(func() { c.work(ctx) })
	wg.Wait()
}

// wake asks the worker for a pass without blocking.
func (c *Controller) wake() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// watch turns every CRD event into a wake-up, watching again whenever a
// watch ends.
func (c *Controller) watch(ctx context.Context) {
	delay := retryBase
	for ctx.Err() == nil {
		store, err := c.crdStore()
		if err == nil {
			err = c.watchOnce(ctx, store)
		}
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			c.log.Debug("apiextensions: CRD watch failed; watching again", "err", err)
			delay = min(2*delay, retryMax)
		} else {
			delay = retryBase
		}
		c.wake()
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
	}
}

func (c *Controller) watchOnce(ctx context.Context, store *registry.Store) error {
	w, err := store.Watch(ctx, "", registry.WatchOptions{})
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil
			}
			if ev.Type == storage.ErrorEvent {
				return ev.Err
			}
			if ev.Type != storage.Bookmark {
				c.wake()
			}
		}
	}
}

// work runs a pass per wake-up, and again after a delay while a pass
// fails or has work left (a CRD whose objects are still going).
func (c *Controller) work(ctx context.Context) {
	delay := retryBase
	var retry <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.kick:
		case <-retry:
		}
		again, err := c.Sync(ctx)
		if ctx.Err() != nil {
			return
		}
		switch {
		case err != nil:
			level := slog.LevelWarn
			if api.IsConflict(err) {
				level = slog.LevelDebug
			}
			c.log.Log(ctx, level, "apiextensions: sync failed; will retry", "err", err)
			fallthrough
		case again:
			retry = time.After(delay)
			delay = min(2*delay, retryMax)
		default:
			retry, delay = nil, retryBase
		}
	}
}

func (c *Controller) crdStore() (*registry.Store, error) {
	res, ok := c.reg.Snapshot().Lookup(Group, APIVersion, Plural)
	if !ok {
		return nil, errors.New("apiextensions: the CustomResourceDefinition type is not served")
	}
	return res.Store, nil
}

// stored is one CRD as listed: the object (for status writes) and its
// decoded form.
type stored struct {
	obj *api.Object
	crd *CRD
}

// Sync reconciles every CRD once: the server calls it at start, before it
// reports ready, so stored CRDs are served from the first request. It
// reports whether work is left that a later pass must finish.
func (c *Controller) Sync(ctx context.Context) (again bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	store, err := c.crdStore()
	if err != nil {
		return false, err
	}
	list, err := store.List(ctx, "", registry.ListOptions{})
	if err != nil {
		return false, err
	}
	crds := make([]stored, 0, len(list.Items))
	for _, it := range list.Items {
		var obj api.Object
		if err := json.Unmarshal(it.Data, &obj); err != nil {
			c.log.Warn("apiextensions: undecodable CRD", "key", it.Key, "err", err)
			continue
		}
		crd, err := Decode(&obj)
		if err != nil {
			c.log.Warn("apiextensions: undecodable CRD", "key", it.Key, "err", err)
			continue
		}
		crds = append(crds, stored{&obj, crd})
	}
	// Older CRDs win name conflicts, as the first to be accepted would.
	slices.SortFunc(crds, func(a, b stored) int {
		if c := a.crd.Metadata.CreationTimestamp.Compare(b.crd.Metadata.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.crd.Metadata.Name, b.crd.Metadata.Name)
	})
	present := map[string]bool{}
	for _, s := range crds {
		present[s.crd.Metadata.Name] = true
	}
	var errs []error
	for name := range c.served {
		if !present[name] {
			errs = append(errs, c.unserve(name))
		}
	}
	used := c.usedNames(crds)
	// Types are registered first and their caches awaited together (they
	// fill in parallel, which keeps a start with many CRDs quick); only
	// then are statuses written, so a CRD is Established only once it is
	// served.
	var served []registry.Type
	var writes []func() error
	for _, s := range crds {
		var more bool
		var err error
		if s.crd.Metadata.DeletionTimestamp != nil {
			more, err = c.finalize(ctx, store, s)
		} else {
			var types []registry.Type
			var write func() error
			types, write, err = c.reconcile(ctx, store, s, used)
			served = append(served, types...)
			writes = append(writes, func() error {
				if err := write(); err != nil {
					return fmt.Errorf("apiextensions: %s: %w", s.crd.Metadata.Name, err)
				}
				return nil
			})
		}
		again = again || more
		if err != nil {
			errs = append(errs, fmt.Errorf("apiextensions: %s: %w", s.crd.Metadata.Name, err))
		}
	}
	if err := c.waitReady(ctx, served); err != nil {
		return again, errors.Join(append(errs, err)...)
	}
	for _, w := range writes {
		errs = append(errs, w())
	}
	return again, errors.Join(errs...)
}

// reconcile brings one live CRD's names and types up to date. It
// returns the types it serves, whose caches the caller awaits, and the
// write of the CRD's new status, which the caller makes once they are
// ready.
func (c *Controller) reconcile(ctx context.Context, store *registry.Store, s stored, used map[string]*names) (served []registry.Type, writeStatus func() error, err error) {
	crd := s.crd
	name := crd.Metadata.Name
	st := crd.Status
	st.Conditions = slices.Clone(st.Conditions)
	group := used[crd.Spec.Group]
	if group == nil {
		group = &names{resources: map[string]bool{}, kinds: map[string]bool{}}
		used[crd.Spec.Group] = group
	}
	accepted, namesCond := acceptNames(crd, group)
	st.AcceptedNames = accepted
	group.add(accepted)
	setCondition(&st, namesCond)

	if accepted.Plural != "" && accepted.Kind != "" && accepted.ListKind != "" && (namesCond.Status == ConditionTrue || st.IsTrue(Established)) {
		served = Types(crd, accepted)
		err = c.register(name, served)
		if err == nil && !st.IsTrue(Established) {
			setCondition(&st, Condition{Type: Established, Status: ConditionTrue, Reason: "InitialNamesAccepted", Message: "the initial names have been accepted"})
		}
	} else if !st.IsTrue(Established) {
		setCondition(&st, Condition{Type: Established, Status: ConditionFalse, Reason: "NotAccepted", Message: "not all names are accepted"})
	}
	return served, func() error { return c.writeStatus(ctx, store, s, &st) }, err
}

// setCondition sets cond with a lastTransitionTime of now when its status
// changes.
func setCondition(st *Status, cond Condition) {
	cond.LastTransitionTime = time.Now().UTC().Format(time.RFC3339)
	st.SetCondition(cond)
}

// writeStatus stores st as the CRD's status when it differs. A conflict
// means the CRD changed meanwhile; its event brings another pass.
func (c *Controller) writeStatus(ctx context.Context, store *registry.Store, s stored, st *Status) error {
	if reflect.DeepEqual(st, &s.crd.Status) {
		return nil
	}
	obj := s.obj.DeepCopy()
	if err := setStatus(obj, st); err != nil {
		return err
	}
	_, err := store.UpdateObject(ctx, "", obj.Metadata.Name, obj, registry.UpdateOptions{Subresource: registry.SubresourceStatus})
	if api.IsNotFound(err) {
		return nil
	}
	return err
}

// serve makes the registry serve exactly types for CRD name, waiting for
// the caches of new storage to fill.
func (c *Controller) serve(ctx context.Context, name string, types []registry.Type) error {
	if err := c.register(name, types); err != nil {
		return err
	}
	return c.waitReady(ctx, types)
}

// register makes the registry serve exactly types for CRD name.
func (c *Controller) register(name string, types []registry.Type) error {
	snap := c.reg.Snapshot()
	want := map[registry.GVR]bool{}
	var errs []error
	for _, t := range types {
		want[t.GVR()] = true
		if res, ok := snap.Lookup(t.Group, t.Version, t.Plural); ok && sameType(&res.Type, &t) {
			continue
		}
		t, err := withSchemaStrategy(t)
		if err != nil {
			c.log.Warn("apiextensions: schema does not compile; serving without validation", "resource", t.GVR().String(), "err", err)
		}
		if err := c.reg.Replace(t); err != nil {
			errs = append(errs, err)
			continue
		}
		c.log.Info("apiextensions: serving", "resource", t.GVR().String(), "crd", name)
	}
	for _, g := range c.served[name] {
		if !want[g] {
			errs = append(errs, c.reg.Remove(g))
			c.log.Info("apiextensions: no longer serving", "resource", g.String(), "crd", name)
		}
	}
	c.served[name] = slices.Collect(maps.Keys(want))
	return errors.Join(errs...)
}

// sameType reports whether a registered type already is t, a type
// Types built. Types are data, so this is a deep comparison of every
// field but the strategy, which is derived from the schema (compared) and
// the status subresource.
func sameType(registered, t *registry.Type) bool {
	a, b := *registered, *t
	a.Strategy, b.Strategy = nil, nil
	return registry.HasStatus(registered) == registry.HasStatus(t) && reflect.DeepEqual(a, b)
}

// readier is a storage that can say its cache has filled (the cacher).
type readier interface {
	Ready(ctx context.Context) error
}

// waitReady waits until the storage of every type has its first list,
// so the type is served from memory once it is reported Established;
// versions converted by a webhook are not waited for.
func (c *Controller) waitReady(ctx context.Context, types []registry.Type) error {
	ctx, cancel := context.WithTimeout(ctx, cacheFillWait)
	defer cancel()
	snap := c.reg.Snapshot()
	for _, t := range types {
		// A version converted by a webhook fills its cache only once the
		// webhook answers, which may be a server started after the CRD,
		// or after a restart of miniapi: waiting would hold up every
		// CRD's status. Its requests wait for the cache, or read etcd.
		if len(t.Conversion) > 0 && t.Version != t.StorageVersion {
			continue
		}
		res, ok := snap.Lookup(t.Group, t.Version, t.Plural)
		if !ok {
			continue
		}
		if r, ok := res.Store.Storage().(readier); ok {
			if err := r.Ready(ctx); err != nil {
				return fmt.Errorf("cache of %s did not fill: %w", t.GVR(), err)
			}
		}
	}
	return nil
}

// unserve stops serving every type of CRD name.
func (c *Controller) unserve(name string) error {
	var errs []error
	for _, g := range c.served[name] {
		if _, ok := c.reg.Snapshot().Lookup(g.Group, g.Version, g.Resource); ok {
			errs = append(errs, c.reg.Remove(g))
			c.log.Info("apiextensions: no longer serving", "resource", g.String(), "crd", name)
		}
	}
	delete(c.served, name)
	return errors.Join(errs...)
}
