package endpoints

import (
	"github.com/miniapi/miniapi/registry"
)

// The definitions of autoscaling/v1 Scale, published in the documents of
// group versions with a type that has a /scale subresource, under the
// names kube-apiserver gives them.
const defScale = "io.k8s.api.autoscaling.v1.Scale"

// scaleGVK is the x-kubernetes-group-version-kind of /scale operations.
var scaleGVK = gvkObj("autoscaling", "v1", registry.ScaleKind)

// scalePathItem is the /scale path of a type with a scale subresource:
// get, replace and patch of its Scale, in JSON, YAML or protobuf, as
// kube-apiserver serves a custom resource's.
func scalePathItem(named []param, collection string, n typeNames, kind string, patches []string) pathItem {
	ok := []opResponse{{"200", "OK", defScale}}
	written := []opResponse{{"200", "OK", defScale}, {"201", "Created", defScale}}
	types := builtinObjectMediaTypes
	return pathItem{path: collection + "/{name}/scale", params: named, gvk: scaleGVK, ops: []operation{
		{method: "get", id: "read" + n.opKind + "Scale", action: "get", description: "read scale of the named " + kind,
			responses: ok, produces: types},
		{method: "put", id: "replace" + n.opKind + "Scale", action: "put", description: "replace scale of the named " + kind,
			params: []param{paramDryRun, paramFieldManager, paramFieldValidation},
			body:   defScale, bodyTypes: types, responses: written, produces: types},
		{method: "patch", id: "patch" + n.opKind + "Scale", action: "patch", description: "partially update scale of the named " + kind,
			params: []param{paramDryRun, paramFieldManager, paramFieldValidation, paramForce},
			body:   defPatch, bodyTypes: patches, responses: written, produces: types},
	}}
}

// hasScale reports whether any of resources has a /scale subresource.
func hasScale(resources []*registry.Resource) bool {
	for _, res := range resources {
		if registry.HasScale(&res.Type) {
			return true
		}
	}
	return false
}
