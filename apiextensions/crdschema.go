package apiextensions

import (
	"encoding/json"
	"fmt"
)

// crdSchema is the OpenAPI v3 schema of apiextensions.k8s.io/v1
// CustomResourceDefinition, in the self-contained form registry.Type.Schema
// takes. It declares every field of kube's v1 Go type, so that
// fieldValidation=Strict refuses a misspelt field (spec.verison) as
// kube-apiserver does, and `kubectl explain crd.spec` has something to
// show. One value is left open on purpose: openAPIV3Schema, a recursive
// JSON schema that this self-contained form cannot describe without $refs
// and that CRD validation checks keyword by keyword anyway.
func crdSchema() json.RawMessage {
	names := func(desc string) node {
		return object(desc, props{
			"plural":     str("The lower-case plural name served in URLs (/apis/<group>/<version>/<plural>); must match the first part of the CRD's name."),
			"singular":   str("The lower-case singular name, an alias on the CLI and in output. Defaults to the lower-cased kind."),
			"shortNames": strList("Short lower-case aliases, such as \"wd\" for widgets, that kubectl accepts in place of the plural."),
			"kind":       str("The CamelCase kind of the objects, found in their kind field."),
			"listKind":   str("The CamelCase kind of lists of the objects. Defaults to <kind>List."),
			"categories": strList("Groups of resources this one belongs to, such as \"all\", so that `kubectl get <category>` lists it."),
		}, "plural", "kind")
	}
	column := object("One extra column of table output.", props{
		"name":        str("The column's human-readable name."),
		"type":        str("The OpenAPI type of the column's values: integer, number, string, boolean or date."),
		"format":      str("An optional OpenAPI format that refines type, such as int32 or byte."),
		"description": str("What the column shows, for humans."),
		"priority":    typed("integer", "int32", "How important the column is: 0 is shown in the standard view, larger numbers only in wider views (-o wide)."),
		"jsonPath":    str("A simple JSONPath, such as .spec.color, evaluated against each object to get the column's value."),
	}, "name", "type", "jsonPath")
	scale := object("Serves /scale for the objects, reading and writing the replica count at the given paths as an autoscaling/v1 Scale.", props{
		"specReplicasPath":   str("The JSONPath under .spec of the desired replica count, e.g. .spec.replicas."),
		"statusReplicasPath": str("The JSONPath under .status of the observed replica count, e.g. .status.replicas."),
		"labelSelectorPath":  str("The JSONPath under .spec or .status of a label selector in string form, reported as Scale's status.selector for autoscalers."),
	}, "specReplicasPath", "statusReplicasPath")
	version := object("One version of the resource.", props{
		"name":               str("The version's name, as in /apis/<group>/<name>/..., e.g. v1 or v2beta1."),
		"served":             boolean("Whether the API serves this version."),
		"storage":            boolean("Whether objects are stored in this version. Exactly one version is the storage version."),
		"deprecated":         boolean("Whether this version is deprecated: requests to it get a warning header."),
		"deprecationWarning": str("The warning sent to clients of a deprecated version, instead of the default one."),
		"schema": object("How objects of this version are validated, pruned and defaulted.", props{
			"openAPIV3Schema": node{"type": "object", "x-kubernetes-preserve-unknown-fields": true,
				"description": "The OpenAPI v3 schema objects of this version must follow. It must be structural: every field typed, as described in the Kubernetes documentation."},
		}),
		"subresources": object("Which subresources objects of this version have.", props{
			// No properties: an object with none keeps none, and
			// an empty properties map would not survive a read
			// into kube-openapi's types (it drops empty maps).
			"status": node{"type": "object",
				"description": "When present (an empty object), objects have a /status subresource: the main resource ignores status changes and /status accepts only them."},
			"scale": scale,
		}),
		"additionalPrinterColumns": list("Extra columns for table output (kubectl get). Without any, an Age column is shown.", column, "atomic"),
		"selectableFields": list("Fields that field selectors may use for this version, beyond metadata.name and metadata.namespace.",
			object("A field usable in field selectors.", props{
				"jsonPath": str("A simple JSONPath to a string, integer or boolean field, such as .spec.color."),
			}, "jsonPath"), "atomic"),
	}, "name", "served", "storage")
	webhook := object("How to call the conversion webhook, when the strategy is Webhook.", props{
		"clientConfig": object("Where the webhook is reached: a URL, or a service in the cluster.", props{
			"url": str("The webhook's https URL."),
			"service": object("A service that serves the webhook.", props{
				"namespace": str("The service's namespace."),
				"name":      str("The service's name."),
				"path":      str("The URL path requests are sent to."),
				"port":      typed("integer", "int32", "The service port; 443 when unset."),
			}, "namespace", "name"),
			"caBundle": typed("string", "byte", "PEM-encoded CA certificates to verify the webhook's serving certificate, base64-encoded."),
		}),
		"conversionReviewVersions": strList("The ConversionReview versions the webhook understands, most preferred first."),
	}, "conversionReviewVersions")
	condition := object("One observation of the definition's state.", props{
		"type":               str("The condition's type: Established, NamesAccepted or Terminating."),
		"status":             str("Whether the condition holds: True, False or Unknown."),
		"lastTransitionTime": typed("string", "date-time", "When the condition last changed status."),
		"reason":             str("A one-word, CamelCase reason for the last transition."),
		"message":            str("A human-readable account of the last transition."),
		"observedGeneration": typed("integer", "int64", "The metadata.generation the condition was set for."),
	}, "type", "status")

	spec := object("What the definition asks for: the resource's group, names, scope and versions.", props{
		"group":    str("The API group the resource is served in (/apis/<group>/...); must match the second part of the CRD's name."),
		"names":    names("The names the resource is asked to be served under."),
		"scope":    str("Whether objects live in a namespace (Namespaced) or not (Cluster)."),
		"versions": list("The versions of the resource, listed in no particular order. Discovery sorts them by Kubernetes' version order.", version, "atomic"),
		"conversion": object("How objects are converted between versions.", props{
			"strategy": str("None (only apiVersion is rewritten) or Webhook (the webhook converts objects between versions)."),
			"webhook":  webhook,
		}, "strategy"),
		"preserveUnknownFields": boolean("Legacy: keep fields the schema does not declare. Must be false in apiextensions.k8s.io/v1; use x-kubernetes-preserve-unknown-fields in the schema instead."),
	}, "group", "names", "scope", "versions")
	status := object("What the server made of the definition.", props{
		"conditions":         list("The latest observations of the definition's state.", condition, "map", "type"),
		"acceptedNames":      names("The names actually served, which differ from spec.names while a requested name conflicts with another resource."),
		"storedVersions":     strList("Every version objects have ever been stored in. A version may only leave spec.versions once it is removed from here, after a storage migration."),
		"observedGeneration": typed("integer", "int64", "The metadata.generation the status reflects."),
	})
	return mustJSON(object(crdDescription, props{
		"apiVersion": str("The versioned schema of this object: apiextensions.k8s.io/v1."),
		"kind":       str("The kind of this object: CustomResourceDefinition."),
		"metadata":   node{"type": "object", "description": "Standard object metadata. The name must be <spec.names.plural>.<spec.group>."},
		"spec":       spec,
		"status":     status,
	}, "spec"))
}

// crdDescription says what a CustomResourceDefinition is, in discovery,
// OpenAPI and kubectl explain.
const crdDescription = "CustomResourceDefinition adds a resource to the API: once established, objects of the kind it names are served under its group, versions and plural, validated by its schemas."

type (
	node  = map[string]any
	props = map[string]node
)

func object(desc string, p props, required ...string) node {
	n := node{"type": "object", "description": desc, "properties": p}
	if len(required) > 0 {
		n["required"] = required
	}
	return n
}

func str(desc string) node     { return node{"type": "string", "description": desc} }
func boolean(desc string) node { return node{"type": "boolean", "description": desc} }

func typed(typ, format, desc string) node {
	return node{"type": typ, "format": format, "description": desc}
}

func strList(desc string) node {
	return list(desc, node{"type": "string"}, "atomic")
}

func list(desc string, items node, listType string, mapKeys ...string) node {
	n := node{"type": "array", "description": desc, "items": items, "x-kubernetes-list-type": listType}
	if len(mapKeys) > 0 {
		n["x-kubernetes-list-map-keys"] = mapKeys
	}
	return n
}

// mustJSON encodes a schema built from maps, strings and slices, which
// cannot fail.
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("apiextensions: encode schema: %v", err))
	}
	return b
}
