// Package storage defines the contract between miniapi's registry and its
// backends: Interface (get, list, create, guaranteed update, delete, watch),
// the Object it moves (encoded JSON plus the etcd revision it was written
// at), typed errors, the etcd key layout, selection predicates and list
// continue tokens.
//
// Two packages implement Interface: storage/etcd3 over an etcd client, and
// storage/cacher, which wraps any Interface and serves list and watch from
// memory. The registry holds an Interface per resource type and cannot tell
// which it has:
//
//	var s storage.Interface = etcd3.New(etcd3.Config{Client: client})
//	obj, err := s.Create(ctx, key, data)
//	if storage.IsExists(err) { ... }
//
// Every object's Data carries metadata.resourceVersion equal to its
// Revision; a backend sets it when reading, so callers never do.
package storage
