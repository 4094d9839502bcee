package builtin

import (
	"k8s.io/kubernetes/pkg/registry/policy/poddisruptionbudget"
	"k8s.io/kubernetes/pkg/registry/scheduling/priorityclass"
)

// policyResources are policy/v1's resources.
func policyResources() []*resource {
	return []*resource{
		{group: "policy", version: "v1", kind: "PodDisruptionBudget", plural: "poddisruptionbudgets", shortNames: []string{"pdb"}, namespaced: true,
			strategy: poddisruptionbudget.Strategy, status: poddisruptionbudget.StatusStrategy},
	}
}

// schedulingResources are scheduling.k8s.io/v1's resources.
func schedulingResources() []*resource {
	return []*resource{
		{group: "scheduling.k8s.io", version: "v1", kind: "PriorityClass", plural: "priorityclasses", shortNames: []string{"pc"},
			strategy: priorityclass.Strategy},
	}
}
