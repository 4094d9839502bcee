package endpoints

import (
	"slices"
	"strings"

	"github.com/miniapi/miniapi/registry"
)

// The paths and operations of one served type, in a neutral form that
// openapi_doc.go renders as OpenAPI v3 and as Swagger 2.0.
// They follow kube-apiserver's layout: operation IDs such as
// listCoreV1NamespacedConfigMap, the x-kubernetes-action and
// x-kubernetes-group-version-kind extensions on every operation (kubectl
// finds a kind's operations by them), and the query parameters each verb
// takes.

// param is a path or query parameter.
type param struct {
	name, in, typ, description string
	required                   bool
}

// operation is one HTTP method on one path.
type operation struct {
	method      string // lower case, as OpenAPI keys operations
	id          string
	action      string // x-kubernetes-action
	description string
	params      []param
	// body is the definition of the request body, "" for none;
	// bodyTypes are the media types it may be sent as.
	body      string
	bodyTypes []string
	// consumes, for an operation without a body, is what Swagger 2.0
	// says it consumes: nil for "*/*", empty for nothing.
	consumes  []string
	responses []opResponse
	// produces are the media types of the responses.
	produces []string
}

type opResponse struct {
	code, description string
	schema            string // definition name
}

// pathItem is one URL path with its operations.
type pathItem struct {
	path   string
	params []param // common to every operation of the path
	ops    []operation
	// gvk, when set, is the x-kubernetes-group-version-kind of the
	// operations instead of the type's own (a /scale's Scale).
	gvk jsonObj
	// plain operations carry no x-kubernetes-action or kind: they
	// serve no resource (discovery, /version).
	plain bool
}

// Query and path parameters, described in our words.
var (
	paramPretty          = param{name: "pretty", in: "query", typ: "string", description: "If 'true', the response is indented for reading."}
	paramNamespace       = param{name: "namespace", in: "path", typ: "string", required: true, description: "The namespace the objects live in."}
	paramName            = param{name: "name", in: "path", typ: "string", required: true, description: "The name of the object."}
	paramDryRun          = param{name: "dryRun", in: "query", typ: "string", description: "When set to All, the request is checked and answered as usual but nothing is stored."}
	paramFieldManager    = param{name: "fieldManager", in: "query", typ: "string", description: "The name of the actor making the change, recorded in managedFields; at most 128 printable characters."}
	paramFieldValidation = param{name: "fieldValidation", in: "query", typ: "string", description: "What to do with fields the kind's schema does not declare and fields given twice: Ignore drops them silently; Warn (the default) drops them and names each in a Warning header; Strict refuses the request with 400 Bad Request."}
	paramForce           = param{name: "force", in: "query", typ: "boolean", description: "Server-side apply only: take over fields other managers own. Must be unset for other patch types."}
	paramGracePeriod     = param{name: "gracePeriodSeconds", in: "query", typ: "integer", description: "Seconds to wait before deleting; 0 means at once."}
	paramOrphan          = param{name: "orphanDependents", in: "query", typ: "boolean", description: "Deprecated: use propagationPolicy. true orphans dependents, false deletes them."}
	paramPropagation     = param{name: "propagationPolicy", in: "query", typ: "string", description: "What happens to dependents: Orphan leaves them; Background (the default) deletes them after the owner; Foreground deletes them before the owner goes."}

	paramWatchBookmarks = param{name: "allowWatchBookmarks", in: "query", typ: "boolean", description: "Ask for BOOKMARK events, which carry only a newer resourceVersion so that a re-watch can resume from it. Ignored unless watching."}
	paramContinue       = param{name: "continue", in: "query", typ: "string", description: "The continue token of the previous page of the same list, to get the next page. An expired token answers 410 Gone."}
	paramFieldSelector  = param{name: "fieldSelector", in: "query", typ: "string", description: "Only objects whose fields match, e.g. metadata.name=x; which fields can be selected depends on the kind."}
	paramLabelSelector  = param{name: "labelSelector", in: "query", typ: "string", description: "Only objects whose labels match, e.g. app=web,tier!=db."}
	paramLimit          = param{name: "limit", in: "query", typ: "integer", description: "The largest number of items to return; when more exist, the list's metadata.continue is set to fetch the rest. Not for watches."}
	paramRV             = param{name: "resourceVersion", in: "query", typ: "string", description: "Which version of the data to read from: unset for the latest, \"0\" for whatever the server has at hand, or a version from an earlier response (for watches, where to start)."}
	paramRVMatch        = param{name: "resourceVersionMatch", in: "query", typ: "string", description: "How resourceVersion applies to a list: NotOlderThan or Exact."}
	paramInitialEvents  = param{name: "sendInitialEvents", in: "query", typ: "boolean", description: "For a watch: start with an ADDED event for every current object, then a BOOKMARK annotated k8s.io/initial-events-end."}
	paramTimeout        = param{name: "timeoutSeconds", in: "query", typ: "integer", description: "How long the list or watch may take at most, whether or not anything happens."}
	paramWatch          = param{name: "watch", in: "query", typ: "boolean", description: "Instead of a list, stream the changes to the matching objects as watch events."}
)

// listParams are the parameters of list and watch.
var listParams = []param{paramWatchBookmarks, paramContinue, paramFieldSelector, paramLabelSelector, paramLimit,
	paramRV, paramRVMatch, paramInitialEvents, paramTimeout, paramWatch}

// Media types of request bodies and responses.
var (
	objectMediaTypes = []string{"application/json", "application/yaml"}
	listMediaTypes   = []string{"application/json", "application/yaml", "application/json;stream=watch"}
	// The built-in kinds also speak protobuf, as kube-apiserver's do.
	builtinObjectMediaTypes = []string{"application/json", "application/yaml", "application/vnd.kubernetes.protobuf"}
	builtinListMediaTypes   = []string{"application/json", "application/yaml", "application/json;stream=watch",
		"application/vnd.kubernetes.protobuf", "application/vnd.kubernetes.protobuf;stream=watch"}
	// patchTypes are the patches every type accepts, server-side apply
	// included; built-in kinds also take strategic merge patches, which
	// is how kubectl tells that it may send one.
	patchTypes = []string{registry.PatchJSON, registry.PatchMerge, registry.PatchApply}
)

// typeNames are the names a type's operations and definitions use.
type typeNames struct {
	kindDef, listDef string // definition names
	opKind           string // e.g. "CoreV1NamespacedConfigMap", the verb left out
	gv, scoped       string // opKind's two parts, "CoreV1" and "NamespacedConfigMap"
	clusterKind      string // e.g. "CoreV1ConfigMap", for the all-namespaces paths
	collectionKind   string // e.g. "CoreV1CollectionNamespacedConfigMap", for deletecollection
	tag              string // e.g. "core_v1"
}

// typePaths returns the paths that serve res; kube holds kube's
// definitions (kubeModels), which its streaming subresources' query
// parameters are read from.
func typePaths(res *registry.Resource, n typeNames, kube map[string]any) []pathItem {
	t := &res.Type
	prefix := "/apis/" + t.Group + "/" + t.Version
	if t.Group == "" {
		prefix = "/api/" + t.Version
	}
	collection := prefix + "/" + t.Plural
	watchCollection := prefix + "/watch/" + t.Plural
	scopeParams := []param{paramPretty}
	if t.Namespaced {
		collection = prefix + "/namespaces/{namespace}/" + t.Plural
		watchCollection = prefix + "/watch/namespaces/{namespace}/" + t.Plural
		scopeParams = []param{paramNamespace, paramPretty}
	}
	named := append([]param{paramName}, scopeParams...)
	patches, objectTypes, listTypes := patchTypes, objectMediaTypes, listMediaTypes
	if isBuiltin(res) {
		patches = append(append([]string(nil), patchTypes...), registry.PatchStrategicMerge)
		objectTypes, listTypes = builtinObjectMediaTypes, builtinListMediaTypes
	}
	kind := t.Kind
	ok := func(def string) []opResponse { return []opResponse{{"200", "OK", def}} }
	written := func(created bool) []opResponse {
		r := []opResponse{{"200", "OK", n.kindDef}, {"201", "Created", n.kindDef}}
		if created {
			r = append(r, opResponse{"202", "Accepted", n.kindDef})
		}
		return r
	}
	// A delete is documented as kube-apiserver documents it: answering
	// the deleted object where the kind's storage says it does, a Status
	// otherwise, and for a collection always (whatever the answer).
	// kube's namespace storage answers the object without saying so.
	deleted := defStatus
	if t.ReturnDeletedObject && (t.Group != "" || t.Plural != "namespaces") {
		deleted = n.kindDef
	}
	items := []pathItem{
		{path: collection, params: scopeParams, ops: []operation{
			{method: "get", id: "list" + n.opKind, action: "list", description: "list " + kind + " objects, or watch them with watch=true",
				params: listParams, responses: ok(n.listDef), produces: listTypes},
			{method: "post", id: "create" + n.opKind, action: "post", description: "create a " + kind,
				params: []param{paramDryRun, paramFieldManager, paramFieldValidation},
				body:   n.kindDef, bodyTypes: objectTypes, responses: written(true), produces: objectTypes},
			{method: "delete", id: "delete" + n.collectionKind, action: "deletecollection", description: "delete every matching " + kind,
				params: []param{paramContinue, paramDryRun, paramFieldSelector, paramGracePeriod, paramLabelSelector, paramLimit, paramOrphan, paramPropagation, paramRV, paramRVMatch, paramInitialEvents, paramTimeout},
				body:   defDeleteOptions, bodyTypes: objectMediaTypes, responses: ok(defStatus), produces: objectTypes},
		}},
		{path: collection + "/{name}", params: named, ops: []operation{
			{method: "get", id: "read" + n.opKind, action: "get", description: "read the named " + kind,
				responses: ok(n.kindDef), produces: objectTypes},
			{method: "put", id: "replace" + n.opKind, action: "put", description: "replace the named " + kind,
				params: []param{paramDryRun, paramFieldManager, paramFieldValidation},
				body:   n.kindDef, bodyTypes: objectTypes, responses: written(false), produces: objectTypes},
			{method: "patch", id: "patch" + n.opKind, action: "patch", description: "partially update the named " + kind,
				params: []param{paramDryRun, paramFieldManager, paramFieldValidation, paramForce},
				body:   defPatch, bodyTypes: patches, responses: written(false), produces: objectTypes},
			{method: "delete", id: "delete" + n.opKind, action: "delete", description: "delete the named " + kind,
				params: []param{paramDryRun, paramGracePeriod, paramOrphan, paramPropagation},
				body:   defDeleteOptions, bodyTypes: objectMediaTypes,
				responses: []opResponse{{"200", "OK", deleted}, {"202", "Accepted", deleted}}, produces: objectTypes},
		}},
	}
	if !registry.SupportsDeleteCollection(t) {
		// Namespaces: no deletecollection, as kube-apiserver.
		items[0].ops = items[0].ops[:2]
	}
	if registry.HasStatus(t) {
		items = append(items, pathItem{path: collection + "/{name}/status", params: named, ops: []operation{
			{method: "get", id: "read" + n.opKind + "Status", action: "get", description: "read the status of the named " + kind,
				responses: ok(n.kindDef), produces: objectTypes},
			{method: "put", id: "replace" + n.opKind + "Status", action: "put", description: "replace the status of the named " + kind,
				params: []param{paramDryRun, paramFieldManager, paramFieldValidation},
				body:   n.kindDef, bodyTypes: objectTypes, responses: written(false), produces: objectTypes},
			{method: "patch", id: "patch" + n.opKind + "Status", action: "patch", description: "partially update the status of the named " + kind,
				params: []param{paramDryRun, paramFieldManager, paramFieldValidation, paramForce},
				body:   defPatch, bodyTypes: patches, responses: written(false), produces: objectTypes},
		}})
	}
	if registry.HasScale(t) {
		items = append(items, scalePathItem(named, collection, n, kind, patches))
	}
	items = append(items, subresourcePaths(res, n, named, collection, patches, objectTypes, kube)...)
	watchParams := append(append([]param(nil), listParams...), scopeParams...)
	items = append(items,
		pathItem{path: watchCollection, params: watchParams, ops: []operation{
			{method: "get", id: "watch" + n.opKind + "List", action: "watchlist",
				description: "watch changes to " + kind + " objects; deprecated: use watch=true on the list",
				responses:   ok(defWatchEvent), produces: listTypes},
		}},
		pathItem{path: watchCollection + "/{name}", params: append(append([]param(nil), listParams...), named...), ops: []operation{
			{method: "get", id: "watch" + n.opKind, action: "watch",
				description: "watch changes to the named " + kind + "; deprecated: use watch=true on the list with a metadata.name field selector",
				responses:   ok(defWatchEvent), produces: listTypes},
		}},
	)
	if t.Namespaced {
		// A namespaced kind is also listed and watched across namespaces.
		items = append(items,
			pathItem{path: prefix + "/" + t.Plural, params: []param{paramPretty}, ops: []operation{
				{method: "get", id: "list" + n.clusterKind + "ForAllNamespaces", action: "list",
					description: "list " + kind + " objects of every namespace, or watch them with watch=true",
					params:      listParams, responses: ok(n.listDef), produces: listTypes},
			}},
			pathItem{path: prefix + "/watch/" + t.Plural, params: append(append([]param(nil), listParams...), paramPretty), ops: []operation{
				{method: "get", id: "watch" + n.clusterKind + "ListForAllNamespaces", action: "watchlist",
					description: "watch changes to " + kind + " objects of every namespace; deprecated: use watch=true on the list",
					responses:   ok(defWatchEvent), produces: listTypes},
			}},
		)
	}
	if v, ok := t.Strategy.(registry.Virtual); ok {
		items = onlyVerbs(items, v.Verbs())
	}
	return items
}

// onlyVerbs keeps the operations of a resource served without storage
// (bindings, componentstatuses) whose verbs it serves.
func onlyVerbs(items []pathItem, verbs []string) []pathItem {
	action := map[string]string{"post": "create", "get": "get", "list": "list", "put": "update", "patch": "patch",
		"delete": "delete", "deletecollection": "deletecollection", "watch": "watch", "watchlist": "watch"}
	var out []pathItem
	for _, item := range items {
		var ops []operation
		for _, op := range item.ops {
			if slices.Contains(verbs, action[op.action]) {
				ops = append(ops, op)
			}
		}
		if len(ops) > 0 {
			item.ops = ops
			out = append(out, item)
		}
	}
	return out
}

// namesOf returns the names of a type's definitions and operations.
func namesOf(res *registry.Resource) typeNames {
	t := &res.Type
	gv := friendlyGroup(t.Group) + upperFirst(t.Version)
	n := typeNames{
		kindDef:     definitionName(res, t.Kind),
		listDef:     definitionName(res, t.ListKind),
		clusterKind: gv + t.Kind,
		tag:         lowerFirst(friendlyGroup(t.Group)) + "_" + t.Version,
	}
	scoped := t.Kind
	if t.Namespaced {
		scoped = "Namespaced" + t.Kind
	}
	n.opKind, n.collectionKind = gv+scoped, gv+"Collection"+scoped
	n.gv, n.scoped = gv, scoped
	return n
}

// isBuiltin reports whether res is one of the kinds compiled into
// miniapi, those with Kubernetes' Go types. The registry marks them by
// accepting strategic merge patches, which only they do.
func isBuiltin(res *registry.Resource) bool {
	return res.Store != nil && res.Store.SupportsStrategicMerge()
}

// definitionName names the definition of kind in res's group version as
// kube-apiserver does: io.k8s.api.<group>.<version>.<Kind> for the
// built-in kinds (the Go package path of their types, "core" for the core
// group), and the reversed group for the others, as for custom resources
// (com.example.v1.Widget).
func definitionName(res *registry.Resource, kind string) string {
	t := &res.Type
	if m, ok := t.Strategy.(registry.OpenAPIModeler); ok {
		k, l := m.OpenAPIModels()
		if kind == t.ListKind {
			return l
		}
		return k
	}
	if isBuiltin(res) || t.Group == "" {
		return kubeDefinition(t.Group, t.Version, kind)
	}
	labels := strings.Split(t.Group, ".")
	for i, j := 0, len(labels)-1; i < j; i, j = i+1, j-1 {
		labels[i], labels[j] = labels[j], labels[i]
	}
	return strings.Join(labels, ".") + "." + t.Version + "." + kind
}

// friendlyGroup is the group as operation IDs spell it: "Core" for the
// core group, a Kubernetes group without its .k8s.io suffix, each part
// capitalised ("coordination.k8s.io" → "Coordination", "example.com" →
// "ExampleCom").
func friendlyGroup(group string) string {
	if group == "" {
		return "Core"
	}
	group = strings.TrimSuffix(group, ".k8s.io")
	var b strings.Builder
	for part := range strings.FieldsFuncSeq(group, func(r rune) bool { return r == '.' || r == '-' }) {
		b.WriteString(upperFirst(part))
	}
	return b.String()
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
