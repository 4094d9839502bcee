package apiextensions

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
)

// finalize moves the deletion of a CRD forward, as kube's CRD finalizer:
// it deletes every object of the CRD's resource (in every namespace),
// and once none is left stops serving the resource and removes the
// cleanup finalizer, which lets the CRD go. It reports whether objects
// remain (held by their own finalizers), so a later pass looks again.
func (c *Controller) finalize(ctx context.Context, store *registry.Store, s stored) (again bool, err error) {
	name := s.crd.Metadata.Name
	if !slices.Contains(s.crd.Metadata.Finalizers, CleanupFinalizer) {
		return false, nil
	}
	if len(c.served[name]) == 0 && s.crd.Status.IsTrue(Established) {
		// Deleted while no controller ran (a restart): serve it again
		// for the time its objects take to go.
		if err := c.serve(ctx, name, Types(s.crd, s.crd.Status.AcceptedNames)); err != nil {
			return false, err
		}
	}
	// Objects stay served until they are gone, but no new ones come.
	if len(c.served[name]) > 0 {
		types := Types(s.crd, c.servingNames(name, s.crd.Status.AcceptedNames))
		for i := range types {
			types[i].CreatesRefused = true
		}
		if err := c.register(name, types); err != nil {
			return false, err
		}
	}
	var objects *registry.Store
	snap := c.reg.Snapshot()
	for _, g := range c.served[name] {
		if res, ok := snap.Lookup(g.Group, g.Version, g.Resource); ok {
			objects = res.Store
			break
		}
	}
	uid := s.crd.Metadata.UID
	if objects != nil {
		if err := c.setTerminating(ctx, store, name, uid, ConditionTrue, "InstanceDeletionInProgress", "CustomResource deletion is in progress"); err != nil {
			return false, err
		}
		remaining, err := deleteAll(ctx, objects)
		if err != nil {
			serr := c.setTerminating(ctx, store, name, uid, ConditionTrue, "InstanceDeletionFailed", fmt.Sprintf("could not issue all deletes: %v", err))
			return true, fmt.Errorf("delete objects: %w (%v)", err, serr)
		}
		if remaining > 0 {
			return true, nil
		}
		if err := c.setTerminating(ctx, store, name, uid, ConditionFalse, "InstanceDeletionCompleted", "removed all instances"); err != nil {
			return false, err
		}
	} else if !s.crd.Status.IsTrue(Established) {
		if err := c.setTerminating(ctx, store, name, uid, ConditionFalse, "NeverEstablished", "resource was never established"); err != nil {
			return false, err
		}
	}
	if err := c.unserve(name); err != nil {
		return false, err
	}
	return false, updateCRD(ctx, store, name, uid, "", func(obj *api.Object) bool {
		fins := slices.DeleteFunc(slices.Clone(obj.Metadata.Finalizers), func(f string) bool { return f == CleanupFinalizer })
		if len(fins) == len(obj.Metadata.Finalizers) {
			return false
		}
		obj.Metadata.Finalizers = fins
		return true
	})
}

// servingNames returns the names CRD name is served under: accepted, as
// its status records them, or, when the CRD was deleted before the status
// recording them was written (the write conflicted with the deletion),
// the names its served types carry.
func (c *Controller) servingNames(name string, accepted Names) Names {
	if accepted.Plural != "" {
		return accepted
	}
	snap := c.reg.Snapshot()
	for _, g := range c.served[name] {
		if res, ok := snap.Lookup(g.Group, g.Version, g.Resource); ok {
			t := res.Type
			return Names{Plural: t.Plural, Singular: t.Singular, ShortNames: t.ShortNames, Kind: t.Kind, ListKind: t.ListKind, Categories: t.Categories}
		}
	}
	return accepted
}

// setTerminating sets the Terminating condition of the CRD with uid.
func (c *Controller) setTerminating(ctx context.Context, store *registry.Store, name, uid, status, reason, msg string) error {
	return updateCRD(ctx, store, name, uid, registry.SubresourceStatus, func(obj *api.Object) bool {
		crd, err := Decode(obj)
		if err != nil {
			return false
		}
		if cur := crd.Status.Condition(Terminating); cur != nil && cur.Status == status && cur.Reason == reason && cur.Message == msg {
			return false
		}
		setCondition(&crd.Status, Condition{Type: Terminating, Status: status, Reason: reason, Message: msg})
		return setStatus(obj, &crd.Status) == nil
	})
}

// updateCRD reads the CRD with uid, lets change modify it and writes it
// (through subresource sub) when change reports a change. The read
// resourceVersion makes the write conditional; a conflict is returned
// for the next pass.
func updateCRD(ctx context.Context, store *registry.Store, name, uid, sub string, change func(*api.Object) bool) error {
	cur, err := store.Get(ctx, "", name, "")
	if api.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	var obj api.Object
	if err := json.Unmarshal(cur.Data, &obj); err != nil {
		return err
	}
	if obj.Metadata.UID != uid || !change(&obj) {
		return nil
	}
	_, err = store.UpdateObject(ctx, "", name, &obj, registry.UpdateOptions{Subresource: sub})
	if api.IsNotFound(err) {
		return nil
	}
	return err
}

// deleteAll deletes every object of a store, in every namespace, and
// returns how many are left (objects their finalizers hold).
func deleteAll(ctx context.Context, store *registry.Store) (remaining int, err error) {
	list, err := store.List(ctx, "", registry.ListOptions{})
	if err != nil {
		return 0, err
	}
	for _, it := range list.Items {
		var m struct {
			Metadata api.ObjectMeta `json:"metadata"`
		}
		if err := json.Unmarshal(it.Data, &m); err != nil {
			return 0, err
		}
		if m.Metadata.DeletionTimestamp != nil {
			remaining++
			continue
		}
		_, deleted, err := store.Delete(ctx, m.Metadata.Namespace, m.Metadata.Name, registry.DeleteOptions{})
		if api.IsNotFound(err) {
			continue
		}
		if err != nil {
			return 0, err
		}
		if !deleted {
			remaining++
		}
	}
	return remaining, nil
}
