package controllers

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
)

// Namespace phases and the spec finalizer this controller owns, as
// Kubernetes names them.
const (
	phaseTerminating    = "Terminating"
	finalizerKubernetes = "kubernetes"
)

// How soon a namespace whose content is not gone yet is looked at again:
// the delay doubles from the first to the second while objects held by
// their finalizers keep it waiting.
const (
	namespaceRetryBase = 50 * time.Millisecond
	namespaceRetryMax  = time.Second
)

// NamespaceController empties namespaces being deleted, as
// kube-controller-manager's namespace controller does. For a namespace
// with a deletionTimestamp it makes sure the phase is Terminating,
// deletes every object of every namespaced type in it (the types served
// at that moment, so types added later are covered on the next round),
// and looks again until none is left, objects held by finalizers
// included. Then it removes its "kubernetes" entry from spec.finalizers
// through the namespace's finalize subresource; the registry removes the
// namespace once that and its metadata.finalizers are empty.
type NamespaceController struct {
	reg   *registry.Registry
	log   *slog.Logger
	queue *queue[string] // namespace names
	// informers is the namespaces' informer, for Idle.
	informers informerSet
}

// NewNamespaceController returns a controller over reg's namespaces.
func NewNamespaceController(reg *registry.Registry, log *slog.Logger) *NamespaceController {
	return &NamespaceController{
		reg: reg, log: log.With("controller", NamespaceControllerName),
		queue: newQueue[string](namespaceRetryBase, namespaceRetryMax),
	}
}

// Run watches namespaces and works on those being deleted until ctx ends;
// it returns once all its goroutines have exited.
func (c *NamespaceController) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() {
		followTypes(ctx, c.reg, isNamespaces, func(ctx context.Context, res *registry.Resource) {
			in := &informer{store: res.Store, log: c.log, changed: func(_, cur *meta) {
				if cur != nil && cur.Deleting {
					c.queue.add(cur.Name)
				}
			}}
			c.informers.run(ctx, in)
		}, nil)
	})
	wg.Go(func() { c.work(ctx) })
	wg.Wait()
}

// Idle reports whether the controller has caught up: it has been told
// of every namespace write and has nothing ready to do. Namespaces
// waiting for content to go (a retry's delay) are work for later.
func (c *NamespaceController) Idle() bool {
	return c.informers.caughtUp() && c.queue.idle()
}

// isNamespaces picks core/v1 namespaces.
func isNamespaces(res *registry.Resource) bool {
	return res.Type.Group == "" && res.Type.Version == "v1" && res.Type.Plural == "namespaces"
}

// work handles queued namespaces one at a time until ctx ends.
func (c *NamespaceController) work(ctx context.Context) {
	for {
		name, ok := c.queue.get(ctx)
		if !ok {
			return
		}
		c.handle(ctx, name)
		c.queue.done()
	}
}

// handle syncs one namespace and queues it again if it must be.
func (c *NamespaceController) handle(ctx context.Context, name string) {
	again, err := c.sync(ctx, name)
	switch {
	case ctx.Err() != nil:
	case err != nil:
		logSyncError(ctx, c.log, "controllers: namespace deletion failed; will retry", "namespace", name, err)
		c.queue.retry(name)
	case again:
		c.queue.retry(name)
	default:
		c.queue.forget(name)
	}
}

// sync moves the deletion of namespace name forward and reports whether
// it must be looked at again because content remains.
func (c *NamespaceController) sync(ctx context.Context, name string) (again bool, err error) {
	res, ok := c.reg.Snapshot().Lookup("", "v1", "namespaces")
	if !ok {
		return false, nil
	}
	ns, err := getObject(ctx, res.Store, "", name, "")
	if ns == nil || err != nil || ns.Metadata.DeletionTimestamp == nil {
		return false, err
	}
	uid := ns.Metadata.UID
	if err := updateObject(ctx, res.Store, "", name, uid, registry.SubresourceStatus, setTerminating); err != nil {
		return false, err
	}
	if !slices.Contains(specFinalizers(ns), finalizerKubernetes) {
		return false, nil // not ours to finalize (or already done)
	}
	remaining, err := c.deleteContent(ctx, name)
	if err != nil || remaining > 0 {
		return remaining > 0, err
	}
	c.log.Debug("controllers: namespace empty; finalizing", "namespace", name)
	return false, updateObject(ctx, res.Store, "", name, uid, registry.SubresourceFinalize, func(ns *api.Object) bool {
		fins := specFinalizers(ns)
		kept := slices.DeleteFunc(slices.Clone(fins), func(f string) bool { return f == finalizerKubernetes })
		if len(kept) == len(fins) {
			return false
		}
		return setSpecFinalizers(ns, kept)
	})
}

// deleteContent deletes every object in namespace ns, of every
// namespaced type served now, and returns how many are still there
// (those that finalizers keep, or that could not be deleted this round).
func (c *NamespaceController) deleteContent(ctx context.Context, ns string) (remaining int, err error) {
	for _, res := range c.reg.Snapshot().Resources() {
		if !res.Type.Namespaced || registry.IsVirtual(&res.Type) {
			continue
		}
		list, err := res.Store.List(ctx, ns, registry.ListOptions{})
		if err != nil {
			return remaining, err
		}
		for _, item := range list.Items {
			m, err := decodeMeta(item.Data)
			if err != nil {
				return remaining, err
			}
			// Background, as kube's namespace controller asks: a
			// leftover orphan or foregroundDeletion finalizer must not
			// keep the namespace; the garbage collector removes
			// dependents outside the namespace.
			_, deleted, err := res.Store.Delete(ctx, ns, m.Name, registry.DeleteOptions{
				PropagationPolicy: api.DeletePropagationBackground,
				Preconditions:     &api.Preconditions{UID: &m.UID},
			})
			switch {
			case api.IsNotFound(err) || (err == nil && deleted):
			case err == nil || api.IsConflict(err):
				remaining++ // held by finalizers, or changed meanwhile
			default:
				return remaining, err
			}
		}
	}
	return remaining, nil
}

// setTerminating sets a namespace's status.phase to Terminating.
func setTerminating(ns *api.Object) bool {
	status := map[string]json.RawMessage{}
	if raw, ok := ns.Fields["status"]; ok && string(raw) != "null" {
		if json.Unmarshal(raw, &status) != nil {
			return false
		}
	}
	var phase string
	_ = json.Unmarshal(status["phase"], &phase)
	if phase == phaseTerminating {
		return false
	}
	status["phase"], _ = json.Marshal(phaseTerminating)
	ns.Fields["status"], _ = json.Marshal(status)
	return true
}

// specFinalizers returns a namespace's spec.finalizers.
func specFinalizers(ns *api.Object) []string {
	var spec struct {
		Finalizers []string `json:"finalizers"`
	}
	if raw, ok := ns.Fields["spec"]; ok {
		_ = json.Unmarshal(raw, &spec)
	}
	return spec.Finalizers
}

// setSpecFinalizers replaces a namespace's spec.finalizers, dropping the
// field when fins is empty as Kubernetes' omitempty does.
func setSpecFinalizers(ns *api.Object, fins []string) bool {
	spec := map[string]json.RawMessage{}
	if raw, ok := ns.Fields["spec"]; ok && string(raw) != "null" {
		if json.Unmarshal(raw, &spec) != nil {
			return false
		}
	}
	if len(fins) == 0 {
		delete(spec, "finalizers")
	} else {
		spec["finalizers"], _ = json.Marshal(fins)
	}
	ns.Fields["spec"], _ = json.Marshal(spec)
	return true
}
