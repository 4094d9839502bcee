package builtin

import (
	"context"

	"github.com/miniapi/miniapi/registry"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/deprecation"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/registry/core/componentstatus"
)

// resource describes one built-in resource as kube-apiserver 1.37 serves
// it: its names in discovery, and kube's code that holds its rules. Each
// API group's file lists its resources.
type resource struct {
	group, version, kind, plural, singular string
	shortNames, categories                 []string
	namespaced                             bool
	// storageGroup and storageVersion, when set, are where kube stores
	// the kind's objects, when not in the served group version
	// (autoscaling/v1 HPAs are stored as v2, events.k8s.io Events as
	// core v1 Events).
	storageGroup, storageVersion string

	// strategy is kube's REST strategy for the main resource.
	strategy strategy
	// status is the strategy of the status subresource; nil: none.
	status rest.RESTUpdateStrategy
	// updates are the strategies of the other subresources written as
	// a view of the object (finalize, approval, ephemeralcontainers,
	// resize), by name.
	updates map[string]updateSub
	// scale, when set, serves autoscaling/v1 Scale on /scale.
	scale *registry.ScaleSubresource
	// deleteWarnings records the warnings kube's storage of the kind
	// gives a delete, before doing it (Jobs); nil: none.
	deleteWarnings func(ctx context.Context, opts *metav1.DeleteOptions)
	// attrs is kube's GetAttrs for the kind: the labels and fields its
	// field selectors match. nil: metadata.name and metadata.namespace.
	attrs func(runtime.Object) (labels.Set, fields.Set, error)
	// selectable, for kinds whose GetAttrs kube does not export, are the
	// field paths their field selectors match, read from the object.
	selectable []string
	// defaultTable marks the kinds kube prints with its default table
	// convertor (Name, Created At) rather than a printer of their own.
	defaultTable bool
	// printer, when set, is the table convertor of the kind's storage,
	// for kinds kube's printers do not print (APIServices).
	printer rest.TableConvertor
	// virtual marks bindings and componentstatuses, served without
	// storage (virtual.go); componentStatus is kube's storage of the
	// latter.
	virtual         int
	componentStatus *componentstatus.REST
	// review is kube's REST storage of a review resource (reviews.go).
	review rest.Creater
	// auth serves serviceaccounts/token.
	auth *Auth
	// services allocates a Service's ClusterIPs and NodePorts.
	services *Services
	// others are the subresources served by code of their own (binding,
	// eviction) or answered as unreachable (log, exec, proxy), and those
	// not served yet (serviceaccounts/token).
	others []registry.Subresource
}

// strategy is what kube's registry strategies implement for a resource
// with every verb.
type strategy interface {
	rest.RESTCreateStrategy
	rest.RESTUpdateStrategy
	rest.RESTDeleteStrategy
}

// updateSub is a subresource written through a strategy of its own.
type updateSub struct {
	strategy rest.RESTUpdateStrategy
	verbs    []string
}

// updateStrategy returns the strategy of the (sub)resource an update
// addresses, nil when the kind does not update it.
func (r *resource) updateStrategy(subresource string) rest.RESTUpdateStrategy {
	switch subresource {
	case "":
		return r.strategy
	case registry.SubresourceStatus:
		if r.status == nil {
			return nil
		}
		return r.status
	}
	if u, ok := r.updates[subresource]; ok {
		return u.strategy
	}
	return nil
}

// subresources lists the subresources other than status and scale.
func (r *resource) subresources() []registry.Subresource {
	out := make([]registry.Subresource, 0, len(r.updates)+len(r.others))
	for name, u := range r.updates {
		out = append(out, registry.Subresource{Name: name, Verbs: u.verbs, Serve: registry.ServeUpdate})
	}
	return append(out, r.others...)
}

// typ is the registry Type serving r.
func (r *resource) typ() registry.Type {
	return registry.Type{
		Group:               r.group,
		Version:             r.version,
		Kind:                r.kind,
		Plural:              r.plural,
		Singular:            r.singular,
		ShortNames:          r.shortNames,
		Categories:          r.categories,
		Namespaced:          r.namespaced,
		Scale:               r.scale,
		ReturnDeletedObject: returnsDeletedObject[schema.GroupResource{Group: r.group, Resource: r.plural}],
		StorageVersion:      r.storageVersion,
		StorageGroup:        r.storageGroup,
		DeprecationWarning:  r.deprecationWarning(),
		Strategy:            r.strategyOf(),
	}
}

// returnsDeletedObject are the resources whose storage in kube-apiserver
// 1.37.1 answers a delete with the deleted object (their storage.go sets
// genericregistry.Store's ReturnDeletedObject; DeviceTaintRule sets it
// only for versions before v1); the others answer a Status.
var returnsDeletedObject = map[schema.GroupResource]bool{
	{Resource: "namespaces"}: true, {Resource: "persistentvolumeclaims"}: true,
	{Resource: "persistentvolumes"}: true, {Resource: "pods"}: true,
	{Resource: "podtemplates"}: true, {Resource: "resourcequotas"}: true,
	{Resource: "serviceaccounts"}: true, {Resource: "services"}: true,
	{Group: "resource.k8s.io", Resource: "deviceclasses"}:          true,
	{Group: "resource.k8s.io", Resource: "resourceclaims"}:         true,
	{Group: "resource.k8s.io", Resource: "resourceclaimtemplates"}: true,
	{Group: "resource.k8s.io", Resource: "resourceslices"}:         true,
	{Group: "storage.k8s.io", Resource: "csidrivers"}:              true,
	{Group: "storage.k8s.io", Resource: "csinodes"}:                true,
	{Group: "storage.k8s.io", Resource: "storageclasses"}:          true,
	{Group: "storage.k8s.io", Resource: "volumeattachments"}:       true,
	{Group: "storage.k8s.io", Resource: "volumeattributesclasses"}: true,
}

// servedMajor and servedMinor are the Kubernetes release whose API
// miniapi serves, which API deprecations are judged against.
const servedMajor, servedMinor = 1, 37

// deprecationWarning is the warning kube-apiserver sends with every
// request for a kind its API marks deprecated in this release (v1
// ComponentStatus), empty for the others.
func (r *resource) deprecationWarning() string {
	gvk := schema.GroupVersionKind{Group: r.group, Version: r.version, Kind: r.kind}
	obj, err := scheme.New(gvk)
	if err != nil || !deprecation.IsDeprecated(obj, servedMajor, servedMinor) {
		return ""
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk) // the message names it
	return deprecation.WarningMessage(obj)
}

// strategyOf is the registry Strategy serving r: its kind, with the
// capabilities only some kinds have.
func (r *resource) strategyOf() registry.Strategy {
	k := newKind(r)
	switch {
	case r.virtual == virtualBindings:
		return bindingsKind{k}
	case r.virtual == virtualComponentStatuses:
		return componentStatusKind{k, r.componentStatus}
	case r.virtual == virtualReview:
		return reviewKind{k, r.review}
	case r.group == "rbac.authorization.k8s.io" && r.auth != nil && r.auth.RuleResolverRBAC != nil:
		return rbacKind{k, r.auth}
	case r.group == "" && r.kind == "ServiceAccount" && r.auth != nil:
		return serviceAccountKind{k, r.auth}
	case r.scale != nil:
		return scaleKind{k}
	case r.group == "" && r.kind == "Namespace":
		return namespaceKind{k}
	case r.group == "apiextensions.k8s.io" && r.kind == "CustomResourceDefinition":
		return crdKind{k}
	case r.group == "" && r.kind == "Pod":
		return podKind{k}
	case r.group == "" && r.kind == "Node":
		return nodeKind{k}
	case r.group == "" && r.kind == "Service":
		if r.services == nil {
			return serviceProxy{k, nil}
		}
		return serviceKind{serviceProxy{k, r.services}}
	}
	return k
}

// Verbs of the subresources kube-apiserver serves, as discovery lists them.
var (
	viewVerbs    = []string{"get", "patch", "update"}
	createVerbs  = []string{"create"}
	connectVerbs = []string{"create", "get"}
	proxyVerbs   = []string{"create", "delete", "get", "patch", "update"}
	// all is the category `kubectl get all` lists.
	all = []string{"all"}
)

// replicasScale is the scale subresource of the workload kinds: replicas
// at spec.replicas and status.replicas, the selector computed from the
// kind's spec.selector (see scaleSelector).
var replicasScale = &registry.ScaleSubresource{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas"}
