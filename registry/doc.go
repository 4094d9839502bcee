// Package registry holds the resource types miniapi serves and the generic
// Store that implements every verb for all of them.
//
// A Type is data (group, version, kind, plural, scope, short names,
// selectable fields, printer columns) plus a Strategy whose optional
// capability interfaces add defaulting, validation, normalization and a
// status subresource. A Registry is a value: Add makes a type served at
// once, Remove stops serving it, and readers take an immutable Snapshot, so
// types come and go while requests are in flight.
//
//	reg := registry.New(registry.Config{Storage: factory})
//	for _, t := range builtin.Types(builtin.Config{}) { // or any Types
//		if err := reg.Add(t); err != nil { ... }
//	}
//	res, ok := reg.Snapshot().Lookup("", "v1", "configmaps")
//	obj, err := res.Store.Create(ctx, "default", cm, registry.CreateOptions{})
//	defer reg.Close()
//
// Every write records field ownership in metadata.managedFields, and
// Store.Apply merges server-side apply patches, through the fieldmanager
// package: the type's merge schema is Kubernetes' own for built-in types
// (MergeSchema) and the Type's Schema otherwise.
//
// Store methods return client-facing errors as *api.StatusError; anything
// else is a server fault.
package registry
