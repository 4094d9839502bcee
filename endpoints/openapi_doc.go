package endpoints

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/miniapi/miniapi/registry"
	"github.com/miniapi/miniapi/version"
)

// Building the OpenAPI documents from a snapshot's types: one OpenAPI v3
// document per group version (/openapi/v3/api/v1,
// /openapi/v3/apis/<g>/<v>) and one Swagger 2.0 document of everything
// (/openapi/v2).

// gvkExtension is the extension naming the kind of a definition (a list
// of group/version/kind objects) or of an operation (one object).
const gvkExtension = "x-kubernetes-group-version-kind"

// openAPIInfo is the info object of every document.
// openAPIInfo is every document's info: titled and versioned as
// kube-apiserver's, by the minor version it serves ("1.37").
func openAPIInfo() jsonObj {
	v := version.Get()
	return jsonObj{"title": "Kubernetes", "version": v.Major + "." + v.Minor}
}

// docOptions are what the documents say of the server in front of the
// handler.
type docOptions struct {
	// issuer: it serves its ServiceAccount token issuer's discovery
	// endpoints, which the documents then list.
	issuer bool
	// bearer: it authenticates bearer tokens, which the documents say
	// with kube-apiserver's BearerToken security scheme.
	bearer bool
}

// bearerScheme is the BearerToken security scheme, the same in both
// OpenAPI versions.
func bearerScheme() jsonObj {
	return jsonObj{"BearerToken": jsonObj{"type": "apiKey", "name": "authorization", "in": "header",
		"description": "A bearer token in the Authorization header."}}
}

// kindDefinition is the schema of a whole object of t's kind: the type's
// own schema, or one that accepts any fields, with apiVersion, kind and
// metadata as every object has them (what kube-apiserver publishes for a
// custom resource).
func kindDefinition(t *registry.Type) jsonObj {
	var s jsonObj
	if len(t.Schema) > 0 {
		if err := json.Unmarshal(t.Schema, &s); err != nil {
			// Served as a type without a schema; field validation logs the
			// broken schema.
			s = nil
		}
	}
	if s == nil {
		s = jsonObj{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
	}
	if _, ok := s["type"]; !ok {
		s["type"] = "object"
	}
	props, _ := s["properties"].(map[string]any)
	if props == nil {
		props = jsonObj{}
		s["properties"] = props
	}
	typeMetaFields(props)
	props["metadata"] = refField(defObjectMeta, objectMetadataDesc)
	if d, _ := s["description"].(string); d == "" {
		switch {
		case t.Description != "":
			s["description"] = t.Description
		case len(t.Schema) == 0:
			s["description"] = t.Kind + " objects (" + t.APIVersion() + ") are served without a schema: they may have any fields."
		}
	}
	s[gvkExtension] = []any{gvkObj(t.Group, t.Version, t.Kind)}
	return s
}

// listDefinition is the schema of a list of t's kind.
func listDefinition(t *registry.Type, kindDef string) jsonObj {
	s := objectDef(t.ListKind+" is a list of "+t.Kind+" objects.", typeMetaFields(jsonObj{
		"metadata": refField(defListMeta, listMetadataDesc),
		"items":    jsonObj{"type": "array", "description": "The " + t.Kind + " objects.", "items": ref(kindDef)},
	}), "items")
	s[gvkExtension] = []any{gvkObj(t.Group, t.Version, t.ListKind)}
	return s
}

// OpenAPIV3Key is the /openapi/v3 index key of a group version's document:
// "api/v1" or "apis/<group>/<version>".
func OpenAPIV3Key(group, version string) string {
	if group == "" {
		return "api/" + version
	}
	return "apis/" + group + "/" + version
}

// v3Document is the OpenAPI v3 document of one group version. It
// depends on nothing else the snapshot serves, so its hash, and the
// client caches keyed by it, survive changes to other group versions.
func v3Document(gv groupVersionKey, resources []*registry.Resource, kube map[string]any, opts docOptions) jsonObj {
	roots := append([]string(nil), metaModels...)
	if hasScale(resources) {
		roots = append(roots, defScale)
	}
	for _, res := range resources {
		if _, ok := res.Type.Strategy.(registry.OpenAPIModeler); ok {
			n := namesOf(res)
			roots = append(roots, n.kindDef, n.listDef) // closure skips a list kind that has no definition
		}
		bodies, _ := subresourceModels(res)
		roots = append(roots, bodies...)
	}
	roots = append(roots, defAPIResourceList)
	schemas := jsonObj(closure(kube, v3RefPrefix, roots...))
	paths := jsonObj{}
	for _, res := range resources {
		t := &res.Type
		n := namesOf(res)
		if _, ok := t.Strategy.(registry.OpenAPIModeler); !ok {
			schemas[n.kindDef] = kindDefinition(t)
			schemas[n.listDef] = listDefinition(t, n.kindDef)
		}
		gvk := gvkObj(t.Group, t.Version, t.Kind)
		for _, item := range typePaths(res, n, kube) {
			paths[item.path] = v3PathItem(item, n.tag, gvk)
		}
	}
	rp := resourcesPath(gv.group, gv.version)
	paths[rp.path] = v3PathItem(rp, resourcesTag(gv.group, gv.version), nil)
	components := jsonObj{"schemas": schemas}
	if opts.bearer {
		components["securitySchemes"] = bearerScheme()
	}
	return jsonObj{
		"openapi":    "3.0.0",
		"info":       openAPIInfo(),
		"paths":      paths,
		"components": components,
	}
}

func v3PathItem(item pathItem, tag string, gvk jsonObj) jsonObj {
	if item.gvk != nil {
		gvk = item.gvk
	}
	out := jsonObj{}
	if len(item.params) > 0 {
		out["parameters"] = v3Params(item.params)
	}
	for _, op := range item.ops {
		o := jsonObj{
			"tags":                []string{tag},
			"description":         op.description,
			"operationId":         op.id,
			"x-kubernetes-action": op.action,
			gvkExtension:          gvk,
		}
		if item.plain {
			delete(o, "x-kubernetes-action")
			delete(o, gvkExtension)
		}
		if len(op.params) > 0 {
			o["parameters"] = v3Params(op.params)
		}
		if op.body != "" {
			content := jsonObj{}
			for _, mt := range op.bodyTypes {
				content[mt] = jsonObj{"schema": ref(op.body)}
			}
			// A delete's options are optional; every other body is the
			// request. Optional is said by leaving required out, as
			// kube-openapi's RequestBody writes it, so the document
			// reads back into spec3.OpenAPI unchanged.
			body := jsonObj{"content": content}
			if op.body != defDeleteOptions {
				body["required"] = true
			}
			o["requestBody"] = body
		}
		responses := jsonObj{}
		for _, r := range op.responses {
			content := jsonObj{}
			for _, mt := range op.produces {
				content[mt] = jsonObj{"schema": responseSchema(r.schema, ref)}
			}
			responses[r.code] = jsonObj{"description": r.description, "content": content}
		}
		responses["401"] = unauthorized()
		o["responses"] = responses
		out[op.method] = o
	}
	return out
}

func v3Params(ps []param) []any {
	out := make([]any, 0, len(ps))
	for _, p := range ps {
		o := jsonObj{"name": p.name, "in": p.in, "description": p.description,
			"schema": jsonObj{"type": p.typ, "uniqueItems": true}}
		if p.required {
			o["required"] = true
		}
		out = append(out, o)
	}
	return out
}

// v2Document is the Swagger 2.0 document of every served type, and of
// the discovery, version and (with issuer) issuer paths.
func v2Document(groups []servedGroup, kube map[string]any, opts docOptions) jsonObj {
	// The options kinds of streaming subresources were asked for only
	// for their fields; kube-apiserver publishes no definition of them.
	options := map[string]bool{}
	for _, g := range groups {
		for _, v := range g.versions {
			for _, res := range v.resources {
				_, names := subresourceModels(res)
				for _, name := range names {
					options[name] = true
				}
			}
		}
	}
	defs := jsonObj{}
	for name, def := range kube {
		if !options[name] {
			defs[name] = def
		}
	}
	paths := jsonObj{}
	for _, g := range groups {
		for _, v := range g.versions {
			for _, res := range v.resources {
				t := &res.Type
				n := namesOf(res)
				if _, ok := t.Strategy.(registry.OpenAPIModeler); !ok {
					defs[n.kindDef] = kindDefinitionV2(kindDefinition(t))
					defs[n.listDef] = schemaToV2(listDefinition(t, n.kindDef))
				}
				gvk := gvkObj(t.Group, t.Version, t.Kind)
				for _, item := range typePaths(res, n, kube) {
					paths[item.path] = v2PathItem(item, n.tag, gvk)
				}
			}
			rp := resourcesPath(g.name, v.version)
			paths[rp.path] = v2PathItem(rp, resourcesTag(g.name, v.version), nil)
		}
	}
	for _, d := range discoveryPathDocs(groups, opts.issuer) {
		paths[d.item.path] = v2PathItem(d.item, d.tag, nil)
	}
	doc := jsonObj{
		"swagger":     "2.0",
		"info":        openAPIInfo(),
		"paths":       paths,
		"definitions": defs,
	}
	if opts.bearer {
		doc["securityDefinitions"] = bearerScheme()
		doc["security"] = []any{jsonObj{"BearerToken": []any{}}}
	}
	return doc
}

func v2PathItem(item pathItem, tag string, gvk jsonObj) jsonObj {
	if item.gvk != nil {
		gvk = item.gvk
	}
	out := jsonObj{}
	if len(item.params) > 0 {
		out["parameters"] = v2Params(item.params)
	}
	for _, op := range item.ops {
		o := jsonObj{
			"tags":                []string{tag},
			"description":         op.description,
			"operationId":         op.id,
			"consumes":            []string{"*/*"},
			"produces":            op.produces,
			"schemes":             []string{"https", "http"},
			"x-kubernetes-action": op.action,
			gvkExtension:          gvk,
		}
		if item.plain {
			delete(o, "x-kubernetes-action")
			delete(o, gvkExtension)
		}
		switch {
		case op.consumes == nil:
		case len(op.consumes) == 0:
			delete(o, "consumes")
		default:
			o["consumes"] = op.consumes
		}
		params := v2Params(op.params)
		if op.body != "" {
			o["consumes"] = op.bodyTypes
			params = append(params, jsonObj{"name": "body", "in": "body", "required": op.body != defDeleteOptions,
				"schema": jsonObj{"$ref": v2RefPrefix + op.body}})
		}
		if len(params) > 0 {
			o["parameters"] = params
		}
		responses := jsonObj{}
		for _, r := range op.responses {
			responses[r.code] = jsonObj{"description": r.description, "schema": responseSchema(r.schema, func(name string) jsonObj { return jsonObj{"$ref": v2RefPrefix + name} })}
		}
		responses["401"] = unauthorized()
		o["responses"] = responses
		out[op.method] = o
	}
	return out
}

func v2Params(ps []param) []any {
	out := make([]any, 0, len(ps))
	for _, p := range ps {
		o := jsonObj{"name": p.name, "in": p.in, "description": p.description, "type": p.typ, "uniqueItems": true}
		if p.required {
			o["required"] = true
		}
		out = append(out, o)
	}
	return out
}

// v2RefPrefix is where Swagger 2.0 references point.
const v2RefPrefix = "#/definitions/"

// v3Only are schema keywords Swagger 2.0 lacks. Like kube-apiserver for
// custom resources, the v2 document drops them: they only ever narrow
// what is valid, and kubectl's v2 parser refuses them.
var v3Only = []string{"oneOf", "anyOf", "not", "allOf", "nullable", "writeOnly", "deprecated", "discriminator"}

// schemaToV2 rewrites a v3 schema for Swagger 2.0: references point into
// #/definitions/, v3-only keywords go, and parts kubectl's v2 parser
// cannot describe lose their structure (see below). It returns a copy.
func schemaToV2(v any) any {
	s, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(jsonObj, len(s))
	for k, val := range s {
		out[k] = val
	}
	for _, k := range v3Only {
		delete(out, k)
	}
	if r, ok := out["$ref"].(string); ok {
		out["$ref"] = v2RefPrefix + strings.TrimPrefix(r, v3RefPrefix)
	}
	if b, _ := s["nullable"].(bool); b {
		// v2 has no null: a nullable value is left untyped.
		delete(out, "type")
		delete(out, "items")
		delete(out, "properties")
	}
	if b, _ := s["x-kubernetes-preserve-unknown-fields"].(bool); b {
		// kubectl would flag the undeclared fields such a value may have.
		delete(out, "items")
		delete(out, "properties")
		if out["type"] == "object" {
			delete(out, "type")
		}
	}
	if out["type"] == "array" && out["items"] == nil {
		delete(out, "type") // kubectl cannot handle an array without items
	}
	if props, ok := out["properties"].(map[string]any); ok {
		conv := make(jsonObj, len(props))
		var nullable []string
		for k, p := range props {
			conv[k] = schemaToV2(p)
			if pm, ok := p.(map[string]any); ok && pm["nullable"] == true {
				nullable = append(nullable, k)
			}
		}
		out["properties"] = conv
		if req, ok := out["required"].([]any); ok && len(nullable) > 0 {
			out["required"] = withoutStrings(req, nullable)
		}
	}
	for _, k := range []string{"items", "additionalProperties"} {
		if sub, ok := out[k].(map[string]any); ok {
			out[k] = schemaToV2(sub)
		}
	}
	return out
}

// kindDefinitionV2 converts a kind's definition for Swagger 2.0. A kind
// that preserves unknown fields is published as a bare object (no
// apiVersion, kind or metadata either), as kube-apiserver publishes
// such custom resources: kubectl would otherwise flag every other field.
func kindDefinitionV2(def jsonObj) any {
	if b, _ := def["x-kubernetes-preserve-unknown-fields"].(bool); b {
		out := jsonObj{"type": "object", gvkExtension: def[gvkExtension]}
		if d, ok := def["description"]; ok {
			out["description"] = d
		}
		return out
	}
	return schemaToV2(def)
}

// withoutStrings drops the names in drop from a JSON array of strings.
func withoutStrings(in []any, drop []string) []any {
	out := make([]any, 0, len(in))
	for _, v := range in {
		if s, ok := v.(string); ok && slices.Contains(drop, s) {
			continue
		}
		out = append(out, v)
	}
	return out
}

// responseSchema is the schema of a response: a reference to the
// definition named, or for "" a string (a streamed answer: a log, a
// connection's).
func responseSchema(name string, ref func(string) jsonObj) jsonObj {
	if name == "" {
		return jsonObj{"type": "string"}
	}
	return ref(name)
}

// unauthorized is the answer every operation may give a request without
// valid credentials, as kube-apiserver's documents list it.
func unauthorized() jsonObj { return jsonObj{"description": "Unauthorized"} }
