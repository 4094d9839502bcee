package endpoints

import (
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"weak"

	"github.com/miniapi/miniapi/endpoints/handlers"
)

// Aggregated discovery (apidiscovery.k8s.io/v2): /api and /apis answer a
// client that asks for it in Accept with every group, version and
// resource in one document, so client-go needs two requests instead of
// one per group version.
const (
	aggregatedGroup   = "apidiscovery.k8s.io"
	aggregatedVersion = "v2"
	aggregatedKind    = "APIGroupDiscoveryList"
)

// The apidiscovery.k8s.io/v2 documents, with Kubernetes' field names.
type apiGroupDiscoveryList struct {
	Kind       string              `json:"kind"`
	APIVersion string              `json:"apiVersion"`
	Metadata   struct{}            `json:"metadata"`
	Items      []apiGroupDiscovery `json:"items"`
}

type apiGroupDiscovery struct {
	Metadata discoveryGroupMeta    `json:"metadata"`
	Versions []apiVersionDiscovery `json:"versions,omitempty"`
}

// discoveryGroupMeta is the ObjectMeta of a group: only its name, empty
// for the core group.
type discoveryGroupMeta struct {
	Name string `json:"name,omitempty"`
}

type apiVersionDiscovery struct {
	Version   string                 `json:"version"`
	Resources []apiResourceDiscovery `json:"resources,omitempty"`
	// Freshness is "Current": miniapi serves every version itself, so
	// none is ever stale.
	Freshness string `json:"freshness,omitempty"`
}

type apiResourceDiscovery struct {
	Resource         string                    `json:"resource"`
	ResponseKind     *discoveryGVK             `json:"responseKind,omitempty"`
	Scope            string                    `json:"scope"`
	SingularResource string                    `json:"singularResource"`
	Verbs            []string                  `json:"verbs"`
	ShortNames       []string                  `json:"shortNames,omitempty"`
	Categories       []string                  `json:"categories,omitempty"`
	Subresources     []apiSubresourceDiscovery `json:"subresources,omitempty"`
}

type apiSubresourceDiscovery struct {
	Subresource  string        `json:"subresource"`
	ResponseKind *discoveryGVK `json:"responseKind,omitempty"`
	Verbs        []string      `json:"verbs"`
}

type discoveryGVK struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// Resource scopes as aggregated discovery spells them.
const (
	scopeNamespaced = "Namespaced"
	scopeCluster    = "Cluster"
)

// aggregatedDocs encodes the aggregated documents of /api (the core
// group) and /apis (every other group) from a snapshot's groups.
func aggregatedDocs(groups []servedGroup) (core, apis encodedDoc) {
	coreList := newGroupDiscoveryList()
	apisList := newGroupDiscoveryList()
	for _, g := range groups {
		item := aggregatedGroupOf(g)
		if g.name == "" {
			coreList.Items = append(coreList.Items, item)
		} else {
			apisList.Items = append(apisList.Items, item)
		}
	}
	return encodeAggregated(coreList), encodeAggregated(apisList)
}

// encodeAggregated encodes an aggregated document, tagged as
// kube-apiserver tags it: the hash of the list's JSON without its kind
// and apiVersion (its handler hashes the list before they are set).
func encodeAggregated(l *apiGroupDiscoveryList) encodedDoc {
	b, err := json.Marshal(l)
	if err != nil {
		// The documents are plain structs of strings; this cannot happen.
		panic(fmt.Sprintf("endpoints: encode discovery: %v", err))
	}
	untyped, err := json.Marshal(struct {
		Metadata struct{}            `json:"metadata"`
		Items    []apiGroupDiscovery `json:"items"`
	}{Items: l.Items})
	if err != nil {
		panic(fmt.Sprintf("endpoints: encode discovery: %v", err))
	}
	return internDoc(encodedDoc{body: b, etag: etagOf(untyped)})
}

func newGroupDiscoveryList() *apiGroupDiscoveryList {
	return &apiGroupDiscoveryList{Kind: aggregatedKind, APIVersion: aggregatedGroup + "/" + aggregatedVersion, Items: []apiGroupDiscovery{}}
}

// aggregatedGroupOf describes one group: its versions in preference
// order, each with its resources and their subresources.
func aggregatedGroupOf(g servedGroup) apiGroupDiscovery {
	out := apiGroupDiscovery{Metadata: discoveryGroupMeta{Name: g.name}}
	for _, v := range g.versions {
		av := apiVersionDiscovery{Version: v.version, Freshness: "Current"}
		for _, res := range v.resources {
			t := &res.Type
			// kube-apiserver names its built-in kinds without their own
			// group and version, a custom resource's kind with them.
			gvk := &discoveryGVK{Group: t.Group, Version: t.Version, Kind: t.Kind}
			if builtinKind(t) {
				gvk = &discoveryGVK{Kind: t.Kind}
			}
			rd := apiResourceDiscovery{
				Resource: t.Plural, ResponseKind: gvk, Scope: scopeCluster, SingularResource: t.Singular,
				Verbs: verbsOf(t), ShortNames: t.ShortNames, Categories: t.Categories,
			}
			if t.Namespaced {
				rd.Scope = scopeNamespaced
			}
			for _, sr := range discoverableSubresources(t) {
				kind := gvk
				if sr.Kind != "" {
					kind = &discoveryGVK{Group: sr.Group, Version: sr.Version, Kind: sr.Kind}
				}
				rd.Subresources = append(rd.Subresources, apiSubresourceDiscovery{Subresource: sr.Name, ResponseKind: kind, Verbs: sr.Verbs})
			}
			av.Resources = append(av.Resources, rd)
		}
		out.Versions = append(out.Versions, av)
	}
	return out
}

// encodeWithETag encodes a document and tags it with the hash of its
// bytes, as kube-apiserver does (upper-case hex SHA-512, quoted).
func encodeWithETag(v any) encodedDoc {
	b, err := json.Marshal(v)
	if err != nil {
		// The documents are plain structs of strings; this cannot happen.
		panic(fmt.Sprintf("endpoints: encode discovery: %v", err))
	}
	return internDoc(encodedDoc{body: b, etag: etagOf(b)})
}

// bodies interns documents' bytes by entity tag, weakly: the servers of
// one process (logical clusters, see server.SharedEtcd) serve mostly
// the same discovery and OpenAPI documents, megabytes each, and keep one
// copy between them for as long as any of them holds it.
var bodies sync.Map // etag → weak.Pointer[[]byte]

// internDoc returns d with the bytes of an identical document already
// held in the process, if there is one, and records d's otherwise.
func internDoc(d encodedDoc) encodedDoc {
	for {
		if p, ok := bodies.Load(d.etag); ok {
			if held := p.(weak.Pointer[[]byte]).Value(); held != nil {
				return encodedDoc{body: *held, etag: d.etag, held: held}
			}
			bodies.CompareAndDelete(d.etag, p)
			continue
		}
		held := &d.body
		wp := weak.Make(held)
		if _, loaded := bodies.LoadOrStore(d.etag, wp); loaded {
			continue
		}
		runtime.AddCleanup(held, func(etag string) { bodies.CompareAndDelete(etag, wp) }, d.etag)
		d.held = held
		return d
	}
}

// etagOf is the quoted entity tag of a document's bytes.
func etagOf(b []byte) string {
	return fmt.Sprintf("%q", fmt.Sprintf("%X", sha512.Sum512(b)))
}

// wantsAggregated reports whether a request to /api or /apis asks for
// the aggregated document, and in which format: kube's negotiation and
// kube's test for it, so the first clause asking for an
// apidiscovery.k8s.io/v2 APIGroupDiscoveryList wins, in JSON, YAML or
// protobuf; any other clause means the legacy document.
func wantsAggregated(r *http.Request) (mediaType string, pretty, ok bool) {
	return handlers.NegotiateAggregated(r)
}

// serveAggregated writes an aggregated document in mediaType (JSON
// indented when pretty), or 304 Not
// Modified when the client already holds this version of it. Every
// format carries the entity tag of the JSON, as kube-apiserver's.
func serveAggregated(w http.ResponseWriter, r *http.Request, doc encodedDoc, mediaType string, pretty bool) {
	h := w.Header()
	h.Set("ETag", doc.etag)
	h.Set("Vary", "Accept")
	h.Set("Cache-Control", "public")
	if etagMatches(r.Header.Get("If-None-Match"), doc.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	// client-go recognises the document by its g, v and as parameters.
	contentType := mediaType + ";g=" + aggregatedGroup + ";v=" + aggregatedVersion + ";as=" + aggregatedKind
	writeDocument(w, r, doc.body, mediaType, contentType, pretty, handlers.AggregatedProtobuf)
}

// etagMatches reports whether an If-None-Match header names etag (or is
// "*"). Weak tags compare by their opaque part, as RFC 9110 asks of
// If-None-Match.
func etagMatches(ifNoneMatch, etag string) bool {
	for tag := range strings.SplitSeq(ifNoneMatch, ",") {
		tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
		if tag == etag || tag == "*" {
			return true
		}
	}
	return false
}
