package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
)

// updateAttempts bounds the read-modify-write retries of updateObject;
// after that the caller's queue retries later.
const updateAttempts = 5

// updateObject applies change to the current state of the object with
// uid and writes it through subresource sub ("" for the main resource),
// retrying on conflicts as client-go's RetryOnConflict does. change
// reports whether it changed anything. An object that is gone, or was
// replaced by another of the same name, needs nothing: updateObject
// returns nil.
func updateObject(ctx context.Context, store *registry.Store, ns, name, uid, sub string, change func(*api.Object) bool) error {
	for attempt := 1; ; attempt++ {
		obj, err := getObject(ctx, store, ns, name, uid)
		if obj == nil || err != nil {
			return err
		}
		if !change(obj) {
			return nil
		}
		// obj carries the resourceVersion it was read at, so the update
		// fails with a conflict if the object moved on meanwhile.
		_, err = store.UpdateObject(ctx, ns, name, obj, registry.UpdateOptions{Subresource: sub, FieldManager: registry.ControllerFieldManager})
		switch {
		case err == nil || api.IsNotFound(err):
			return nil
		case !api.IsConflict(err) || attempt == updateAttempts:
			return fmt.Errorf("controllers: update %s %s/%s: %w", store.Type().GVR(), ns, name, err)
		}
	}
}

// getObject reads the latest state of the object with uid; it returns
// nil, nil when that object no longer exists.
func getObject(ctx context.Context, store *registry.Store, ns, name, uid string) (*api.Object, error) {
	cur, err := store.Get(ctx, ns, name, "")
	if api.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var obj api.Object
	if err := json.Unmarshal(cur.Data, &obj); err != nil {
		return nil, fmt.Errorf("controllers: decode %s %s/%s: %w", store.Type().GVR(), ns, name, err)
	}
	if uid != "" && obj.Metadata.UID != uid {
		return nil, nil
	}
	return &obj, nil
}

// withoutFinalizer removes f from obj's finalizers and reports whether it
// was there.
func withoutFinalizer(obj *api.Object, f string) bool {
	fins := obj.Metadata.Finalizers
	out := fins[:0:0]
	for _, x := range fins {
		if x != f {
			out = append(out, x)
		}
	}
	obj.Metadata.Finalizers = out
	return len(out) != len(fins)
}

// resolveKind finds the served resource of an ownerReference's apiVersion
// and kind: the same group and kind, preferring the same version (miniapi
// serves one version of each kind, so another version names the same
// objects).
func resolveKind(snap *registry.Snapshot, apiVersion, kind string) *registry.Resource {
	group, version, ok := strings.Cut(apiVersion, "/")
	if !ok {
		group, version = "", apiVersion
	}
	var found *registry.Resource
	for _, res := range snap.Resources() {
		t := &res.Type
		if t.Group != group || t.Kind != kind {
			continue
		}
		if t.Version == version {
			return res
		}
		found = res
	}
	return found
}
