package endpoints

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"sync/atomic"

	"github.com/miniapi/miniapi/builtin"
	"github.com/miniapi/miniapi/endpoints/handlers"
	"github.com/miniapi/miniapi/registry"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	apiregistrationv1helper "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1/helper"
	"sigs.k8s.io/yaml"
)

// Legacy (unaggregated) discovery documents, with Kubernetes' field names:
// /api is APIVersions, /apis APIGroupList, /apis/<g> APIGroup, and
// /api/<v> and /apis/<g>/<v> APIResourceList.
type apiVersions struct {
	Kind                       string         `json:"kind"`
	Versions                   []string       `json:"versions"`
	ServerAddressByClientCIDRs []serverByCIDR `json:"serverAddressByClientCIDRs"`
}

type serverByCIDR struct {
	ClientCIDR    string `json:"clientCIDR"`
	ServerAddress string `json:"serverAddress"`
}

type groupVersion struct {
	GroupVersion string `json:"groupVersion"`
	Version      string `json:"version"`
}

type apiGroup struct {
	Kind             string         `json:"kind,omitempty"`
	APIVersion       string         `json:"apiVersion,omitempty"`
	Name             string         `json:"name"`
	Versions         []groupVersion `json:"versions"`
	PreferredVersion groupVersion   `json:"preferredVersion"`
}

type apiGroupList struct {
	Kind       string     `json:"kind"`
	APIVersion string     `json:"apiVersion"`
	Groups     []apiGroup `json:"groups"`
}

// apiResource is one entry of an APIResourceList. Group and Version are
// set only for subresources whose kind is of another group version (a
// /scale answers an autoscaling/v1 Scale).
type apiResource struct {
	Name               string   `json:"name"`
	SingularName       string   `json:"singularName"`
	Namespaced         bool     `json:"namespaced"`
	Group              string   `json:"group,omitempty"`
	Version            string   `json:"version,omitempty"`
	Kind               string   `json:"kind"`
	Verbs              []string `json:"verbs"`
	ShortNames         []string `json:"shortNames,omitempty"`
	Categories         []string `json:"categories,omitempty"`
	StorageVersionHash string   `json:"storageVersionHash,omitempty"`
}

type apiResourceList struct {
	Kind         string        `json:"kind"`
	APIVersion   string        `json:"apiVersion,omitempty"`
	GroupVersion string        `json:"groupVersion"`
	Resources    []apiResource `json:"resources"`
}

// The verbs every served resource supports: the handlers implement
// each verb once for all types.
var (
	resourceVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
	// noCollectionDeleteVerbs are the verbs of types that refuse
	// deletecollection (namespaces).
	noCollectionDeleteVerbs = []string{"create", "delete", "get", "list", "patch", "update", "watch"}
	// customVerbs are the verbs of custom resources, in the order
	// kube-apiserver's CRD discovery lists them; terminatingVerbs those
	// of a custom resource whose CRD is being deleted.
	customVerbs      = []string{"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"}
	terminatingVerbs = []string{"delete", "deletecollection", "get", "list", "watch"}
)

// servedGroup is one API group of a snapshot: its name ("" for core) and
// its versions, preferred first, each with its resources.
type servedGroup struct {
	name     string
	versions []servedVersion
}

type servedVersion struct {
	version   string
	resources []*registry.Resource // ordered by plural
}

// servedGroups groups a snapshot's resources by group and version, in
// kube-apiserver's discovery order (discoveryOrder).
func servedGroups(snap *registry.Snapshot) []servedGroup {
	var out []servedGroup
	for _, res := range snap.Resources() { // ordered by group, version, plural
		t := &res.Type
		if len(out) == 0 || out[len(out)-1].name != t.Group {
			out = append(out, servedGroup{name: t.Group})
		}
		g := &out[len(out)-1]
		if len(g.versions) == 0 || g.versions[len(g.versions)-1].version != t.Version {
			g.versions = append(g.versions, servedVersion{version: t.Version})
		}
		v := &g.versions[len(g.versions)-1]
		v.resources = append(v.resources, res)
	}
	return discoveryOrder(out)
}

// discoveryOrder orders groups and their versions as kube-apiserver's
// aggregator lists them: the core group, then apiregistration.k8s.io
// (the aggregator's own, always first), then the others by the
// priorities of their APIServices (builtin.DiscoveryAPIService), sorted
// by kube-aggregator's own SortedByGroupAndVersion.
func discoveryOrder(groups []servedGroup) []servedGroup {
	byGroup := map[string]servedGroup{}
	var services []*apiregistrationv1.APIService
	out := make([]servedGroup, 0, len(groups))
	for _, g := range groups {
		if g.name == "" || g.name == apiregistrationv1.GroupName {
			slices.SortStableFunc(g.versions, func(a, b servedVersion) int {
				return -version.CompareKubeAwareVersionStrings(a.version, b.version)
			})
			out = append(out, g)
			continue
		}
		byGroup[g.name] = g
		for _, v := range g.versions {
			services = append(services, builtin.DiscoveryAPIService(schema.GroupVersion{Group: g.name, Version: v.version}))
		}
	}
	slices.SortStableFunc(out, func(a, b servedGroup) int { return cmp.Compare(a.name, b.name) }) // "" first
	for _, group := range apiregistrationv1helper.SortedByGroupAndVersion(services) {
		g := byGroup[group[0].Spec.Group]
		versions := make([]servedVersion, 0, len(group))
		for _, s := range group {
			for _, v := range g.versions {
				if v.version == s.Spec.Version {
					versions = append(versions, v)
				}
			}
		}
		g.versions = versions
		out = append(out, g)
	}
	return out
}

// groupVersionString is "v1" for the core group, "group/version" otherwise.
func groupVersionString(group, version string) string {
	if group == "" {
		return version
	}
	return group + "/" + version
}

// legacyGroup is the APIGroup document of a non-core group.
func legacyGroup(g servedGroup) apiGroup {
	out := apiGroup{Name: g.name}
	for _, v := range g.versions {
		out.Versions = append(out.Versions, groupVersion{GroupVersion: groupVersionString(g.name, v.version), Version: v.version})
	}
	out.PreferredVersion = out.Versions[0]
	return out
}

// legacyResourceList is the APIResourceList of one group version: each
// resource, followed by its status and scale subresources when it has
// them.
func legacyResourceList(group string, v servedVersion) apiResourceList {
	list := apiResourceList{Kind: "APIResourceList", APIVersion: "v1", GroupVersion: groupVersionString(group, v.version), Resources: []apiResource{}}
	if group == "" {
		// As kube-apiserver writes /api/v1: without an apiVersion.
		list.APIVersion = ""
	}
	for _, res := range v.resources {
		t := &res.Type
		list.Resources = append(list.Resources, apiResource{
			Name: t.Plural, SingularName: t.Singular, Namespaced: t.Namespaced, Kind: t.Kind,
			Verbs: verbsOf(t), ShortNames: t.ShortNames, Categories: t.Categories,
			StorageVersionHash: storageVersionHash(t),
		})
		for _, sr := range discoverableSubresources(t) {
			kind := sr.Kind
			if kind == "" {
				kind = t.Kind
			}
			list.Resources = append(list.Resources, apiResource{
				Name: t.Plural + "/" + sr.Name, Namespaced: t.Namespaced,
				Group: sr.Group, Version: sr.Version, Kind: kind, Verbs: sr.Verbs,
			})
		}
	}
	return list
}

// discoverableSubresources are the subresources discovery lists: all a
// type serves, in name order (a custom resource's status first, as
// kube's CRD discovery), but those miniapi does not serve yet.
func discoverableSubresources(t *registry.Type) []registry.Subresource {
	var out []registry.Subresource
	for _, sr := range registry.Subresources(t) {
		if sr.Serve != registry.ServeNotYet {
			out = append(out, sr)
		}
	}
	if !builtinKind(t) {
		// kube's CRD discovery lists status, then scale.
		statusFirst := func(sr registry.Subresource) int {
			if sr.Name == registry.SubresourceStatus {
				return 0
			}
			return 1
		}
		slices.SortStableFunc(out, func(a, b registry.Subresource) int { return cmp.Compare(statusFirst(a), statusFirst(b)) })
	}
	return out
}

// builtinKind reports whether t is one of Kubernetes' built-in kinds,
// whose definitions (and so discovery's response kinds) kube-apiserver
// describes relative to their own group version.
func builtinKind(t *registry.Type) bool {
	_, ok := t.Strategy.(registry.OpenAPIModeler)
	return ok
}

// storageVersionHash identifies the version t's objects are stored in,
// for storage migration tools, as kube-apiserver computes it: the first
// 8 bytes of the SHA-256 of the storage "group/version/kind",
// base64-encoded. A type with a storage version of its own (a CRD's
// other versions, autoscaling/v1 HorizontalPodAutoscalers stored as v2,
// events.k8s.io Events stored as core Events) hashes that one; a
// resource nothing is stored for (bindings, the reviews) has none.
func storageVersionHash(t *registry.Type) string {
	if registry.IsVirtual(t) {
		return ""
	}
	group, version := t.Group, t.Version
	if sv := t.StorageAPIVersion(); sv != "" {
		gv, err := schema.ParseGroupVersion(sv)
		if err != nil {
			return ""
		}
		group, version = gv.Group, gv.Version
	}
	sum := sha256.Sum256([]byte(group + "/" + version + "/" + t.Kind))
	return base64.StdEncoding.EncodeToString(sum[:8])
}

// discoveryDocs are the discovery documents of one registry snapshot,
// built once and served until the registry changes.
type discoveryDocs struct {
	snap *registry.Snapshot
	// groups are the non-core groups, for /apis and /apis/<g>.
	groups []apiGroup
	// lists are the APIResourceLists by group version ("v1", "g/v").
	lists map[string]apiResourceList
	// core and apis are the aggregated documents of /api and /apis.
	core, apis encodedDoc
}

// encodedDoc is an encoded document and its entity tag.
type encodedDoc struct {
	body []byte
	etag string // quoted
	// held keeps body's interned copy alive (see internDoc).
	held *[]byte
}

// discoveryCache holds the documents of the latest snapshot asked for.
// Snapshots are immutable and every registry change publishes a new one,
// so comparing pointers is enough to know the documents are current.
type discoveryCache struct {
	cur atomic.Pointer[discoveryDocs]
}

// docs returns the documents of snap, building them if the cache holds
// another snapshot's. Concurrent callers may build twice; both results
// are the same.
func (c *discoveryCache) docs(snap *registry.Snapshot) *discoveryDocs {
	if d := c.cur.Load(); d != nil && d.snap == snap {
		return d
	}
	d := buildDiscovery(snap)
	c.cur.Store(d)
	return d
}

func buildDiscovery(snap *registry.Snapshot) *discoveryDocs {
	d := &discoveryDocs{snap: snap, lists: map[string]apiResourceList{}, groups: []apiGroup{}}
	served := servedGroups(snap)
	for _, g := range served {
		if g.name != "" {
			d.groups = append(d.groups, legacyGroup(g))
		}
		for _, v := range g.versions {
			d.lists[groupVersionString(g.name, v.version)] = legacyResourceList(g.name, v)
		}
	}
	d.core, d.apis = aggregatedDocs(served)
	return d
}

// writeDocument writes a discovery document given as JSON (b, which may
// be a document's shared bytes and is never written to) in mediaType:
// YAML, protobuf (by toProtobuf), or JSON as kube-apiserver's serializer
// lays it out, compact with a final newline or, when pretty, indented by
// two spaces without one. The newline goes out after b, not appended to
// it: two requests once wrote into a shared document's spare capacity.
// Headers other than Content-Type are the caller's.
func writeDocument(w http.ResponseWriter, r *http.Request, b []byte, mediaType, contentType string, pretty bool, toProtobuf func([]byte) ([]byte, error)) {
	var err error
	newline := false
	switch mediaType {
	case "application/yaml":
		b, err = yaml.JSONToYAML(b)
	case "application/vnd.kubernetes.protobuf":
		b, err = toProtobuf(b)
	default:
		if newline = !pretty; pretty {
			var buf bytes.Buffer
			err = json.Indent(&buf, b, "", "  ")
			b = buf.Bytes()
		}
	}
	if err != nil {
		handlers.WriteStatus(w, r, err)
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.Write(b)
	if newline {
		w.Write([]byte{'\n'})
	}
}

// writeDiscovery writes a legacy discovery document in the format the
// request accepts (JSON, YAML or protobuf, as kube-apiserver's discovery
// handlers), after the router's check where kube's router (go-restful)
// makes one: routed lists the media types the route declares, nil for a
// document no such route serves (/apis, a group, a custom resource
// group's version). /api and /apis answer differently by Accept
// (aggregated or not), so caches must key on it.
func writeDiscovery(w http.ResponseWriter, r *http.Request, routed []string, v any) {
	if routed != nil {
		if err := handlers.RouteNotAcceptable(r, routed); err != nil {
			handlers.WriteStatus(w, r, err)
			return
		}
	}
	mediaType, pretty, err := handlers.NegotiateDiscovery(r)
	if err != nil {
		handlers.WriteStatus(w, r, err)
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		handlers.WriteStatus(w, r, err)
		return
	}
	w.Header().Set("Vary", "Accept")
	writeDocument(w, r, b, mediaType, mediaType, pretty, handlers.DiscoveryProtobuf)
}

func (s *server) coreVersions(w http.ResponseWriter, r *http.Request) {
	if mt, pretty, ok := wantsAggregated(r); ok {
		serveAggregated(w, r, s.discovery.docs(s.reg.Snapshot()).core, mt, pretty)
		return
	}
	writeDiscovery(w, r, handlers.DiscoveryRouteMedia, apiVersions{
		Kind:                       "APIVersions",
		Versions:                   []string{"v1"},
		ServerAddressByClientCIDRs: []serverByCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: r.Host}},
	})
}

func (s *server) groupList(w http.ResponseWriter, r *http.Request) {
	d := s.discovery.docs(s.reg.Snapshot())
	if mt, pretty, ok := wantsAggregated(r); ok {
		serveAggregated(w, r, d.apis, mt, pretty)
		return
	}
	writeDiscovery(w, r, nil, apiGroupList{Kind: "APIGroupList", APIVersion: "v1", Groups: d.groups})
}

func (s *server) group(w http.ResponseWriter, r *http.Request, name string) {
	for _, g := range s.discovery.docs(s.reg.Snapshot()).groups {
		if g.Name == name {
			g.Kind, g.APIVersion = "APIGroup", "v1"
			writeDiscovery(w, r, nil, g)
			return
		}
	}
	s.notFound(w, r)
}

func (s *server) resources(w http.ResponseWriter, r *http.Request, group, version string) {
	list, ok := s.discovery.docs(s.reg.Snapshot()).lists[groupVersionString(group, version)]
	if !ok {
		s.notFound(w, r)
		return
	}
	var routed []string
	if builtin.Scheme().IsVersionRegistered(schema.GroupVersion{Group: group, Version: version}) {
		// A built-in group version's route serves GET only.
		if r.Method != http.MethodGet {
			s.methodNotAllowed(w, r)
			return
		}
		routed = handlers.DiscoveryRouteMedia
	}
	writeDiscovery(w, r, routed, list)
}

// verbsOf lists the verbs served on a type's resource.
func verbsOf(t *registry.Type) []string {
	if v, ok := t.Strategy.(registry.Virtual); ok {
		return v.Verbs()
	}
	if !builtinKind(t) {
		if t.CreatesRefused {
			return terminatingVerbs
		}
		return customVerbs
	}
	if registry.SupportsDeleteCollection(t) {
		return resourceVerbs
	}
	return noCollectionDeleteVerbs
}
