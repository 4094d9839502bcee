package controllers

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Delays before an object is looked at again after a failure, and while
// the graph is still being filled.
const (
	gcRetryBase = 50 * time.Millisecond
	gcRetryMax  = 10 * time.Second
	gcSyncWait  = 50 * time.Millisecond
)

// GarbageCollector deletes objects whose owners are gone, as
// kube-controller-manager's garbage collector does. It mirrors every
// served type in memory (one informer per type, following types as they
// are added and removed) and keeps a graph from each owner's uid to the
// objects that name it in metadata.ownerReferences. Then:
//
//   - an object all of whose owners are gone (deleted, or never existed
//     with that uid) is deleted, in the background;
//   - an owner deleted with propagationPolicy Foreground carries the
//     foregroundDeletion finalizer: its dependents are deleted, and the
//     finalizer is removed once none with blockOwnerDeletion remains;
//   - an owner deleted with Orphan carries the orphan finalizer: its
//     ownerReference is removed from every dependent, then the finalizer.
//
// The graph says whom to look at, which dependents an owner has and
// which owners exist; an object is judged on its latest state, read from
// its Store, and an owner the graph has not seen is read too before its
// dependents are called garbage.
type GarbageCollector struct {
	reg   *registry.Registry
	log   *slog.Logger
	queue *queue[string] // uids
	// informers are the informers of every type followed, for Idle.
	informers informerSet

	// mu guards the graph. Lock order: mu, then queue's lock.
	mu sync.Mutex
	// nodes are the objects seen, by uid.
	nodes map[string]*node
	// dependents are, by owner uid, the uids of the objects that name it
	// as an owner; the owner itself may be absent from nodes.
	dependents map[string]map[string]bool
	// unsynced are the types whose first list is not complete: until it
	// is, the graph may miss dependents, so nothing is decided.
	unsynced map[*registry.Resource]bool
}

// node is one object in the graph.
type node struct {
	res *registry.Resource
	m   *meta
}

// NewGarbageCollector returns a garbage collector over reg's types.
func NewGarbageCollector(reg *registry.Registry, log *slog.Logger) *GarbageCollector {
	return &GarbageCollector{
		reg: reg, log: log.With("controller", GarbageCollectorName),
		queue:      newQueue[string](gcRetryBase, gcRetryMax),
		nodes:      map[string]*node{},
		dependents: map[string]map[string]bool{},
		unsynced:   map[*registry.Resource]bool{},
	}
}

// Run builds the graph and collects garbage until ctx ends; it returns
// once all its goroutines have exited.
func (gc *GarbageCollector) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() {
		followTypes(ctx, gc.reg, func(*registry.Resource) bool { return true }, gc.inform, gc.forgetType)
	})
	wg.Go(func() { gc.work(ctx) })
	wg.Wait()
}

// inform feeds the graph with res's objects until ctx ends.
func (gc *GarbageCollector) inform(ctx context.Context, res *registry.Resource) {
	gc.mu.Lock()
	gc.unsynced[res] = true
	gc.mu.Unlock()
	in := &informer{
		store:   res.Store,
		log:     gc.log,
		changed: func(old, cur *meta) { gc.observe(res, old, cur) },
		synced: func() {
			gc.mu.Lock()
			defer gc.mu.Unlock()
			delete(gc.unsynced, res)
			gc.recheckAbsentOwnersLocked()
		},
	}
	gc.informers.run(ctx, in)
}

// Idle reports whether the collector has caught up: it has been told of
// every write to every type it follows and has nothing ready to do.
// Objects waiting for a retry's delay are work for later.
func (gc *GarbageCollector) Idle() bool {
	return gc.informers.caughtUp() && gc.queue.idle()
}

// recheckAbsentOwnersLocked queues every dependent whose owner the graph
// does not hold. A type's informer starts up to a poll interval after the
// type is served; an owner deleted before then sends no event, and its
// first list does not show it, so without this its dependents would never
// be looked at again.
func (gc *GarbageCollector) recheckAbsentOwnersLocked() {
	for owner, deps := range gc.dependents {
		if gc.nodes[owner] != nil {
			continue
		}
		for dep := range deps {
			gc.queue.add(dep)
		}
	}
}

// forgetType drops the objects of a type no longer served: nothing can
// read or delete them now, so they neither own nor block anything.
func (gc *GarbageCollector) forgetType(res *registry.Resource) {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	delete(gc.unsynced, res)
	for uid, n := range gc.nodes {
		if n.res == res {
			gc.removeLocked(uid)
		}
	}
}

// observe applies one change seen by an informer to the graph and queues
// the objects whose fate it may change.
func (gc *GarbageCollector) observe(res *registry.Resource, old, cur *meta) {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	if old != nil && (cur == nil || old.UID != cur.UID) {
		gc.removeLocked(old.UID)
	}
	if cur == nil {
		return
	}
	var prev *meta
	if n := gc.nodes[cur.UID]; n != nil {
		prev = n.m
	}
	gc.nodes[cur.UID] = &node{res: res, m: cur}

	refsChanged := prev == nil || !sameOwners(prev.OwnerReferences, cur.OwnerReferences)
	if refsChanged {
		if prev != nil {
			for _, ref := range prev.OwnerReferences {
				gc.unlinkLocked(ref.UID, cur.UID)
			}
		}
		for _, ref := range cur.OwnerReferences {
			deps := gc.dependents[ref.UID]
			if deps == nil {
				deps = map[string]bool{}
				gc.dependents[ref.UID] = deps
			}
			deps[cur.UID] = true
			gc.queueIfWaitingLocked(ref.UID)
		}
		if len(cur.OwnerReferences) > 0 {
			gc.queue.add(cur.UID) // are its owners there?
		}
	}
	if cur.Deleting && (cur.hasFinalizer(metav1.FinalizerOrphanDependents) || cur.hasFinalizer(metav1.FinalizerDeleteDependents)) {
		gc.queue.add(cur.UID)
	}
}

// removeLocked takes the object with uid out of the graph: its owners may
// have been waiting for it, its dependents may now be garbage.
func (gc *GarbageCollector) removeLocked(uid string) {
	n := gc.nodes[uid]
	if n == nil {
		return
	}
	delete(gc.nodes, uid)
	for _, ref := range n.m.OwnerReferences {
		gc.unlinkLocked(ref.UID, uid)
	}
	for dep := range gc.dependents[uid] {
		gc.queue.add(dep)
	}
}

// unlinkLocked removes dep from owner's dependents and queues the owner
// if it was waiting for its dependents to go.
func (gc *GarbageCollector) unlinkLocked(owner, dep string) {
	if deps := gc.dependents[owner]; deps != nil {
		delete(deps, dep)
		if len(deps) == 0 {
			delete(gc.dependents, owner)
		}
	}
	gc.queueIfWaitingLocked(owner)
}

// queueIfWaitingLocked queues owner if it is being deleted with a
// finalizer that waits on its dependents.
func (gc *GarbageCollector) queueIfWaitingLocked(owner string) {
	if n := gc.nodes[owner]; n != nil && n.m.Deleting &&
		(n.m.hasFinalizer(metav1.FinalizerDeleteDependents) || n.m.hasFinalizer(metav1.FinalizerOrphanDependents)) {
		gc.queue.add(owner)
	}
}

// sameOwners reports whether two ownerReference lists name the same
// owners with the same blocking.
func sameOwners(a, b []api.OwnerReference) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].UID != b[i].UID || blocks(a[i]) != blocks(b[i]) {
			return false
		}
	}
	return true
}

// blocks reports whether ref has blockOwnerDeletion set.
func blocks(ref api.OwnerReference) bool {
	return ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion
}

// work handles queued objects one at a time until ctx ends.
func (gc *GarbageCollector) work(ctx context.Context) {
	for {
		uid, ok := gc.queue.get(ctx)
		if !ok {
			return
		}
		gc.handle(ctx, uid)
		gc.queue.done()
	}
}

// handle collects one object if it is garbage, or queues it again.
func (gc *GarbageCollector) handle(ctx context.Context, uid string) {
	gc.mu.Lock()
	synced := len(gc.unsynced) == 0
	gc.mu.Unlock()
	if !synced {
		gc.queue.addAfter(uid, gcSyncWait)
		return
	}
	err := gc.sync(ctx, uid)
	switch {
	case ctx.Err() != nil:
	case err != nil:
		logSyncError(ctx, gc.log, "controllers: garbage collection failed; will retry", "uid", uid, err)
		gc.queue.retry(uid)
	default:
		gc.queue.forget(uid)
	}
}

// dependent is a snapshot of one dependent of an owner.
type dependent struct {
	res *registry.Resource
	m   *meta
	// blocking is true when its reference to the owner has
	// blockOwnerDeletion.
	blocking bool
}

// lookup returns a snapshot of the node with uid and its dependents.
func (gc *GarbageCollector) lookup(uid string) (*node, []dependent) {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	n := gc.nodes[uid]
	if n == nil {
		return nil, nil
	}
	var deps []dependent
	for d := range gc.dependents[uid] {
		dn := gc.nodes[d]
		if dn == nil {
			continue
		}
		dep := dependent{res: dn.res, m: dn.m}
		for _, ref := range dn.m.OwnerReferences {
			if ref.UID == uid && blocks(ref) {
				dep.blocking = true
			}
		}
		deps = append(deps, dep)
	}
	return &node{res: n.res, m: n.m}, deps
}

// sync decides about the object with uid.
func (gc *GarbageCollector) sync(ctx context.Context, uid string) error {
	n, deps := gc.lookup(uid)
	if n == nil {
		return nil // gone, or an owner never seen
	}
	if n.m.Deleting {
		switch {
		case n.m.hasFinalizer(metav1.FinalizerOrphanDependents):
			return gc.orphanDependents(ctx, n, deps)
		case n.m.hasFinalizer(metav1.FinalizerDeleteDependents):
			return gc.deleteDependents(ctx, n, deps)
		}
		return nil // on its way out; its dependents are looked at when it is gone
	}
	if len(n.m.OwnerReferences) == 0 {
		return nil
	}
	return gc.collect(ctx, n, len(deps) > 0)
}

// orphanDependents removes the ownerReferences to owner from its
// dependents, then the owner's orphan finalizer.
func (gc *GarbageCollector) orphanDependents(ctx context.Context, owner *node, deps []dependent) error {
	for _, d := range deps {
		err := updateObject(ctx, d.res.Store, d.m.Namespace, d.m.Name, d.m.UID, "", func(obj *api.Object) bool {
			refs := obj.Metadata.OwnerReferences
			kept := refs[:0:0]
			for _, ref := range refs {
				if ref.UID != owner.m.UID {
					kept = append(kept, ref)
				}
			}
			obj.Metadata.OwnerReferences = kept
			return len(kept) != len(refs)
		})
		if err != nil {
			return err
		}
	}
	gc.log.Debug("controllers: dependents orphaned", "owner", owner.m.Namespace+"/"+owner.m.Name, "dependents", len(deps))
	return gc.removeFinalizer(ctx, owner, metav1.FinalizerOrphanDependents)
}

// deleteDependents works on an owner being deleted in the foreground:
// once no dependent blocks it, its foregroundDeletion finalizer goes;
// until then its dependents are queued, to be deleted since their owner
// is waiting for them.
func (gc *GarbageCollector) deleteDependents(ctx context.Context, owner *node, deps []dependent) error {
	blocked := false
	for _, d := range deps {
		blocked = blocked || d.blocking
		if !d.m.Deleting {
			gc.queue.add(d.m.UID)
		}
	}
	if blocked {
		return nil // queued again when a dependent goes
	}
	return gc.removeFinalizer(ctx, owner, metav1.FinalizerDeleteDependents)
}

// removeFinalizer removes finalizer f from n; the registry deletes n if
// it was the last.
func (gc *GarbageCollector) removeFinalizer(ctx context.Context, n *node, f string) error {
	return updateObject(ctx, n.res.Store, n.m.Namespace, n.m.Name, n.m.UID, "", func(obj *api.Object) bool {
		return withoutFinalizer(obj, f)
	})
}

// Owner states, as kube's garbage collector classifies references.
type ownerState int

const (
	// ownerSolid exists and is not waiting for its dependents.
	ownerSolid ownerState = iota
	// ownerDangling does not exist (with that uid).
	ownerDangling
	// ownerWaiting is being deleted in the foreground.
	ownerWaiting
)

// collect deletes the object of n if none of its owners remains, and
// drops references to owners that are gone or waiting for it when some
// other owner remains. hasDependents says whether n owns anything.
func (gc *GarbageCollector) collect(ctx context.Context, n *node, hasDependents bool) error {
	store := n.res.Store
	obj, err := getObject(ctx, store, n.m.Namespace, n.m.Name, n.m.UID)
	if obj == nil || err != nil || obj.Metadata.DeletionTimestamp != nil {
		return err // gone, or being deleted: its events bring it back
	}
	var solid, waiting int
	drop := map[string]bool{}
	for _, ref := range obj.Metadata.OwnerReferences {
		st, err := gc.ownerState(ctx, obj.Metadata.Namespace, ref)
		if err != nil {
			return err
		}
		switch st {
		case ownerSolid:
			solid++
		case ownerWaiting:
			waiting++
			drop[ref.UID] = true
		case ownerDangling:
			drop[ref.UID] = true
		}
	}
	uid, rv := obj.Metadata.UID, obj.Metadata.ResourceVersion
	switch {
	case solid > 0 && len(drop) == 0:
		return nil
	case solid > 0:
		// Another owner remains: keep the object, without the
		// references that would make the rest wait or point nowhere.
		return updateObject(ctx, store, n.m.Namespace, n.m.Name, uid, "", func(obj *api.Object) bool {
			refs := obj.Metadata.OwnerReferences
			kept := refs[:0:0]
			for _, ref := range refs {
				if !drop[ref.UID] {
					kept = append(kept, ref)
				}
			}
			obj.Metadata.OwnerReferences = kept
			return len(kept) != len(refs)
		})
	}
	// No owner remains. An owner waiting in the foreground passes that on
	// to an object that owns others in turn; otherwise the object's own
	// finalizers say how its dependents go.
	policy := api.DeletePropagationBackground
	switch {
	case waiting > 0 && hasDependents:
		policy = api.DeletePropagationForeground
	case hasFinalizer(obj, metav1.FinalizerOrphanDependents):
		policy = api.DeletePropagationOrphan
	case hasFinalizer(obj, metav1.FinalizerDeleteDependents):
		policy = api.DeletePropagationForeground
	}
	gc.log.Debug("controllers: deleting object whose owners are gone", "resource", n.res.Type.GVR().String(),
		"object", n.m.Namespace+"/"+n.m.Name, "propagationPolicy", policy)
	// The preconditions make sure the object judged is the one deleted,
	// with the ownerReferences judged.
	_, _, err = store.Delete(ctx, n.m.Namespace, n.m.Name, registry.DeleteOptions{
		PropagationPolicy: policy,
		Preconditions:     &api.Preconditions{UID: &uid, ResourceVersion: &rv},
	})
	if api.IsNotFound(err) {
		return nil
	}
	return err
}

// ownerState classifies the owner ref names for a dependent in
// namespace ns. The graph answers for owners it holds; others are read
// from their Store, since the graph may not have seen them yet.
func (gc *GarbageCollector) ownerState(ctx context.Context, ns string, ref api.OwnerReference) (ownerState, error) {
	gc.mu.Lock()
	n := gc.nodes[ref.UID]
	gc.mu.Unlock()
	if n != nil {
		return stateOf(n.m.Deleting, n.m.hasFinalizer(metav1.FinalizerDeleteDependents)), nil
	}
	res := resolveKind(gc.reg.Snapshot(), ref.APIVersion, ref.Kind)
	if res == nil {
		// A kind not served: nothing can tell whether the owner exists,
		// so, as kube's collector, never delete on its account.
		return ownerSolid, nil
	}
	ownerNS := ""
	if res.Type.Namespaced {
		if ns == "" {
			// A cluster-scoped object cannot have a namespaced owner;
			// kube reports the reference as invalid and deletes nothing.
			return ownerSolid, nil
		}
		ownerNS = ns
	}
	obj, err := getObject(ctx, res.Store, ownerNS, ref.Name, ref.UID)
	if err != nil {
		return ownerSolid, err
	}
	if obj == nil {
		return ownerDangling, nil
	}
	return stateOf(obj.Metadata.DeletionTimestamp != nil, hasFinalizer(obj, metav1.FinalizerDeleteDependents)), nil
}

// stateOf is the state of an existing owner.
func stateOf(deleting, foreground bool) ownerState {
	if deleting && foreground {
		return ownerWaiting
	}
	return ownerSolid
}

// hasFinalizer reports whether obj carries finalizer f.
func hasFinalizer(obj *api.Object, f string) bool {
	return slices.Contains(obj.Metadata.Finalizers, f)
}
