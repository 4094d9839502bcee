package builtin

import (
	"github.com/miniapi/miniapi/registry"
	"k8s.io/kubernetes/pkg/registry/core/configmap"
	"k8s.io/kubernetes/pkg/registry/core/endpoint"
	"k8s.io/kubernetes/pkg/registry/core/event"
	"k8s.io/kubernetes/pkg/registry/core/limitrange"
	"k8s.io/kubernetes/pkg/registry/core/namespace"
	"k8s.io/kubernetes/pkg/registry/core/node"
	"k8s.io/kubernetes/pkg/registry/core/persistentvolume"
	"k8s.io/kubernetes/pkg/registry/core/persistentvolumeclaim"
	"k8s.io/kubernetes/pkg/registry/core/pod"
	"k8s.io/kubernetes/pkg/registry/core/podtemplate"
	"k8s.io/kubernetes/pkg/registry/core/replicationcontroller"
	"k8s.io/kubernetes/pkg/registry/core/resourcequota"
	"k8s.io/kubernetes/pkg/registry/core/secret"
	"k8s.io/kubernetes/pkg/registry/core/service"
	"k8s.io/kubernetes/pkg/registry/core/serviceaccount"
)

// coreResources are the core group's (v1) stored resources; services
// allocates Services' addresses and ports.
func coreResources(services *Services, auth *Auth) []*resource {
	core := func(r resource) *resource {
		r.version = "v1"
		return &r
	}
	return []*resource{
		core(resource{kind: "ConfigMap", plural: "configmaps", shortNames: []string{"cm"}, namespaced: true,
			strategy: configmap.Strategy, attrs: configmap.GetAttrs}),
		core(resource{kind: "Endpoints", plural: "endpoints", singular: "endpoints", shortNames: []string{"ep"}, namespaced: true,
			strategy: endpoint.Strategy}),
		core(resource{kind: "Event", plural: "events", shortNames: []string{"ev"}, namespaced: true,
			strategy: event.Strategy, attrs: event.GetAttrs}),
		core(resource{kind: "LimitRange", plural: "limitranges", shortNames: []string{"limits"}, namespaced: true,
			strategy: limitrange.Strategy, defaultTable: true}),
		core(resource{kind: "Namespace", plural: "namespaces", shortNames: []string{"ns"},
			strategy: namespace.Strategy, status: namespace.StatusStrategy, attrs: namespace.GetAttrs,
			updates: map[string]updateSub{"finalize": {namespace.FinalizeStrategy, []string{"update"}}}}),
		core(resource{kind: "Node", plural: "nodes", shortNames: []string{"no"},
			strategy: node.Strategy, status: node.StatusStrategy, attrs: node.GetAttrs,
			others: []registry.Subresource{{Name: "proxy", Verbs: proxyVerbs, Kind: "NodeProxyOptions", Serve: registry.ServeConnect}}}),
		core(resource{kind: "PersistentVolume", plural: "persistentvolumes", shortNames: []string{"pv"},
			strategy: persistentvolume.Strategy, status: persistentvolume.StatusStrategy, attrs: persistentvolume.GetAttrs}),
		core(resource{kind: "PersistentVolumeClaim", plural: "persistentvolumeclaims", shortNames: []string{"pvc"}, namespaced: true,
			strategy: persistentvolumeclaim.Strategy, status: persistentvolumeclaim.StatusStrategy, attrs: persistentvolumeclaim.GetAttrs}),
		core(resource{kind: "Pod", plural: "pods", shortNames: []string{"po"}, categories: all, namespaced: true,
			strategy: pod.Strategy, status: pod.StatusStrategy, attrs: pod.GetAttrs,
			updates: map[string]updateSub{
				"ephemeralcontainers": {pod.EphemeralContainersStrategy, viewVerbs},
				"resize":              {pod.ResizeStrategy, viewVerbs},
			},
			others: []registry.Subresource{
				{Name: "attach", Verbs: connectVerbs, Kind: "PodAttachOptions", Serve: registry.ServeConnect},
				{Name: "binding", Verbs: createVerbs, Kind: "Binding", Serve: registry.ServeCreate},
				{Name: "eviction", Verbs: createVerbs, Group: "policy", Version: "v1", Kind: "Eviction", Serve: registry.ServeCreate},
				{Name: "exec", Verbs: connectVerbs, Kind: "PodExecOptions", Serve: registry.ServeConnect},
				{Name: "log", Verbs: []string{"get"}, Kind: "Pod", Serve: registry.ServeConnect},
				{Name: "portforward", Verbs: connectVerbs, Kind: "PodPortForwardOptions", Serve: registry.ServeConnect},
				{Name: "proxy", Verbs: proxyVerbs, Kind: "PodProxyOptions", Serve: registry.ServeConnect},
			}}),
		core(resource{kind: "PodTemplate", plural: "podtemplates", namespaced: true,
			strategy: podtemplate.Strategy}),
		core(resource{kind: "ReplicationController", plural: "replicationcontrollers", shortNames: []string{"rc"}, categories: all, namespaced: true,
			strategy: replicationcontroller.Strategy, status: replicationcontroller.StatusStrategy, attrs: replicationcontroller.GetAttrs,
			scale: replicasScale}),
		core(resource{kind: "ResourceQuota", plural: "resourcequotas", shortNames: []string{"quota"}, namespaced: true,
			strategy: resourcequota.Strategy, status: resourcequota.StatusStrategy}),
		core(resource{kind: "Secret", plural: "secrets", namespaced: true,
			strategy: secret.Strategy, attrs: secret.GetAttrs}),
		core(resource{kind: "ServiceAccount", plural: "serviceaccounts", shortNames: []string{"sa"}, namespaced: true,
			strategy: serviceaccount.Strategy, auth: auth,
			others: []registry.Subresource{{Name: "token", Verbs: createVerbs, Group: "authentication.k8s.io", Version: "v1", Kind: "TokenRequest", Serve: tokenServe(auth)}}}),
		core(resource{kind: "Service", plural: "services", shortNames: []string{"svc"}, categories: all, namespaced: true,
			strategy: service.Strategy, status: service.StatusStrategy, attrs: service.GetAttrs, services: services,
			others: []registry.Subresource{{Name: "proxy", Verbs: proxyVerbs, Kind: "ServiceProxyOptions", Serve: registry.ServeConnect}}}),
	}
}

// tokenServe is how serviceaccounts/token is served: with a token issuer
// as kube's TokenRequest, else listed but not served.
func tokenServe(auth *Auth) registry.SubresourceServe {
	if auth == nil || auth.Issuer == nil {
		return registry.ServeNotYet
	}
	return registry.ServeCreate
}
