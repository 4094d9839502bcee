package endpoints

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/miniapi/miniapi/registry"
)

// Discovery documents, with Kubernetes' field names.
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

type apiResource struct {
	Name         string   `json:"name"`
	SingularName string   `json:"singularName"`
	Namespaced   bool     `json:"namespaced"`
	Kind         string   `json:"kind"`
	Verbs        []string `json:"verbs"`
	ShortNames   []string `json:"shortNames,omitempty"`
	Categories   []string `json:"categories,omitempty"`
}

type apiResourceList struct {
	Kind         string        `json:"kind"`
	APIVersion   string        `json:"apiVersion,omitempty"`
	GroupVersion string        `json:"groupVersion"`
	Resources    []apiResource `json:"resources"`
}

var (
	resourceVerbs    = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
	subresourceVerbs = []string{"get", "patch", "update"}
)

// groups returns the served API groups other than core, each with its
// versions, from one registry snapshot.
func groups(snap *registry.Snapshot) []apiGroup {
	byName := map[string]*apiGroup{}
	var order []string
	for _, res := range snap.Resources() {
		t := res.Type
		if t.Group == "" {
			continue
		}
		g, ok := byName[t.Group]
		if !ok {
			g = &apiGroup{Name: t.Group}
			byName[t.Group] = g
			order = append(order, t.Group)
		}
		gv := groupVersion{GroupVersion: t.APIVersion(), Version: t.Version}
		if !slices.Contains(g.Versions, gv) {
			g.Versions = append(g.Versions, gv)
		}
	}
	out := make([]apiGroup, 0, len(order))
	for _, name := range order {
		g := byName[name]
		g.PreferredVersion = g.Versions[0]
		out = append(out, *g)
	}
	return out
}

// resourceList is the APIResourceList of one group version, or false when
// nothing is served there.
func resourceList(snap *registry.Snapshot, group, version string) (apiResourceList, bool) {
	gv := version
	if group != "" {
		gv = group + "/" + version
	}
	list := apiResourceList{Kind: "APIResourceList", APIVersion: "v1", GroupVersion: gv, Resources: []apiResource{}}
	for _, res := range snap.Resources() {
		t := &res.Type
		if t.Group != group || t.Version != version {
			continue
		}
		list.Resources = append(list.Resources, apiResource{
			Name: t.Plural, SingularName: t.Singular, Namespaced: t.Namespaced, Kind: t.Kind,
			Verbs: resourceVerbs, ShortNames: t.ShortNames, Categories: t.Categories,
		})
		if registry.HasStatus(t) {
			list.Resources = append(list.Resources, apiResource{
				Name: t.Plural + "/status", Namespaced: t.Namespaced, Kind: t.Kind, Verbs: subresourceVerbs,
			})
		}
	}
	return list, len(list.Resources) > 0
}

// writeDiscovery writes a discovery document as JSON.
func writeDiscovery(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "encoding failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

func (s *server) coreVersions(w http.ResponseWriter, r *http.Request) {
	writeDiscovery(w, apiVersions{
		Kind:                       "APIVersions",
		Versions:                   []string{"v1"},
		ServerAddressByClientCIDRs: []serverByCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: r.Host}},
	})
}

func (s *server) groupList(w http.ResponseWriter, r *http.Request) {
	writeDiscovery(w, apiGroupList{Kind: "APIGroupList", APIVersion: "v1", Groups: groups(s.reg.Snapshot())})
}

func (s *server) group(w http.ResponseWriter, r *http.Request, name string) {
	for _, g := range groups(s.reg.Snapshot()) {
		if g.Name == name {
			g.Kind, g.APIVersion = "APIGroup", "v1"
			writeDiscovery(w, g)
			return
		}
	}
	s.notFound(w, r)
}

func (s *server) resources(w http.ResponseWriter, r *http.Request, group, version string) {
	list, ok := resourceList(s.reg.Snapshot(), group, version)
	if !ok {
		s.notFound(w, r)
		return
	}
	writeDiscovery(w, list)
}
