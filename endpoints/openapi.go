package endpoints

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	openapiv3 "github.com/google/gnostic-models/openapiv3"
	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	"github.com/munnerz/goautoneg"
	"google.golang.org/protobuf/proto"
)

// The OpenAPI endpoints, with kube-apiserver's negotiation and caching:
//
//   - /openapi/v2: Swagger 2.0, as JSON or as the gnostic protobuf that
//     kubectl asks for (application/com.github.proto-openapi.spec.v2.v1.0+protobuf);
//   - /openapi/v3: the index, {"paths":{"api/v1":{"serverRelativeURL":
//     "/openapi/v3/api/v1?hash=<H>"},...}}, H being the document's ETag;
//   - /openapi/v3/api/v1 and /openapi/v3/apis/<g>/<v>: one group
//     version's document, JSON or protobuf. With ?hash= matching the
//     current document it may be cached for good (Cache-Control: public,
//     immutable); with a stale hash the client is redirected (301) to
//     the current one.
//
// ETags are the upper-case hex SHA-512 of the JSON document; the protobuf
// encoding shares its JSON's ETag, which Vary: Accept keeps apart in
// caches, as in kube-apiserver.

// Media types of the OpenAPI documents. The '@' forms are older names
// clients still send; answers use the dotted forms.
const (
	mediaOpenAPIV2Proto           = "com.github.proto-openapi.spec.v2.v1.0+protobuf"
	mediaOpenAPIV2ProtoDeprecated = "com.github.proto-openapi.spec.v2@v1.0+protobuf"
	mediaOpenAPIV3Proto           = "com.github.proto-openapi.spec.v3.v1.0+protobuf"
	mediaOpenAPIV3ProtoDeprecated = "com.github.proto-openapi.spec.v3@v1.0+protobuf"
)

// openAPIDocs are the OpenAPI documents of one registry snapshot. Each
// version is built when first asked for: clients that read v3 (kubectl
// explain, kube's mutating policy plugin) never need v2, and kubectl's
// v2 users not v3; a build is ~100 ms of CPU.
type openAPIDocs struct {
	snap *registry.Snapshot
	v2   func() (*openAPIV2, error)
	v3   func() (*openAPIV3, error)
}

// openAPIV2 is a snapshot's Swagger 2.0 document.
type openAPIV2 struct {
	doc encodedDoc
	// proto is made on first request and kept: kubectl asks for v2 as
	// protobuf.
	proto func() ([]byte, error)
}

// openAPIV3 is a snapshot's OpenAPI v3 index and documents.
type openAPIV3 struct {
	index encodedDoc
	docs  map[string]encodedDoc // by index key, "api/v1" or "apis/<g>/<v>"
	// proto holds each document's protobuf encoding, made on first
	// request and kept: few clients ask for it.
	proto map[string]func() ([]byte, error)
}

// Definitions supplies Kubernetes' own OpenAPI definitions: those of the
// built-in kinds (named by registry.OpenAPIModeler) and of the meta types
// every document refers to (ObjectMeta, ListMeta, Status,
// DeleteOptions, WatchEvent, Patch, autoscaling/v1 Scale), so that
// documents carry kube's schemas and descriptions. builtin.OpenAPI is
// the implementation.
type Definitions interface {
	// V2 returns the Swagger 2.0 definitions of the named models and
	// every model they refer to, by name, as decoded JSON.
	V2(names ...string) (map[string]any, error)
	// V3 returns the same as OpenAPI v3 schemas.
	V3(names ...string) (map[string]any, error)
}

// openAPICache holds the documents of the latest snapshot asked for, as
// discoveryCache does.
type openAPICache struct {
	defs Definitions
	// opts say what of the server in front the documents describe.
	opts docOptions
	// mu serialises builds: a new snapshot is built once, however many
	// requests ask for it at once.
	mu  sync.Mutex
	cur atomic.Pointer[openAPIDocs]
}

func (c *openAPICache) docs(snap *registry.Snapshot) *openAPIDocs {
	if d := c.cur.Load(); d != nil && d.snap == snap {
		return d
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if d := c.cur.Load(); d != nil && d.snap == snap {
		return d
	}
	d := newOpenAPIDocs(snap, c.defs, c.opts)
	c.cur.Store(d)
	return d
}

// v2 returns the Swagger 2.0 document of snap.
func (c *openAPICache) v2(snap *registry.Snapshot) (*openAPIV2, error) { return c.docs(snap).v2() }

// v3 returns the OpenAPI v3 documents of snap.
func (c *openAPICache) v3(snap *registry.Snapshot) (*openAPIV3, error) { return c.docs(snap).v3() }

// newOpenAPIDocs returns the documents of snap, each built once, when
// first asked for.
func newOpenAPIDocs(snap *registry.Snapshot, defs Definitions, opts docOptions) *openAPIDocs {
	return &openAPIDocs{
		snap: snap,
		v2:   sync.OnceValues(func() (*openAPIV2, error) { return buildOpenAPIV2(snap, defs, opts) }),
		v3:   sync.OnceValues(func() (*openAPIV3, error) { return buildOpenAPIV3(snap, defs, opts) }),
	}
}

func buildOpenAPIV2(snap *registry.Snapshot, defs Definitions, opts docOptions) (*openAPIV2, error) {
	groups := servedGroups(snap)
	kube, err := defs.V2(kubeModels(groups)...)
	if err != nil {
		return nil, err
	}
	d := &openAPIV2{doc: encodeWithETag(v2Document(groups, kube, opts))}
	d.proto = sync.OnceValues(func() ([]byte, error) { return v2Protobuf(d.doc.body) })
	return d, nil
}

func buildOpenAPIV3(snap *registry.Snapshot, defs Definitions, opts docOptions) (*openAPIV3, error) {
	groups := servedGroups(snap)
	kube, err := defs.V3(kubeModels(groups)...)
	if err != nil {
		return nil, err
	}
	d := &openAPIV3{docs: map[string]encodedDoc{}, proto: map[string]func() ([]byte, error){}}
	index := jsonObj{}
	for _, g := range groups {
		for _, v := range g.versions {
			key := OpenAPIV3Key(g.name, v.version)
			doc := encodeWithETag(v3Document(groupVersionKey{g.name, v.version}, v.resources, kube, opts))
			d.docs[key] = doc
			d.proto[key] = sync.OnceValues(func() ([]byte, error) { return v3Protobuf(doc.body) })
			index[key] = jsonObj{"serverRelativeURL": serverRelativeURL(key, doc.etag)}
		}
	}
	for _, dd := range discoveryPathDocs(groups, opts.issuer) {
		doc := encodeWithETag(v3DiscoveryDocument(dd, kube, opts))
		d.docs[dd.key] = doc
		d.proto[dd.key] = sync.OnceValues(func() ([]byte, error) { return v3Protobuf(doc.body) })
		index[dd.key] = jsonObj{"serverRelativeURL": serverRelativeURL(dd.key, doc.etag)}
	}
	d.index = encodeWithETag(jsonObj{"paths": index})
	return d, nil
}

// serverRelativeURL is where the index sends a client for a group
// version's document: its path with the document's hash.
func serverRelativeURL(key, etag string) string {
	return "/openapi/v3/" + key + "?hash=" + strings.Trim(etag, `"`)
}

// v2Protobuf encodes a Swagger 2.0 JSON document as gnostic's protobuf.
func v2Protobuf(doc []byte) ([]byte, error) {
	pb, err := openapiv2.ParseDocument(doc)
	if err != nil {
		return nil, fmt.Errorf("endpoints: openapi v2 to protobuf: %w", err)
	}
	return proto.Marshal(pb)
}

// v3Protobuf encodes an OpenAPI v3 JSON document as gnostic's protobuf.
func v3Protobuf(doc []byte) ([]byte, error) {
	pb, err := openapiv3.ParseDocument(doc)
	if err != nil {
		return nil, fmt.Errorf("endpoints: openapi v3 to protobuf: %w", err)
	}
	return proto.Marshal(pb)
}

// openAPIFormat is the encoding a request asked for, as kube-openapi's
// handlers pick it (goautoneg's order of clauses; each clause tried
// against JSON, then the protobuf types): an empty Accept is */*, and a
// wildcard leaves the choice to the server, JSON.
func openAPIFormat(r *http.Request, protoTypes ...string) (protobuf, ok bool) {
	accept := r.Header.Get("Accept")
	if accept == "" {
		accept = "*/*"
	}
	for _, c := range goautoneg.ParseAccept(accept) {
		if (c.Type == "application" || c.Type == "*") && (c.SubType == "json" || c.SubType == "*") {
			return false, true
		}
		for _, pt := range protoTypes {
			if (c.Type == "application" || c.Type == "*") && (c.SubType == pt || c.SubType == "*") {
				return true, true
			}
		}
	}
	return false, false
}

func (s *server) openAPIV2(w http.ResponseWriter, r *http.Request) {
	d, err := s.openapi.v2(s.reg.Snapshot())
	if err != nil {
		s.openAPIFailed(w, err)
		return
	}
	protobuf, ok := openAPIFormat(r, mediaOpenAPIV2Proto, mediaOpenAPIV2ProtoDeprecated)
	switch {
	case !ok:
		notAcceptable(w)
	case protobuf:
		b, err := d.proto()
		if err != nil {
			s.openAPIFailed(w, err)
			return
		}
		serveDocument(w, r, "application/"+mediaOpenAPIV2Proto, b, d.doc.etag)
	default:
		serveDocument(w, r, "application/json", d.doc.body, d.doc.etag)
	}
}

func (s *server) openAPIV3Index(w http.ResponseWriter, r *http.Request) {
	d, err := s.openapi.v3(s.reg.Snapshot())
	if err != nil {
		s.openAPIFailed(w, err)
		return
	}
	serveDocument(w, r, "application/json", d.index.body, d.index.etag)
}

// openAPIV3Doc serves the document of the group version at key.
func (s *server) openAPIV3Doc(w http.ResponseWriter, r *http.Request, key string) {
	d, err := s.openapi.v3(s.reg.Snapshot())
	if err != nil {
		s.openAPIFailed(w, err)
		return
	}
	doc, found := d.docs[key]
	if !found {
		// kube-openapi's answer: the code, no body.
		w.WriteHeader(http.StatusNotFound)
		return
	}
	protobuf, ok := openAPIFormat(r, mediaOpenAPIV3Proto, mediaOpenAPIV3ProtoDeprecated)
	if !ok {
		notAcceptable(w)
		return
	}
	if hash := r.URL.Query().Get("hash"); hash != "" {
		if hash != strings.Trim(doc.etag, `"`) {
			// The client's index is out of date: send it to the document
			// as it is now.
			http.Redirect(w, r, serverRelativeURL(key, doc.etag), http.StatusMovedPermanently)
			return
		}
		// This URL names this exact document for good.
		w.Header().Set("Cache-Control", "public, immutable")
		w.Header().Set("Expires", time.Now().UTC().AddDate(1, 0, 0).Format(http.TimeFormat))
	}
	if !protobuf {
		serveDocument(w, r, "application/json", doc.body, doc.etag)
		return
	}
	b, err := d.proto[key]()
	if err != nil {
		s.openAPIFailed(w, err)
		return
	}
	serveDocument(w, r, "application/"+mediaOpenAPIV3Proto, b, doc.etag)
}

// serveDocument writes a document with its ETag; http.ServeContent
// answers a matching If-None-Match with 304. There is deliberately no
// Last-Modified: its one-second resolution could make a client that
// revalidates by date keep a document replaced within the same second.
func serveDocument(w http.ResponseWriter, r *http.Request, contentType string, body []byte, etag string) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("ETag", etag)
	h.Add("Vary", "Accept")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
}

// notAcceptable answers an OpenAPI request whose Accept names no format
// served as kube-openapi does: 406 and nothing else.
func notAcceptable(w http.ResponseWriter) {
	w.Header().Add("Vary", "Accept")
	w.WriteHeader(http.StatusNotAcceptable)
}

// openAPIFailed reports a document that could not be encoded: a bug, or a
// type schema the protobuf encoding cannot represent.
func (s *server) openAPIFailed(w http.ResponseWriter, err error) {
	s.log.Error("endpoints: serving openapi", "err", err)
	writeStatus(w, api.NewInternalError(err))
}

// noDefinitions is the Definitions of a server configured without any:
// its documents cannot be built.
type noDefinitions struct{}

func (noDefinitions) V2(...string) (map[string]any, error) {
	return nil, errors.New("endpoints: no OpenAPI definitions configured")
}

func (noDefinitions) V3(...string) (map[string]any, error) {
	return nil, errors.New("endpoints: no OpenAPI definitions configured")
}

// metaModels are the meta types every document refers to.
var metaModels = []string{defObjectMeta, defListMeta, defStatus, defDeleteOptions, defWatchEvent, defPatch}

// kubeModels names Kubernetes' definitions a snapshot's documents use:
// the meta types, Scale when a served type has a scale subresource, and
// every built-in kind served, so that one build per OpenAPI version
// fetches them all.
func kubeModels(groups []servedGroup) []string {
	names := append(append([]string(nil), metaModels...), discoveryModels...)
	for _, g := range groups {
		for _, v := range g.versions {
			if hasScale(v.resources) {
				names = append(names, defScale)
			}
			for _, res := range v.resources {
				if m, ok := res.Type.Strategy.(registry.OpenAPIModeler); ok {
					kind, list := m.OpenAPIModels()
					names = append(names, kind, list)
				}
				bodies, options := subresourceModels(res)
				names = append(append(names, bodies...), options...)
			}
		}
	}
	names = slices.DeleteFunc(names, func(n string) bool { return n == "" }) // a kind without a list
	slices.Sort(names)
	return slices.Compact(names)
}

// closure returns the definitions roots name and every definition they
// refer to, transitively, from defs; refPrefix is the document's
// reference prefix.
func closure(defs map[string]any, refPrefix string, roots ...string) map[string]any {
	out := map[string]any{}
	var visit func(name string)
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if r, ok := x["$ref"].(string); ok && strings.HasPrefix(r, refPrefix) {
				visit(strings.TrimPrefix(r, refPrefix))
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	visit = func(name string) {
		if _, done := out[name]; done {
			return
		}
		def, ok := defs[name]
		if !ok {
			return
		}
		out[name] = def
		walk(def)
	}
	for _, r := range roots {
		visit(r)
	}
	return out
}
