// Package apiextensions serves what CustomResourceDefinitions define: the
// mapping of a CRD onto registry types (Types: one per served version)
// and the Controller that keeps the live registry in step with the
// stored CRDs. The CustomResourceDefinition kind itself is a built-in
// kind (package builtin), with apiextensions-apiserver's strategies.
//
// The CRD wire types here are plain structs decoded from an api.Object's
// fields (spec.conversion is apiextensions.k8s.io/v1's own type), read
// by the controller. Of k8s.io/apiextensions-apiserver this package uses
// the conversion webhook converter, behind Converters.
//
// Lifecycle: the server adds the built-in types to its registry,
// constructs a Controller, calls Sync once before it serves (so CRDs
// stored in etcd are served from the first request), then runs Run in
// the background until shutdown.
//
//	c := apiextensions.NewController(reg, log)
//	if _, err := c.Sync(ctx); err != nil { ... } // stored CRDs served
//	go c.Run(bgctx)                               // live changes
//
// For each CRD the controller decides the accepted names (a name another
// type of the group already uses is refused: NamesAccepted False with
// kube's reason and message), serves one registry.Type per served version
// (registry.Replace, which keeps a type's storage and cache when only its
// schema, columns or names change), and sets the NamesAccepted and
// Established conditions. A deleted CRD gets the
// customresourcecleanup.apiextensions.k8s.io finalizer from its kind;
// the controller deletes its objects in every namespace, stops serving
// it and removes the finalizer.
//
// Versions: objects are stored once, in the storage version, under keys
// without a version. Every served version is its own registry.Type with
// StorageVersion set; the server's storage factory puts a
// storage/versioned.Store under that version's cacher, rewriting
// apiVersion between the served and the stored version (conversion
// strategy None) or converting through the CRD's webhook (strategy
// Webhook: Type.Conversion, and a Converter from Converters.For as the
// store's hooks), so each event is converted once per version. An
// unserved version is simply not registered: 404.
//
//	convs, err := apiextensions.NewConverters(serviceResolver)
//	conv, err := convs.For(t) // nil unless t's CRD converts by webhook
//	cfg := versioned.Config{ToStored: conv.ToStored, ToServed: conv.ToServed, ToServedList: conv.ToServedList, ...}
package apiextensions
