package endpoints

// The paths kube-apiserver's documents give its discovery and version
// endpoints (and, where the server issues ServiceAccount tokens, the
// issuer's OpenID discovery endpoints), with kube's operation IDs and
// tags: /api/ and /apis/ (the versions and groups served), /apis/<g>/
// (a group), /api/v1/ and /apis/<g>/<v>/ (a group version's resources),
// /version/. Each has its own v3 document, keyed as kube-apiserver's
// index keys it ("api", "apis", "apis/apps", "version"), but the group
// versions' paths, which sit in their group version's document.

// Names of the discovery definitions, kube's.
const (
	defAPIVersions     = metaV1 + "APIVersions"
	defAPIGroupList    = metaV1 + "APIGroupList"
	defAPIGroup        = metaV1 + "APIGroup"
	defAPIResourceList = metaV1 + "APIResourceList"
	defVersionInfo     = "io.k8s.apimachinery.pkg.version.Info"
)

// discoveryModels are the discovery definitions the documents use.
var discoveryModels = []string{defAPIVersions, defAPIGroupList, defAPIGroup, defAPIResourceList, defVersionInfo}

// discoveryMediaTypes are those discovery answers in.
var discoveryMediaTypes = builtinObjectMediaTypes

// discoveryDoc is one discovery path and the v3 document holding it.
type discoveryDoc struct {
	key  string // the v3 index key
	tag  string
	def  string // the definition it answers, "" for a string
	item pathItem
}

// discoveryPathDocs are the discovery, version and issuer paths of the
// groups served, each with its own document.
func discoveryPathDocs(groups []servedGroup, issuer bool) []discoveryDoc {
	get := func(path, id, description, def string, types []string) pathItem {
		return pathItem{path: path, plain: true, ops: []operation{
			{method: "get", id: id, description: description, consumes: types,
				responses: []opResponse{{"200", "OK", def}}, produces: types},
		}}
	}
	docs := []discoveryDoc{
		{key: "api", tag: "core", def: defAPIVersions,
			item: get("/api/", "getCoreAPIVersions", "list the versions of the core group (/api) served", defAPIVersions, discoveryMediaTypes)},
		{key: "apis", tag: "apis", def: defAPIGroupList,
			item: get("/apis/", "getAPIVersions", "list the API groups (/apis) served and their versions", defAPIGroupList, discoveryMediaTypes)},
	}
	for _, g := range groups {
		if g.name == "" {
			continue
		}
		docs = append(docs, discoveryDoc{key: "apis/" + g.name, tag: lowerFirst(friendlyGroup(g.name)), def: defAPIGroup,
			item: get("/apis/"+g.name+"/", "get"+friendlyGroup(g.name)+"APIGroup", "read the group's served versions and its preferred one", defAPIGroup, discoveryMediaTypes)})
	}
	docs = append(docs, discoveryDoc{key: "version", tag: "version", def: defVersionInfo,
		item: get("/version/", "getCodeVersion", "read the server's version and the Go version and platform it was built with", defVersionInfo, []string{"application/json"})})
	if issuer {
		// Their answers are the issuer's own JSON, which kube does
		// not model: a string.
		config := get("/.well-known/openid-configuration/", "getServiceAccountIssuerOpenIDConfiguration",
			"read the ServiceAccount token issuer's OpenID Connect discovery document", "", []string{"application/json"})
		keys := get("/openid/v1/jwks/", "getServiceAccountIssuerOpenIDKeyset",
			"read the JSON Web Key Set that verifies the ServiceAccount tokens the issuer signs", "", []string{"application/jwk-set+json"})
		config.ops[0].consumes, keys.ops[0].consumes = []string{}, []string{}
		docs = append(docs,
			discoveryDoc{key: ".well-known/openid-configuration", tag: "WellKnown", item: config},
			discoveryDoc{key: "openid/v1/jwks", tag: "openid", item: keys})
	}
	return docs
}

// resourcesPath is the path of a group version's list of resources,
// in that group version's document.
func resourcesPath(group, version string) pathItem {
	path := "/apis/" + group + "/" + version + "/"
	if group == "" {
		path = "/api/" + version + "/"
	}
	return pathItem{path: path, plain: true, ops: []operation{
		{method: "get", id: "get" + friendlyGroup(group) + upperFirst(version) + "APIResources",
			description: "list the group version's resources, their verbs and subresources", consumes: discoveryMediaTypes,
			responses: []opResponse{{"200", "OK", defAPIResourceList}}, produces: discoveryMediaTypes},
	}}
}

// resourcesTag is the tag of a group version's operations.
func resourcesTag(group, version string) string {
	return lowerFirst(friendlyGroup(group)) + "_" + version
}

// v3DiscoveryDocument is the v3 document of one discovery path: the
// path and the definitions it refers to.
func v3DiscoveryDocument(d discoveryDoc, kube map[string]any, opts docOptions) jsonObj {
	components := jsonObj{} // as kube's, without schemas when none is used
	if d.def != "" {
		components["schemas"] = jsonObj(closure(kube, v3RefPrefix, d.def))
	}
	if opts.bearer {
		components["securitySchemes"] = bearerScheme()
	}
	return jsonObj{
		"openapi":    "3.0.0",
		"info":       openAPIInfo(),
		"paths":      jsonObj{d.item.path: v3PathItem(d.item, d.tag, nil)},
		"components": components,
	}
}
