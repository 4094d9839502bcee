package builtin

import (
	"k8s.io/kubernetes/pkg/registry/rbac/clusterrole"
	"k8s.io/kubernetes/pkg/registry/rbac/clusterrolebinding"
	"k8s.io/kubernetes/pkg/registry/rbac/role"
	"k8s.io/kubernetes/pkg/registry/rbac/rolebinding"
)

// rbacResources are rbac.authorization.k8s.io/v1's resources. Their
// escalation checks (a user may grant only what they hold) come with
// authorization; until then every user may write every role.
func rbacResources() []*resource {
	rbac := func(r resource) *resource {
		r.group, r.version = "rbac.authorization.k8s.io", "v1"
		return &r
	}
	return []*resource{
		rbac(resource{kind: "ClusterRoleBinding", plural: "clusterrolebindings", strategy: clusterrolebinding.Strategy}),
		rbac(resource{kind: "ClusterRole", plural: "clusterroles", strategy: clusterrole.Strategy, defaultTable: true}),
		rbac(resource{kind: "RoleBinding", plural: "rolebindings", namespaced: true, strategy: rolebinding.Strategy}),
		rbac(resource{kind: "Role", plural: "roles", namespaced: true, strategy: role.Strategy, defaultTable: true}),
	}
}
