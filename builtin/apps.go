package builtin

import (
	"k8s.io/kubernetes/pkg/registry/apps/controllerrevision"
	"k8s.io/kubernetes/pkg/registry/apps/daemonset"
	"k8s.io/kubernetes/pkg/registry/apps/deployment"
	"k8s.io/kubernetes/pkg/registry/apps/replicaset"
	"k8s.io/kubernetes/pkg/registry/apps/statefulset"
)

// appsResources are apps/v1's resources.
func appsResources() []*resource {
	apps := func(r resource) *resource {
		r.group, r.version, r.namespaced = "apps", "v1", true
		return &r
	}
	return []*resource{
		apps(resource{kind: "ControllerRevision", plural: "controllerrevisions", strategy: controllerrevision.Strategy}),
		apps(resource{kind: "DaemonSet", plural: "daemonsets", shortNames: []string{"ds"}, categories: all,
			strategy: daemonset.Strategy, status: daemonset.StatusStrategy}),
		apps(resource{kind: "Deployment", plural: "deployments", shortNames: []string{"deploy"}, categories: all,
			strategy: deployment.Strategy, status: deployment.StatusStrategy, scale: replicasScale}),
		apps(resource{kind: "ReplicaSet", plural: "replicasets", shortNames: []string{"rs"}, categories: all,
			strategy: replicaset.Strategy, status: replicaset.StatusStrategy, attrs: replicaset.GetAttrs, scale: replicasScale}),
		apps(resource{kind: "StatefulSet", plural: "statefulsets", shortNames: []string{"sts"}, categories: all,
			strategy: statefulset.Strategy, status: statefulset.StatusStrategy, scale: replicasScale}),
	}
}
