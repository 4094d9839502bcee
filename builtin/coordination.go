package builtin

import (
	"github.com/miniapi/miniapi/registry"
	"k8s.io/kubernetes/pkg/registry/coordination/lease"
	"k8s.io/kubernetes/pkg/registry/core/event"
	"k8s.io/kubernetes/pkg/registry/flowcontrol/flowschema"
	"k8s.io/kubernetes/pkg/registry/flowcontrol/prioritylevelconfiguration"
)

// coordinationResources are coordination.k8s.io/v1's resources.
func coordinationResources() []*resource {
	return []*resource{
		{group: "coordination.k8s.io", version: "v1", kind: "Lease", plural: "leases", namespaced: true, strategy: lease.Strategy},
	}
}

// eventsResources are events.k8s.io/v1's resources: Events, which kube
// stores as core v1 Events, one set of objects served in both groups.
func eventsResources() []*resource {
	return []*resource{
		{group: "events.k8s.io", version: "v1", kind: "Event", plural: "events", shortNames: []string{"ev"}, namespaced: true,
			storageGroup: registry.CoreGroup, storageVersion: "v1", strategy: event.Strategy, attrs: event.GetAttrs},
	}
}

// flowcontrolResources are flowcontrol.apiserver.k8s.io/v1's resources.
func flowcontrolResources() []*resource {
	fc := func(r resource) *resource {
		r.group, r.version = "flowcontrol.apiserver.k8s.io", "v1"
		return &r
	}
	return []*resource{
		fc(resource{kind: "FlowSchema", plural: "flowschemas", strategy: flowschema.Strategy, status: flowschema.StatusStrategy}),
		fc(resource{kind: "PriorityLevelConfiguration", plural: "prioritylevelconfigurations",
			strategy: prioritylevelconfiguration.Strategy, status: prioritylevelconfiguration.StatusStrategy}),
	}
}
