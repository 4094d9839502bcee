package endpoints

// The definitions every OpenAPI document shares: object and list
// metadata, Status, DeleteOptions, WatchEvent and what they refer to,
// under the names kube-apiserver publishes them with, so that clients that
// look them up by name (kubectl's patch and explain code) find them.
//
// Schemas are written in OpenAPI v3 form, with references into
// #/components/schemas/; the Swagger 2.0 document rewrites them
// (schemaToV2 in openapi_doc.go).

// jsonObj is a JSON object: a schema, an operation, a document.
type jsonObj = map[string]any

// v3RefPrefix is where OpenAPI v3 references point.
const v3RefPrefix = "#/components/schemas/"

// Names of the shared definitions.
const (
	metaV1            = "io.k8s.apimachinery.pkg.apis.meta.v1."
	defObjectMeta     = metaV1 + "ObjectMeta"
	defListMeta       = metaV1 + "ListMeta"
	defShardInfo      = metaV1 + "ShardInfo"
	defOwnerReference = metaV1 + "OwnerReference"
	defManagedFields  = metaV1 + "ManagedFieldsEntry"
	defFieldsV1       = metaV1 + "FieldsV1"
	defTime           = metaV1 + "Time"
	defMicroTime      = metaV1 + "MicroTime"
	defStatus         = metaV1 + "Status"
	defStatusDetails  = metaV1 + "StatusDetails"
	defStatusCause    = metaV1 + "StatusCause"
	defDeleteOptions  = metaV1 + "DeleteOptions"
	defPreconditions  = metaV1 + "Preconditions"
	defWatchEvent     = metaV1 + "WatchEvent"
	defPatch          = metaV1 + "Patch"
	defRawExtension   = "io.k8s.apimachinery.pkg.runtime.RawExtension"
)

// Descriptions of the shared definitions' fields, in our words.
const (
	apiVersionFieldDesc = "The versioned schema this object follows, as group/version (or just the version for the core group). The server rejects values it does not serve."
	kindFieldDesc       = "The kind of object this is, in CamelCase. The server fills it in from the URL when it is missing and refuses a mismatch."
	objectMetadataDesc  = "Standard object metadata: name, namespace, labels, annotations, owner references, finalizers and the fields the server maintains."
	listMetadataDesc    = "Standard list metadata: the resourceVersion the list was read at and the token of the next page."
	uniqueNameFieldDesc = "Unique within its namespace (or the cluster, for cluster-scoped kinds); cannot change."
	generatedUIDDesc    = "Unique across time and space, set by the server on create; never reused."
	resourceVersionDesc = "An opaque version of the object, changed by every write. Send it back unchanged in an update to detect conflicting writes, or to a list or watch to read from that point."
	continueTokenDesc   = "Set when more items are available: pass it as the continue parameter of the same list request to get the next page. It expires once the server compacts its history."
	remainingItemsDesc  = "How many items are left after this page, when the server can tell. An estimate: clients must not rely on it."
	timeFieldDesc       = "A point in time, serialized as an RFC 3339 string in UTC with whole seconds."
	microTimeFieldDesc  = "A point in time with microsecond precision, serialized as an RFC 3339 string in UTC with six fractional digits."
	rawObjectDesc       = "A complete object in its own serialization (JSON here), with its own apiVersion and kind."
	selfLinkDesc        = "Deprecated and always empty; kept for compatibility."
)

// ref is a reference to a shared or type definition.
func ref(name string) jsonObj { return jsonObj{"$ref": v3RefPrefix + name} }

// refField is a property whose value is a referenced definition; the
// description sits beside the reference, as kube-apiserver writes it.
func refField(name, description string) jsonObj {
	return jsonObj{"$ref": v3RefPrefix + name, "description": description}
}

func prop(typ, description string) jsonObj { return jsonObj{"type": typ, "description": description} }

func objectDef(description string, props jsonObj, required ...string) jsonObj {
	s := jsonObj{"type": "object", "description": description, "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// typeMetaFields adds apiVersion and kind to a definition's properties.
func typeMetaFields(props jsonObj) jsonObj {
	props["apiVersion"] = prop("string", apiVersionFieldDesc)
	props["kind"] = prop("string", kindFieldDesc)
	return props
}

func gvkObj(group, version, kind string) jsonObj {
	return jsonObj{"group": group, "version": version, "kind": kind}
}

// groupVersionKey names one served group version.
type groupVersionKey struct{ group, version string }
