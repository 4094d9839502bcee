package registry

import "encoding/json"

// The OpenAPI v3 schemas and descriptions of the built-in kinds, with the
// fields of their k8s.io/api Go types. They drive `kubectl explain`,
// kubectl's client-side validation and server-side field validation, so
// every field the Go type has is here and nothing else.
//
// List and map types follow Kubernetes' markers (x-kubernetes-list-type,
// x-kubernetes-list-map-keys, x-kubernetes-map-type). Patch strategies
// (x-kubernetes-patch-strategy) are left out on purpose: miniapi applies
// a strategic merge patch as a merge patch, and a client that read merge
// keys from the schema would send list-merge directives the server does
// not honour.

const (
	namespaceDescription = "Namespace is a named scope for namespaced objects: names are unique within one, and deleting it deletes everything inside."
	configMapDescription = "ConfigMap holds non-secret configuration as key-value pairs, for workloads to read as files, environment variables or through the API."
	secretDescription    = "Secret holds a small amount of sensitive data, such as a password, a token or a key, as base64-encoded values."
	eventDescription     = "Event is a report of something that happened to an object, such as a state change or an error, kept for a limited time."
	leaseDescription     = "Lease is a time-limited claim on a shared resource, used for leader election and heartbeats."
)

// namespaceSchema describes core/v1 Namespace.
func namespaceSchema() json.RawMessage {
	condition := object("One observation of the namespace's state.", map[string]schemaNode{
		"type":               str("The kind of condition, e.g. NamespaceDeletionContentFailure."),
		"status":             str("Whether the condition holds: True, False or Unknown."),
		"lastTransitionTime": timestamp("When the condition last changed status."),
		"reason":             str("A one-word, CamelCase reason for the last transition."),
		"message":            str("A human-readable account of the last transition."),
	}, "type", "status")
	return kindSchema(namespaceDescription, map[string]schemaNode{
		"spec": object("What the namespace should be.", map[string]schemaNode{
			"finalizers": list("Names of the finalizers that must finish before the namespace is removed. Set by the server; changed only through the finalize subresource.",
				schemaNode{"type": "string"}, "atomic"),
		}),
		"status": object("What the namespace is, as last observed by the server.", map[string]schemaNode{
			"phase": enumStr("The lifecycle phase: Active while in use, Terminating once deletion has started and its contents are being removed.",
				namespaceActive, namespaceTerminating),
			"conditions": list("The latest observations of the namespace's state, one per condition type.", condition, "map", "type"),
		}),
	})
}

// configMapSchema describes core/v1 ConfigMap.
func configMapSchema() json.RawMessage {
	return kindSchema(configMapDescription, map[string]schemaNode{
		"data":       stringMap("Configuration values as UTF-8 strings. Keys are made of alphanumerics, '-', '_' or '.', and must not also appear in binaryData."),
		"binaryData": byteMap("Configuration values that are not UTF-8, base64-encoded. Keys follow the rules of data and must not also appear there."),
		"immutable":  boolean("When true, data and binaryData can no longer change; the ConfigMap can only be deleted and re-created. Once set it cannot be unset."),
	})
}

// secretSchema describes core/v1 Secret.
func secretSchema() json.RawMessage {
	return kindSchema(secretDescription, map[string]schemaNode{
		"data":       byteMap("Secret values, base64-encoded. Keys are made of alphanumerics, '-', '_' or '.'."),
		"stringData": stringMap("Write-only convenience: plain string values merged into data on write, winning over data for the same key. Never returned by the server."),
		"type":       str("How the data is to be used, which decides the keys it must hold, e.g. Opaque (the default, no rules) or kubernetes.io/tls. Cannot change once set."),
		"immutable":  boolean("When true, data can no longer change; the Secret can only be deleted and re-created. Once set it cannot be unset."),
	})
}

// objectReferenceSchema is core/v1 ObjectReference, inlined where an
// Event uses it.
func objectReferenceSchema(description string) schemaNode {
	return atomicStruct(object(description, map[string]schemaNode{
		"kind":            str("Kind of the referenced object."),
		"namespace":       str("Namespace of the referenced object, empty for cluster-scoped objects."),
		"name":            str("Name of the referenced object."),
		"uid":             str("UID of the referenced object."),
		"apiVersion":      str("API version of the referenced object."),
		"resourceVersion": str("The resourceVersion of the referenced object the reference was made from, if any."),
		"fieldPath":       str("A path to a part of the object rather than the whole, e.g. spec.containers{name}."),
	}))
}

// eventSchema describes core/v1 Event.
func eventSchema() json.RawMessage {
	return kindSchema(eventDescription, map[string]schemaNode{
		"involvedObject": objectReferenceSchema("The object the event is about."),
		"reason":         str("A short, machine-readable, CamelCase cause of the event, e.g. FailedMount."),
		"message":        str("A human-readable description of what happened."),
		"source": object("The component that reported the event (older reporting style; see reportingComponent).", map[string]schemaNode{
			"component": str("The reporting component."),
			"host":      str("The node the reporting component runs on."),
		}),
		"firstTimestamp": timestamp("When the event was first recorded."),
		"lastTimestamp":  timestamp("When the event was most recently recorded."),
		"count":          int32Field("How many times the event has occurred."),
		"type":           str("The severity of the event: Normal or Warning."),
		"eventTime":      microTimestamp("When the event was first observed, with microsecond precision (newer reporting style)."),
		"series": object("Data about a series of repeated events, for events reported as a series.", map[string]schemaNode{
			"count":            int32Field("How many occurrences the series has had so far."),
			"lastObservedTime": microTimestamp("When the most recent occurrence was observed."),
		}),
		"action":             str("What the reporting component did or failed to do about the involved object."),
		"related":            objectReferenceSchema("A second object the event concerns, if any."),
		"reportingComponent": str("The controller that emitted the event, e.g. kubernetes.io/kubelet."),
		"reportingInstance":  str("The instance of the reporting controller, e.g. a node or pod name."),
	}, "metadata", "involvedObject")
}

// leaseSchema describes coordination.k8s.io/v1 Lease.
func leaseSchema() json.RawMessage {
	return kindSchema(leaseDescription, map[string]schemaNode{
		"spec": object("The state of the lease.", map[string]schemaNode{
			"holderIdentity":       str("Who holds the lease now."),
			"leaseDurationSeconds": int32Field("How long, after renewTime, other candidates must wait before they may take the lease over."),
			"acquireTime":          microTimestamp("When the current holder acquired the lease."),
			"renewTime":            microTimestamp("When the current holder last renewed the lease."),
			"leaseTransitions":     int32Field("How many times the lease has changed holders."),
			"strategy":             str("The coordinated leader election strategy that picks the next holder, e.g. OldestEmulationVersion."),
			"preferredHolder":      str("The candidate the election strategy would like to hold the lease next."),
		}),
	})
}
