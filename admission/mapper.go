package admission

import (
	"sync"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// resourceMapper answers, from the registry's live types, what kube's
// handler installer records in its EquivalentResourceRegistry and what
// its discovery RESTMapper knows: the kind each (sub)resource takes, the
// resources equivalent to one (the versions of one stored resource), and
// the REST mappings of every served kind. It is rebuilt when the
// registry changes (a CRD is served or goes).
type resourceMapper struct {
	reg *registry.Registry

	mu   sync.Mutex
	snap *registry.Snapshot
	m    *mapping
}

// mapping is what the mapper knows of one registry snapshot.
type mapping struct {
	kinds      map[schema.GroupVersionResource]schema.GroupVersionKind
	equivalent map[api.GroupResource][]schema.GroupVersionResource
	storage    map[schema.GroupVersionResource]api.GroupResource
	types      map[schema.GroupVersionResource]*registry.Type
	rest       meta.RESTMapper
}

func newResourceMapper(reg *registry.Registry) *resourceMapper { return &resourceMapper{reg: reg} }

// current returns the mapping of the registry as it is now.
func (r *resourceMapper) current() *mapping {
	snap := r.reg.Snapshot()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.snap == snap {
		return r.m
	}
	m := &mapping{
		kinds:      map[schema.GroupVersionResource]schema.GroupVersionKind{},
		equivalent: map[api.GroupResource][]schema.GroupVersionResource{},
		storage:    map[schema.GroupVersionResource]api.GroupResource{},
		types:      map[schema.GroupVersionResource]*registry.Type{},
	}
	var gvs []schema.GroupVersion
	seen := map[schema.GroupVersion]bool{}
	for _, res := range snap.Resources() {
		t := &res.Type
		gv := schema.GroupVersion{Group: t.Group, Version: t.Version}
		if !seen[gv] {
			seen[gv] = true
			gvs = append(gvs, gv)
		}
	}
	rest := meta.NewDefaultRESTMapper(gvs)
	for _, res := range snap.Resources() {
		t := &res.Type
		gvr := schema.GroupVersionResource{Group: t.Group, Version: t.Version, Resource: t.Plural}
		gvk := schema.GroupVersionKind{Group: t.Group, Version: t.Version, Kind: t.Kind}
		m.kinds[gvr] = gvk
		m.types[gvr] = t
		sr := t.StorageResource()
		m.storage[gvr] = sr
		m.equivalent[sr] = append(m.equivalent[sr], gvr)
		scope := meta.RESTScopeRoot
		if t.Namespaced {
			scope = meta.RESTScopeNamespace
		}
		rest.AddSpecific(gvk, gvr, gvr.GroupVersion().WithResource(t.Singular), scope)
	}
	m.rest = rest
	r.snap, r.m = snap, m
	return m
}

// EquivalentResourcesFor returns the resources that store the objects
// resource does, resource included, with the subresource named.
func (r *resourceMapper) EquivalentResourcesFor(resource schema.GroupVersionResource, subresource string) []schema.GroupVersionResource {
	m := r.current()
	sr, ok := m.storage[resource]
	if !ok {
		return nil
	}
	var out []schema.GroupVersionResource
	for _, gvr := range m.equivalent[sr] {
		if subresource != "" && r.subresourceKind(m, gvr, subresource).Empty() {
			continue
		}
		out = append(out, gvr)
	}
	return out
}

// KindFor returns the kind of object the (sub)resource takes.
func (r *resourceMapper) KindFor(resource schema.GroupVersionResource, subresource string) schema.GroupVersionKind {
	m := r.current()
	if subresource == "" {
		return m.kinds[resource]
	}
	return r.subresourceKind(m, resource, subresource)
}

// subresourceKind is the kind a subresource of resource takes, empty
// when it has no such subresource.
func (r *resourceMapper) subresourceKind(m *mapping, resource schema.GroupVersionResource, subresource string) schema.GroupVersionKind {
	t, ok := m.types[resource]
	if !ok {
		return schema.GroupVersionKind{}
	}
	for _, s := range registry.Subresources(t) {
		if s.Name != subresource {
			continue
		}
		if s.Kind == "" {
			return m.kinds[resource]
		}
		if s.Group == "" && s.Version == "" {
			// A kind of the parent's group-version (a pod's Binding).
			return resource.GroupVersion().WithKind(s.Kind)
		}
		return schema.GroupVersionKind{Group: s.Group, Version: s.Version, Kind: s.Kind}
	}
	return schema.GroupVersionKind{}
}

// restMapper is the mapper's meta.RESTMapper, for the plugins that
// resolve kinds to resources (admission policies' paramKind).
type restMapper struct{ r *resourceMapper }

func (m restMapper) KindFor(resource schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	return m.r.current().rest.KindFor(resource)
}

func (m restMapper) KindsFor(resource schema.GroupVersionResource) ([]schema.GroupVersionKind, error) {
	return m.r.current().rest.KindsFor(resource)
}

func (m restMapper) ResourceFor(input schema.GroupVersionResource) (schema.GroupVersionResource, error) {
	return m.r.current().rest.ResourceFor(input)
}

func (m restMapper) ResourcesFor(input schema.GroupVersionResource) ([]schema.GroupVersionResource, error) {
	return m.r.current().rest.ResourcesFor(input)
}

func (m restMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	return m.r.current().rest.RESTMapping(gk, versions...)
}

func (m restMapper) RESTMappings(gk schema.GroupKind, versions ...string) ([]*meta.RESTMapping, error) {
	return m.r.current().rest.RESTMappings(gk, versions...)
}

func (m restMapper) ResourceSingularizer(resource string) (string, error) {
	return m.r.current().rest.ResourceSingularizer(resource)
}

// NewRESTMapper returns a RESTMapper of the kinds reg serves as they are
// at each call, for kube's components that map kinds to resources (the
// ValidatingAdmissionPolicy status controller's type checker).
func NewRESTMapper(reg *registry.Registry) meta.RESTMapper { return restMapper{newResourceMapper(reg)} }
