// Package api holds miniapi's wire types: the parts of a Kubernetes object
// every resource shares (TypeMeta, ObjectMeta, ListMeta), the generic Object
// that carries any resource as metadata plus raw JSON fields, Status and the
// typed StatusError every failure becomes, WatchEvent frames,
// DeleteOptions, and the server-side output kinds Table and
// PartialObjectMetadata.
//
// The types are plain structs with JSON tags that match Kubernetes field
// names; there is no scheme and no conversion. A handler decodes a body into
// an Object, the registry manages its metadata, and storage moves the encoded
// bytes:
//
//	var obj api.Object
//	if err := json.Unmarshal(body, &obj); err != nil { ... }
//	obj.Metadata.Labels["app"] = "web"
//	data, _ := json.Marshal(&obj)
//
// Errors meant for clients are *StatusError values built by the New...
// constructors; anything else reaching a handler is an internal error.
package api
