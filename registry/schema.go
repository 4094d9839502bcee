package registry

import (
	"encoding/json"
	"fmt"
)

// This file holds the small vocabulary the built-in types' OpenAPI v3
// schemas (schema_builtin.go) are written in. A schema is built once per
// BuiltinTypes call as plain maps and encoded into Type.Schema, the same
// self-contained form a CRD's openAPIV3Schema has: no $refs, metadata as
// a bare object (the OpenAPI documents substitute ObjectMeta, as
// kube-apiserver does for custom resources).

// schemaNode is one OpenAPI v3 schema object.
type schemaNode = map[string]any

// Descriptions shared by every kind.
const (
	apiVersionDescription = "The versioned schema this object follows, as group/version (or just the version for the core group). The server rejects values it does not serve."
	kindDescription       = "The kind of object this is, in CamelCase. The server fills it in from the URL when it is missing and refuses a mismatch."
	metadataDescription   = "Standard object metadata: name, namespace, labels, annotations, owner references, finalizers and the fields the server maintains."
)

// kindSchema is the schema of a whole object: apiVersion, kind and
// metadata plus the kind's own fields.
func kindSchema(description string, fields map[string]schemaNode, required ...string) json.RawMessage {
	props := map[string]schemaNode{
		"apiVersion": str(apiVersionDescription),
		"kind":       str(kindDescription),
		"metadata":   {"type": "object", "description": metadataDescription},
	}
	for k, v := range fields {
		props[k] = v
	}
	return mustJSON(object(description, props, required...))
}

// object is an object schema with named properties.
func object(description string, props map[string]schemaNode, required ...string) schemaNode {
	s := schemaNode{"type": "object", "description": description, "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func str(description string) schemaNode {
	return schemaNode{"type": "string", "description": description}
}

// enumStr is a string limited to the given values.
func enumStr(description string, values ...string) schemaNode {
	s := str(description)
	s["enum"] = values
	return s
}

func int32Field(description string) schemaNode {
	return schemaNode{"type": "integer", "format": "int32", "description": description}
}

func boolean(description string) schemaNode {
	return schemaNode{"type": "boolean", "description": description}
}

// timestamp is a metav1.Time: RFC 3339 with seconds.
func timestamp(description string) schemaNode {
	return schemaNode{"type": "string", "format": "date-time", "description": description}
}

// microTimestamp is a metav1.MicroTime: RFC 3339 with microseconds. OpenAPI
// has no finer format, so it reads like a Time, as in Kubernetes.
func microTimestamp(description string) schemaNode {
	return timestamp(description)
}

// stringMap is a map of string values (a Go map[string]string).
func stringMap(description string) schemaNode {
	return schemaNode{"type": "object", "description": description, "additionalProperties": schemaNode{"type": "string"}}
}

// byteMap is a map of base64-encoded values (a Go map[string][]byte).
func byteMap(description string) schemaNode {
	return schemaNode{"type": "object", "description": description,
		"additionalProperties": schemaNode{"type": "string", "format": "byte"}}
}

// list is an array of items; listType is Kubernetes' x-kubernetes-list-type
// ("atomic", "set" or "map"), mapKeys the list-map keys when it is "map".
func list(description string, items schemaNode, listType string, mapKeys ...string) schemaNode {
	s := schemaNode{"type": "array", "description": description, "items": items, "x-kubernetes-list-type": listType}
	if len(mapKeys) > 0 {
		s["x-kubernetes-list-map-keys"] = mapKeys
	}
	return s
}

// atomicStruct marks an object that is replaced as a whole by server-side
// apply (x-kubernetes-map-type: atomic), as Kubernetes marks references.
func atomicStruct(s schemaNode) schemaNode {
	s["x-kubernetes-map-type"] = "atomic"
	return s
}

// mustJSON encodes a schema built from maps, strings and slices, which
// cannot fail; a failure is a programming error in this package.
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("registry: encode schema: %v", err))
	}
	return b
}
