// Package builtin serves the built-in resources of kube-apiserver 1.37
// with kube's own rules for each kind: Types returns one registry.Type per
// resource and version kube serves by default, whose Strategy calls kube's
// code for the kind (k8s.io/kubernetes/pkg/registry/...): decoding into
// its Go types with its defaults, its REST create and update strategies
// (validation, warnings, generation, status kept apart), its field
// selectors, its table printer, its OpenAPI definitions and its merge
// schema for managedFields. The Store keeps moving JSON: the adapter
// (kind.go) converts to kube's Go types at each call and back, the same
// way for every kind.
//
// One file per API group lists its resources (core.go, apps.go, ...), as
// data. The few kinds whose storage, not strategy, holds rules in kube
// have a file of their own, over the registry's capabilities: pods
// (graceful deletion, binding, eviction), namespaces (deletion held by
// spec.finalizers), services (ClusterIP and NodePort allocation with
// kube's allocators), the workloads' scale subresource, and the
// resources kube serves without storage (bindings, componentstatuses).
// OpenAPI serves kube's definitions of every kind to package endpoints.
//
// Lifecycle: Types takes what some kinds' rules need from the running
// server (Config) and returns fresh values to add to a registry. Services
// is built before and started once the server serves, since its
// allocators write IPAddresses and watch ServiceCIDRs through the API:
//
//	svcs := builtin.NewServices(builtin.ServicesConfig{ClusterIPRange: cidr, NodePortRange: ports, Ranges: store, RangesKey: key})
//	for _, t := range builtin.Types(builtin.Config{Namespaces: builtin.NamespaceGetter(get), Services: svcs}) {
//		if err := reg.Add(t); err != nil { ... }
//	}
//	h := endpoints.New(endpoints.Config{Registry: reg, OpenAPI: &builtin.OpenAPI{}})
//	... // serve, then
//	err := svcs.Start(ctx, client.NetworkingV1(), serviceCIDRs, ipAddresses, nil)
//	defer svcs.Destroy()
//
// docs/resource-types.md lists the served resources; TestBuiltinTypesDoc
// keeps that table equal to Types.
package builtin
