package handlers

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	goruntime "runtime"
	"strconv"
	"sync"
	"weak"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/builtin"
	"github.com/miniapi/miniapi/registry"
	"github.com/miniapi/miniapi/storage"
	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)

// mediaProtobuf is Kubernetes' protobuf encoding: the "k8s\x00" magic,
// then a runtime.Unknown carrying apiVersion, kind and the object's
// generated protobuf message.
const mediaProtobuf = "application/vnd.kubernetes.protobuf"

// mediaProtobufWatch is the Content-Type of a protobuf watch: WatchEvent
// messages, each preceded by its length as a 4-byte big-endian integer.
const mediaProtobufWatch = mediaProtobuf + ";stream=watch"

// protoCodec converts between miniapi's JSON and Kubernetes' protobuf at
// the HTTP edge, through the generated Go types of the built-in kinds
// (builtin.Scheme): JSON is decoded into the Go type and that is
// marshalled, and the reverse. Nothing behind the handlers sees a Go
// type. Custom types stay JSON-only, as custom resources are in
// Kubernetes.
type protoCodec struct {
	scheme     *runtime.Scheme
	serializer *protobuf.Serializer
}

// protoCodecs is built once, on first use, and only read afterwards.
var protoCodecs = sync.OnceValue(func() *protoCodec {
	s := builtin.Scheme()
	return &protoCodec{scheme: s, serializer: protobuf.NewSerializer(s, s)}
})

// servesProtobuf reports whether objects of t are served in protobuf.
func servesProtobuf(t *registry.Type) bool {
	if t == nil {
		return false
	}
	gv := schema.GroupVersion{Group: t.Group, Version: t.Version}
	s := protoCodecs().scheme
	// Reviews (kinds created and answered, never listed) have no list
	// kind.
	return s.Recognizes(gv.WithKind(t.Kind)) && (s.Recognizes(gv.WithKind(t.ListKind)) || registry.IsVirtual(t))
}

// writeAnswer writes the JSON of an object of any built-in kind (a
// review, a TokenRequest, a Status) in the negotiated format: the object
// names its own kind.
func writeAnswer(w http.ResponseWriter, out output, code int, data []byte) {
	if out.mediaType != mediaProtobuf {
		writeJSONBytes(w, out, code, data)
		return
	}
	var tm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	var pb []byte
	err := json.Unmarshal(data, &tm)
	if err == nil {
		gvk := schema.FromAPIVersionAndKind(tm.APIVersion, tm.Kind)
		if gvk == (schema.GroupVersionKind{Version: "v1", Kind: "Status"}) {
			var st api.Status
			if err = json.Unmarshal(data, &st); err == nil {
				pb, err = protoCodecs().status(st)
			}
		} else {
			pb, err = protoCodecs().fromJSON(gvk, data)
		}
	}
	if err != nil {
		// Only our own encodings reach here; answer JSON rather than
		// lose the answer.
		out.mediaType = mediaJSON
		writeJSONBytes(w, out, code, data)
		return
	}
	writeProtobuf(w, code, pb)
}

// encode marshals a typed object, whose TypeMeta must be set, as a
// runtime.Unknown behind the protobuf magic.
func (c *protoCodec) encode(obj runtime.Object) ([]byte, error) {
	var buf bytes.Buffer
	if err := c.serializer.Encode(obj, &buf); err != nil {
		return nil, fmt.Errorf("handlers: protobuf encode %s: %w", obj.GetObjectKind().GroupVersionKind(), err)
	}
	return buf.Bytes(), nil
}

// fromJSON encodes the JSON of an object of kind gvk in protobuf: decoded
// into the kind's Go type, then marshalled.
func (c *protoCodec) fromJSON(gvk schema.GroupVersionKind, data []byte) ([]byte, error) {
	obj, err := c.scheme.New(gvk)
	if err != nil {
		return nil, fmt.Errorf("handlers: protobuf encode: %w", err)
	}
	if err := json.Unmarshal(data, obj); err != nil {
		return nil, fmt.Errorf("handlers: protobuf encode %s: decode JSON: %w", gvk, err)
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return c.encode(obj)
}

// status encodes a Status in protobuf.
func (c *protoCodec) status(st api.Status) ([]byte, error) {
	data, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	var s metav1.Status
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, err
	}
	s.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "Status"})
	return c.encode(&s)
}

// partialFromJSON encodes a PartialObjectMetadata or
// PartialObjectMetadataList given as JSON in protobuf. The meta.k8s.io
// kinds are served in protobuf for every type, custom ones included, as
// kube-apiserver serves them for custom resources.
func (c *protoCodec) partialFromJSON(apiVersion, kind string, data []byte) ([]byte, error) {
	var obj runtime.Object
	if kind == asPartialList {
		obj = &metav1.PartialObjectMetadataList{}
	} else {
		obj = &metav1.PartialObjectMetadata{}
	}
	if err := json.Unmarshal(data, obj); err != nil {
		return nil, fmt.Errorf("handlers: protobuf encode %s: decode JSON: %w", kind, err)
	}
	obj.GetObjectKind().SetGroupVersionKind(schema.FromAPIVersionAndKind(apiVersion, kind))
	return c.encode(obj)
}

// toJSON decodes a protobuf request body into JSON. The body names its
// own kind; t's kind fills in what it leaves out. A body that does not
// decode is 400, worded as kube-apiserver words it.
func (c *protoCodec) toJSON(t *registry.Type, body []byte) ([]byte, error) {
	defaults := schema.GroupVersionKind{Group: t.Group, Version: t.Version, Kind: t.Kind}
	obj, gvk, err := c.serializer.Decode(body, &defaults, nil)
	if err != nil {
		if gvk != nil && gvk.Kind != "" {
			return nil, api.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", gvk.Kind, gvk.Version, t.Kind, err))
		}
		return nil, api.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %v (%s)", t.Kind, err, api.SummarizeBody(body)))
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, api.NewBadRequest(fmt.Sprintf("%s cannot be handled as a %s: %v", gvk.Kind, t.Kind, err))
	}
	return data, nil
}

// writeProtobuf writes an encoded protobuf response.
func writeProtobuf(w http.ResponseWriter, code int, data []byte) {
	w.Header().Set("Content-Type", mediaProtobuf)
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(code)
	w.Write(data)
}

// kindOf and listKindOf name a type's kinds for the codec.
func kindOf(t *registry.Type) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: t.Group, Version: t.Version, Kind: t.Kind}
}

func listKindOf(t *registry.Type) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: t.Group, Version: t.Version, Kind: t.ListKind}
}

// protoWatchEvent encodes one watch event as a WatchEvent message
// embedding obj, an object already in the protobuf envelope.
func protoWatchEvent(typ string, obj []byte) ([]byte, error) {
	ev := metav1.WatchEvent{Type: typ, Object: runtime.RawExtension{Raw: obj}}
	return ev.Marshal()
}

// protoObjectCache remembers the protobuf encoding of stored objects, so
// that an event's object is encoded once however many protobuf watchers
// receive it: the watch cache hands every watcher of an event the same
// immutable *storage.Object. Entries are keyed by that pointer, held
// weakly, and dropped when the object is garbage collected.
type protoObjectCache struct {
	mu sync.Mutex
	m  map[weak.Pointer[storage.Object]][]byte
}

// sharedProtoObjects serves every protobuf watch of the process.
var sharedProtoObjects = &protoObjectCache{m: map[weak.Pointer[storage.Object]][]byte{}}

// get returns obj's encoding, calling encode only if no watcher has
// encoded obj yet. Concurrent first calls may both encode; one result is
// kept, and both are equal.
func (c *protoObjectCache) get(obj *storage.Object, encode func() ([]byte, error)) ([]byte, error) {
	key := weak.Make(obj)
	c.mu.Lock()
	b, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return b, nil
	}
	b, err := encode()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if kept, ok := c.m[key]; ok {
		return kept, nil
	}
	c.m[key] = b
	goruntime.AddCleanup(obj, c.drop, key)
	return b, nil
}

// drop forgets a collected object's encoding.
func (c *protoObjectCache) drop(key weak.Pointer[storage.Object]) {
	c.mu.Lock()
	delete(c.m, key)
	c.mu.Unlock()
}

// len is the number of encodings held.
func (c *protoObjectCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// appendLengthPrefix frames a protobuf watch message for a chunked HTTP
// stream, as client-go's length-delimited frame reader expects.
func appendLengthPrefix(dst []byte, msg []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(msg)))
	return append(dst, msg...)
}

// discoveryKinds are the meta.k8s.io kinds of the legacy discovery
// documents, by kind.
var discoveryKinds = map[string]func() runtime.Object{
	"APIVersions":     func() runtime.Object { return &metav1.APIVersions{} },
	"APIGroupList":    func() runtime.Object { return &metav1.APIGroupList{} },
	"APIGroup":        func() runtime.Object { return &metav1.APIGroup{} },
	"APIResourceList": func() runtime.Object { return &metav1.APIResourceList{} },
}

// DiscoveryProtobuf encodes a legacy discovery document given as JSON in
// protobuf, as kube-apiserver serves it to a client that asks: the
// envelope carries the document's own apiVersion and kind (/api's and
// /api/v1's have no apiVersion).
func DiscoveryProtobuf(data []byte) ([]byte, error) {
	var tm metav1.TypeMeta
	if err := json.Unmarshal(data, &tm); err != nil {
		return nil, err
	}
	mk, ok := discoveryKinds[tm.Kind]
	if !ok {
		return nil, fmt.Errorf("handlers: no protobuf form for discovery kind %q", tm.Kind)
	}
	obj := mk()
	if err := json.Unmarshal(data, obj); err != nil {
		return nil, err
	}
	obj.GetObjectKind().SetGroupVersionKind(schema.FromAPIVersionAndKind(tm.APIVersion, tm.Kind))
	return protoCodecs().encode(obj)
}

// AggregatedProtobuf encodes an aggregated discovery document given as
// JSON in protobuf.
func AggregatedProtobuf(data []byte) ([]byte, error) {
	var list apidiscoveryv2.APIGroupDiscoveryList
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, err
	}
	list.SetGroupVersionKind(apidiscoveryv2.SchemeGroupVersion.WithKind("APIGroupDiscoveryList"))
	return protoCodecs().encode(&list)
}
