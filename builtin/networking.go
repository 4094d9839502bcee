package builtin

import (
	"k8s.io/kubernetes/pkg/registry/discovery/endpointslice"
	"k8s.io/kubernetes/pkg/registry/networking/ingress"
	"k8s.io/kubernetes/pkg/registry/networking/ingressclass"
	"k8s.io/kubernetes/pkg/registry/networking/ipaddress"
	"k8s.io/kubernetes/pkg/registry/networking/networkpolicy"
	"k8s.io/kubernetes/pkg/registry/networking/servicecidr"
	"k8s.io/kubernetes/pkg/registry/node/runtimeclass"
)

// networkingResources are networking.k8s.io/v1's resources.
func networkingResources() []*resource {
	net := func(r resource) *resource {
		r.group, r.version = "networking.k8s.io", "v1"
		return &r
	}
	return []*resource{
		net(resource{kind: "IngressClass", plural: "ingressclasses", strategy: ingressclass.Strategy}),
		net(resource{kind: "Ingress", plural: "ingresses", shortNames: []string{"ing"}, namespaced: true,
			strategy: ingress.Strategy, status: ingress.StatusStrategy}),
		net(resource{kind: "IPAddress", plural: "ipaddresses", shortNames: []string{"ip"}, strategy: ipaddress.Strategy}),
		net(resource{kind: "NetworkPolicy", plural: "networkpolicies", shortNames: []string{"netpol"}, namespaced: true,
			strategy: networkpolicy.Strategy}),
		net(resource{kind: "ServiceCIDR", plural: "servicecidrs", strategy: servicecidr.Strategy, status: servicecidr.StatusStrategy}),
	}
}

// discoveryResources are discovery.k8s.io/v1's resources.
func discoveryResources() []*resource {
	return []*resource{
		{group: "discovery.k8s.io", version: "v1", kind: "EndpointSlice", plural: "endpointslices", namespaced: true,
			strategy: endpointslice.Strategy},
	}
}

// nodeResources are node.k8s.io/v1's resources.
func nodeResources() []*resource {
	return []*resource{
		{group: "node.k8s.io", version: "v1", kind: "RuntimeClass", plural: "runtimeclasses", strategy: runtimeclass.Strategy},
	}
}
