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

func propFormat(typ, format, description string) jsonObj {
	return jsonObj{"type": typ, "format": format, "description": description}
}

// stringMapField is a map of strings, as labels and annotations are.
func stringMapField(description string) jsonObj {
	return jsonObj{"type": "object", "description": description, "additionalProperties": jsonObj{"type": "string"}}
}

// arrayField is a list; listType is its x-kubernetes-list-type, mapKeys
// its list-map keys.
func arrayField(items jsonObj, listType, description string, mapKeys ...string) jsonObj {
	s := jsonObj{"type": "array", "items": items, "description": description, "x-kubernetes-list-type": listType}
	if len(mapKeys) > 0 {
		s["x-kubernetes-list-map-keys"] = mapKeys
	}
	return s
}

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

// gvkList is the x-kubernetes-group-version-kind of a definition: the
// group, version and kind each entry names.
func gvkList(kind string, gvs ...groupVersionKey) []any {
	out := make([]any, 0, len(gvs))
	for _, gv := range gvs {
		out = append(out, gvkObj(gv.group, gv.version, kind))
	}
	return out
}

func gvkObj(group, version, kind string) jsonObj {
	return jsonObj{"group": group, "version": version, "kind": kind}
}

// groupVersionKey names one served group version.
type groupVersionKey struct{ group, version string }

// metaDefinitions returns the shared definitions. gvs are the group
// versions the document describes: DeleteOptions and WatchEvent belong to
// every one of them, as kube-apiserver publishes them.
func metaDefinitions(gvs []groupVersionKey) map[string]jsonObj {
	withCore := append([]groupVersionKey{{"", "v1"}}, gvs...)
	withCore = uniqueGroupVersions(withCore)
	return map[string]jsonObj{
		defObjectMeta: objectDef("The metadata every persisted object has, whatever its kind.", jsonObj{
			"name":                       prop("string", "The object's name. "+uniqueNameFieldDesc),
			"generateName":               prop("string", "A prefix from which the server generates a unique name when name is empty, by appending random characters."),
			"namespace":                  prop("string", "The namespace the object lives in; empty for cluster-scoped kinds. Cannot change."),
			"selfLink":                   prop("string", selfLinkDesc),
			"uid":                        prop("string", "The object's identity. "+generatedUIDDesc),
			"resourceVersion":            prop("string", resourceVersionDesc),
			"generation":                 propFormat("integer", "int64", "A sequence number of changes to the desired state (everything but status and metadata), set by the server."),
			"creationTimestamp":          refField(defTime, "When the server created the object. Read-only."),
			"deletionTimestamp":          refField(defTime, "When deletion was requested, set by the server; the object goes once its finalizers are gone. Read-only."),
			"deletionGracePeriodSeconds": propFormat("integer", "int64", "The grace period deletion was requested with, in seconds. Read-only."),
			"labels":                     stringMapField("Key-value pairs for organising and selecting objects (label selectors)."),
			"annotations":                stringMapField("Key-value pairs for tools and controllers to store arbitrary, non-identifying data."),
			"ownerReferences": arrayField(ref(defOwnerReference), "map",
				"The objects this one depends on. When every owner is gone, the garbage collector deletes this object.", "uid"),
			"finalizers": arrayField(jsonObj{"type": "string"}, "set",
				"Names of the cleanups that must finish before the object is removed; deletion waits while any remain."),
			"managedFields": arrayField(ref(defManagedFields), "atomic",
				"Which manager set which fields, by operation; maintained by the server."),
		}),
		defListMeta: objectDef("The metadata of a list response.", jsonObj{
			"selfLink":           prop("string", selfLinkDesc),
			"resourceVersion":    prop("string", "The version of the collection the list was read at; start a watch from here to see every later change."),
			"continue":           prop("string", continueTokenDesc),
			"remainingItemCount": propFormat("integer", "int64", remainingItemsDesc),
			"shardInfo":          refField(defShardInfo, "Set when the list was restricted to one shard of the collection; miniapi never shards lists."),
		}),
		defShardInfo: objectDef("The shard selector a list response was produced with.", jsonObj{
			"selector": prop("string", "The shard selector the server applied."),
		}, "selector"),
		defOwnerReference: xAtomic(objectDef("Identifies an owner of an object, which must be in the same namespace or cluster-scoped.", jsonObj{
			"apiVersion":         prop("string", "API version of the owner."),
			"kind":               prop("string", "Kind of the owner."),
			"name":               prop("string", "Name of the owner."),
			"uid":                prop("string", "UID of the owner."),
			"controller":         prop("boolean", "True for the one owner that manages this object."),
			"blockOwnerDeletion": prop("boolean", "With foreground deletion, the owner is not removed until this object is."),
		}, "apiVersion", "kind", "name", "uid")),
		defManagedFields: objectDef("The fields one manager set with one kind of operation.", jsonObj{
			"manager":     prop("string", "The name of the actor that made the change (the fieldManager parameter)."),
			"operation":   prop("string", "The operation that set the fields: Apply or Update."),
			"apiVersion":  prop("string", "The API version the fields were set in."),
			"time":        refField(defTime, "When the entry last changed."),
			"fieldsType":  prop("string", "The format of fieldsV1; only FieldsV1."),
			"fieldsV1":    refField(defFieldsV1, "The set of fields, in the FieldsV1 format."),
			"subresource": prop("string", "The subresource the fields were set through, empty for the main resource."),
		}),
		defFieldsV1:  {"type": "object", "description": "A set of fields as a trie of JSON objects, keyed by field, map key, list item or value."},
		defTime:      {"type": "string", "format": "date-time", "description": timeFieldDesc},
		defMicroTime: {"type": "string", "format": "date-time", "description": microTimeFieldDesc},
		defStatus: withGVK(objectDef("The answer to a request that failed.", typeMetaFields(jsonObj{
			"metadata": refField(defListMeta, listMetadataDesc),
			"status":   prop("string", "Success or Failure."),
			"message":  prop("string", "A human-readable account of the outcome."),
			"reason":   prop("string", "A machine-readable, CamelCase reason for a failure, e.g. NotFound or Conflict."),
			"details":  refField(defStatusDetails, "More about the failure, depending on reason."),
			"code":     propFormat("integer", "int32", "The HTTP status code of the response."),
		})), gvkList("Status", groupVersionKey{"", "v1"})),
		defStatusDetails: objectDef("Details of a failure: the object it concerns and, for invalid input, each cause.", jsonObj{
			"name":              prop("string", "Name of the object concerned."),
			"group":             prop("string", "API group of the object concerned."),
			"kind":              prop("string", "Kind of the object concerned."),
			"uid":               prop("string", "UID of the object concerned."),
			"causes":            arrayField(ref(defStatusCause), "atomic", "The individual causes, e.g. one per invalid field."),
			"retryAfterSeconds": propFormat("integer", "int32", "When set, the client should wait this long before retrying."),
		}),
		defStatusCause: objectDef("One cause of a failure.", jsonObj{
			"reason":  prop("string", "A machine-readable cause, e.g. FieldValueInvalid."),
			"message": prop("string", "A human-readable account of the cause."),
			"field":   prop("string", "The field the cause concerns, as a path such as spec.containers[0].name."),
		}),
		defDeleteOptions: withGVK(objectDef("Options of a delete request, sent as its body.", typeMetaFields(jsonObj{
			"gracePeriodSeconds": propFormat("integer", "int64", "Seconds to wait before deleting; 0 means at once."),
			"preconditions":      refField(defPreconditions, "What must hold for the delete to proceed; otherwise 409 Conflict."),
			"orphanDependents":   prop("boolean", "Deprecated: use propagationPolicy. true orphans dependents, false deletes them."),
			"propagationPolicy":  prop("string", "What happens to dependents: Orphan leaves them, Background deletes them after the owner, Foreground before it."),
			"dryRun":             arrayField(jsonObj{"type": "string"}, "atomic", "When set to [All], the delete is checked but not carried out."),
			"ignoreStoreReadErrorWithClusterBreakingPotential": prop("boolean",
				"Delete an object even though storage cannot decode it. miniapi stores objects as JSON it has checked, so it has no such objects."),
		})), gvkList("DeleteOptions", withCore...)),
		defPreconditions: objectDef("Conditions on the current object for a delete to proceed.", jsonObj{
			"uid":             prop("string", "The object must have this UID."),
			"resourceVersion": prop("string", "The object must be at this resourceVersion."),
		}),
		defWatchEvent: withGVK(objectDef("One event of a watch stream.", jsonObj{
			"type":   prop("string", "ADDED, MODIFIED, DELETED, BOOKMARK or ERROR."),
			"object": refField(defRawExtension, "The object as of the event: the new state for ADDED and MODIFIED, the last state for DELETED, a Status for ERROR, and only metadata.resourceVersion for BOOKMARK."),
		}, "type", "object"), gvkList("WatchEvent", withCore...)),
		defRawExtension: {"type": "object", "description": rawObjectDesc},
		defPatch:        {"type": "object", "description": "A patch, in the format the request's Content-Type names: JSON patch, merge patch or strategic merge patch."},
	}
}

func withGVK(s jsonObj, gvks []any) jsonObj {
	s["x-kubernetes-group-version-kind"] = gvks
	return s
}

// xAtomic marks an object that server-side apply replaces as a whole.
func xAtomic(s jsonObj) jsonObj {
	s["x-kubernetes-map-type"] = "atomic"
	return s
}

// uniqueGroupVersions drops repeated group versions, keeping the order.
func uniqueGroupVersions(gvs []groupVersionKey) []groupVersionKey {
	seen := map[groupVersionKey]bool{}
	out := gvs[:0:0]
	for _, gv := range gvs {
		if !seen[gv] {
			seen[gv] = true
			out = append(out, gv)
		}
	}
	return out
}
