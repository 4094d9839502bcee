package endpoints

import (
	"slices"
	"strings"

	"github.com/miniapi/miniapi/registry"
)

// The paths of the subresources other than status and scale, laid out as
// kube-apiserver's installer lays them out:
//
//   - a view of the parent written through its own rules (a pod's
//     ephemeralcontainers and resize, a namespace's finalize, a
//     CertificateSigningRequest's approval): read, replace and patch of
//     the parent's kind, as the subresource's verbs allow;
//   - a create of another kind acting on the parent (a pod's binding and
//     eviction, a ServiceAccount's token): create<...><Subresource> with
//     that kind's definition;
//   - a streaming subresource (registry.ConnectDescriber): connect<...>
//     operations per HTTP method, whose query parameters are the fields of
//     its options kind, taken from kube's definition of it, plus a
//     .../{path} item for a proxy; a pod's log is a read answering a
//     string.

// subresourcePaths returns the paths of res's subresources other than
// status and scale. kube holds kube's definitions, the options kinds'
// among them (subresourceModels).
func subresourcePaths(res *registry.Resource, n typeNames, named []param, collection string, patches, objectTypes []string, kube map[string]any) []pathItem {
	t := &res.Type
	var items []pathItem
	for _, sr := range registry.Subresources(t) {
		if sr.Name == registry.SubresourceStatus || sr.Name == registry.SubresourceScale {
			continue
		}
		path := collection + "/{name}/" + sr.Name
		sub := upperFirst(sr.Name)
		switch sr.Serve {
		case registry.ServeUpdate:
			var ops []operation
			for _, verb := range sr.Verbs {
				switch verb {
				case "get":
					ops = append(ops, operation{method: "get", id: "read" + n.opKind + sub, action: "get",
						description: "read " + sr.Name + " of the named " + t.Kind,
						responses:   []opResponse{{"200", "OK", n.kindDef}}, produces: objectTypes})
				case "update":
					ops = append(ops, operation{method: "put", id: "replace" + n.opKind + sub, action: "put",
						description: "replace " + sr.Name + " of the named " + t.Kind,
						params:      []param{paramDryRun, paramFieldManager, paramFieldValidation},
						body:        n.kindDef, bodyTypes: objectTypes,
						responses: []opResponse{{"200", "OK", n.kindDef}, {"201", "Created", n.kindDef}}, produces: objectTypes})
				case "patch":
					ops = append(ops, operation{method: "patch", id: "patch" + n.opKind + sub, action: "patch",
						description: "partially update " + sr.Name + " of the named " + t.Kind,
						params:      []param{paramDryRun, paramFieldManager, paramFieldValidation, paramForce},
						body:        defPatch, bodyTypes: patches,
						responses: []opResponse{{"200", "OK", n.kindDef}, {"201", "Created", n.kindDef}}, produces: objectTypes})
				}
			}
			if len(ops) > 0 {
				items = append(items, pathItem{path: path, params: named, ops: ops})
			}
		case registry.ServeCreate:
			group, version, kind := subresourceKind(t, sr)
			def := kubeDefinition(group, version, kind)
			items = append(items, pathItem{path: path, params: named, gvk: gvkObj(group, version, kind), ops: []operation{
				{method: "post", id: "create" + n.opKind + sub, action: "post",
					description: "create " + sr.Name + " of the named " + t.Kind,
					params:      []param{paramDryRun, paramFieldManager, paramFieldValidation},
					body:        def, bodyTypes: objectTypes,
					responses: []opResponse{{"200", "OK", def}, {"201", "Created", def}, {"202", "Accepted", def}}, produces: objectTypes},
			}})
		case registry.ServeConnect:
			items = append(items, connectPaths(res, n, sr, named, path, objectTypes, kube)...)
		}
	}
	return items
}

// connectPaths are the paths of a streaming subresource.
func connectPaths(res *registry.Resource, n typeNames, sr registry.Subresource, named []param, path string, objectTypes []string, kube map[string]any) []pathItem {
	t := &res.Type
	cd, ok := t.Strategy.(registry.ConnectDescriber)
	if !ok {
		return nil
	}
	d, ok := cd.DescribeConnect(sr.Name)
	if !ok {
		return nil
	}
	sub := upperFirst(sr.Name)
	params := append(append([]param(nil), named...), optionParams(kube[optionsDefinition(t, d)])...)
	if d.Produces != nil {
		// A read answering a stream, in the kind's own media types too.
		produces := append(append([]string(nil), d.Produces...), objectTypes...)
		return []pathItem{{path: path, params: params, ops: []operation{
			{method: "get", id: "read" + n.opKind + sub, action: "get",
				description: "read " + sr.Name + " of the named " + t.Kind,
				responses:   []opResponse{{"200", "OK", ""}}, produces: produces},
		}}}
	}
	// A connection's answer is the backend's: there is nothing to
	// pretty-print.
	params = slices.DeleteFunc(params, func(p param) bool { return p == paramPretty })
	gvk := gvkObj(t.Group, t.Version, d.Options)
	ops := func(withPath string) []operation {
		var out []operation
		for _, m := range d.Methods {
			method := upperFirst(strings.ToLower(m))
			out = append(out, operation{method: strings.ToLower(m), id: "connect" + n.gv + method + n.scoped + sub + withPath, action: "connect",
				description: "connect " + m + " requests to " + sr.Name + " of the named " + t.Kind,
				responses:   []opResponse{{"200", "OK", ""}}, produces: []string{"*/*"}})
		}
		return out
	}
	items := []pathItem{{path: path, params: params, gvk: gvk, ops: ops("")}}
	if d.Path {
		withPath := append(append([]param(nil), params...), paramSubpath)
		items = append(items, pathItem{path: path + "/{path}", params: withPath, gvk: gvk, ops: ops("WithPath")})
	}
	return items
}

// paramSubpath is the path after a proxy subresource.
var paramSubpath = param{name: "path", in: "path", typ: "string", required: true, description: "The path to the resource behind the proxy."}

// optionParams are the query parameters an options kind's definition
// (OpenAPI v3 or Swagger 2.0) says: one per field of a plain type, or a
// list of one, named and described as the definition's properties are;
// kube's installer leaves out struct fields (a log's sinceTime) and
// apiVersion and kind.
func optionParams(def any) []param {
	schema, _ := def.(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	var out []param
	for name, p := range props {
		prop, _ := p.(map[string]any)
		typ, _ := prop["type"].(string)
		if typ == "array" {
			items, _ := prop["items"].(map[string]any)
			typ, _ = items["type"].(string)
		}
		if typ == "" || typ == "object" || name == "apiVersion" || name == "kind" {
			continue
		}
		desc, _ := prop["description"].(string)
		out = append(out, param{name: name, in: "query", typ: typ, description: desc})
	}
	slices.SortFunc(out, func(a, b param) int { return strings.Compare(a.name, b.name) })
	return out
}

// subresourceModels are the definitions of kube's that res's
// subresources need: the kinds its creates take (bodies, published in
// the documents) and the options kinds of its streaming subresources
// (options, read for their query parameters only).
func subresourceModels(res *registry.Resource) (bodies, options []string) {
	t := &res.Type
	for _, sr := range registry.Subresources(t) {
		switch sr.Serve {
		case registry.ServeCreate:
			bodies = append(bodies, kubeDefinition(subresourceKind(t, sr)))
		case registry.ServeConnect:
			if cd, ok := t.Strategy.(registry.ConnectDescriber); ok {
				if d, ok := cd.DescribeConnect(sr.Name); ok {
					options = append(options, optionsDefinition(t, d))
				}
			}
		}
	}
	return bodies, options
}

// optionsDefinition names the definition of a streaming subresource's
// options kind, in its parent's group version.
func optionsDefinition(t *registry.Type, d registry.ConnectDescription) string {
	return kubeDefinition(t.Group, t.Version, d.Options)
}

// kubeDefinition names the definition of a built-in kind as kube names
// it: io.k8s.api.<group's first label, "core" for the core
// group>.<version>.<Kind>.
func kubeDefinition(group, version, kind string) string {
	pkg, _, _ := strings.Cut(group, ".")
	if pkg == "" {
		pkg = "core"
	}
	return "io.k8s.api." + pkg + "." + version + "." + kind
}

// subresourceKind is the group, version and kind a subresource takes
// and answers: its own, or where it leaves them out, its parent's.
func subresourceKind(t *registry.Type, sr registry.Subresource) (group, version, kind string) {
	group, version, kind = sr.Group, sr.Version, sr.Kind
	if version == "" {
		group, version = t.Group, t.Version
	}
	if kind == "" {
		kind = t.Kind
	}
	return group, version, kind
}
