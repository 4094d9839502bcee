package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	"github.com/miniapi/miniapi/storage"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	"k8s.io/apiserver/pkg/endpoints/discovery/aggregated"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
	"sigs.k8s.io/yaml"
)

// Media types miniapi reads and writes.
const (
	mediaJSON = "application/json"
	mediaYAML = "application/yaml"
)

// acceptedMedia lists the formats responses are served in, for 406 and
// 415 messages: every type's, as kube-apiserver lists them (a custom
// resource is served in protobuf as PartialObjectMetadata only).
func acceptedMedia() []string { return routeMedia }

// The kinds a response may be converted to with the as parameter of an
// Accept clause (with g=meta.k8s.io and v=v1 or v1beta1).
const (
	asTable       = "Table"
	asPartial     = "PartialObjectMetadata"
	asPartialList = "PartialObjectMetadataList"
)

// output is a negotiated response format.
type output struct {
	mediaType string
	pretty    bool
	// as is the kind the response is converted to: "" for the resource
	// itself, or asTable, asPartial or asPartialList.
	as string
	// asVersion is the meta.k8s.io version of that kind: v1 or v1beta1.
	asVersion string
}

// asAPIVersion is the apiVersion of the conversion target.
func (o output) asAPIVersion() string { return api.MetaGroup + "/" + o.asVersion }

// negotiateOutput picks the format of an answer about t, an object of t
// or its Scale, with kube's negotiation (see negotiate). A clause that
// asks for a conversion (as, g, v) is producible only for the meta.k8s.io
// kinds in v1 or v1beta1, Table only as JSON or YAML; protobuf is
// producible for built-in kinds and for PartialObjectMetadata of any
// kind (kube's handler of custom resources answers their Scale in JSON
// or YAML only too). Anything else is skipped, and nothing producible is
// 406.
func negotiateOutput(r *http.Request, t *registry.Type) (output, error) {
	proto := servesProtobuf(t)
	out, ok := negotiate(r, func(mt, as string) bool {
		switch {
		case mt == mediaProtobuf:
			return as == asPartial || as == asPartialList || (as == "" && proto)
		case as == asTable:
			return mt == mediaJSON || mt == mediaYAML
		}
		return true
	})
	if !ok {
		return out, api.NewNotAcceptable(acceptedMedia())
	}
	return out, nil
}

// negotiateStatus picks the format of an error's Status as kube-apiserver
// does: conversions do not apply to a Status, so clauses asking for one
// are skipped; protobuf is fine (Status has a protobuf form); nothing
// acceptable falls back to JSON rather than lose the error.
func negotiateStatus(r *http.Request) output {
	out, _ := negotiate(r, func(_, as string) bool { return as == "" })
	return out
}

// negotiate returns the response format kube-apiserver's negotiation
// (its own code) picks from the Accept header among JSON, YAML and
// protobuf, where producible allows the media type and conversion; or
// JSON and false when it picks none. kube's rules, not RFC 9110's: every
// clause is a candidate in the order goautoneg sorts them (q=0 included,
// last), a wildcard matches the formats in that order, and parameters
// it does not know are ignored.
func negotiate(r *http.Request, producible func(mediaType, as string) bool) (output, bool) {
	out := output{mediaType: mediaJSON}
	opts, ok := negotiation.NegotiateMediaTypeOptions(r.Header.Get("Accept"), servedMedia, restrictions(producible))
	out.pretty = opts.Pretty || wantsPretty(r)
	if !ok {
		return out, false
	}
	out.mediaType = opts.Accepted.MediaType
	if c := opts.Convert; c != nil {
		out.as, out.asVersion = c.Kind, c.Version
	}
	return out, true
}

// servedMedia are the formats responses are written in, in kube's order
// (its serializers'); JSON and protobuf stream watch events.
var servedMedia = []runtime.SerializerInfo{
	{MediaType: mediaJSON, MediaTypeType: "application", MediaTypeSubType: "json", StreamSerializer: &runtime.StreamSerializerInfo{}},
	{MediaType: mediaYAML, MediaTypeType: "application", MediaTypeSubType: "yaml"},
	{MediaType: mediaProtobuf, MediaTypeType: "application", MediaTypeSubType: "vnd.kubernetes.protobuf", StreamSerializer: &runtime.StreamSerializerInfo{}},
}

// restrictions adapts a producible func to kube's EndpointRestrictions:
// a conversion is producible only to the meta.k8s.io kinds, in v1 or
// v1beta1, as kube's request scope allows.
type restrictions func(mediaType, as string) bool

// AllowsMediaTypeTransform reports whether typ/subtype, converted to
// target (nil for none), can be produced.
func (p restrictions) AllowsMediaTypeTransform(typ, subtype string, target *schema.GroupVersionKind) bool {
	mt := typ + "/" + subtype
	if target == nil {
		return p(mt, "")
	}
	if target.Group != api.MetaGroup || (target.Version != "v1" && target.Version != "v1beta1") {
		return false
	}
	switch target.Kind {
	case asTable, asPartial, asPartialList:
		return p(mt, target.Kind)
	}
	return false
}

// AllowsServerVersion refuses every sv parameter, as kube does.
func (restrictions) AllowsServerVersion(string) bool { return false }

// AllowsStreamSchema allows stream=watch only.
func (restrictions) AllowsStreamSchema(s string) bool { return s == "watch" }

// wantsPretty follows kube-apiserver: ?pretty=true, or by default for
// browsers and command-line fetchers.
func wantsPretty(r *http.Request) bool {
	if p := r.URL.Query().Get("pretty"); p != "" {
		b, err := strconv.ParseBool(p)
		return err == nil && b
	}
	ua := r.UserAgent()
	return strings.HasPrefix(ua, "curl") || strings.HasPrefix(ua, "Wget") || strings.HasPrefix(ua, "Mozilla/5.0")
}

// writeObject answers with one stored object in the negotiated format,
// converted to a Table or PartialObjectMetadata when the client asked.
func (q *request) writeObject(out output, code int, obj *storage.Object) {
	proto := out.mediaType == mediaProtobuf
	data := obj.Data
	var err error
	switch out.as {
	case "":
		auditResponseObject(q.r, obj.Data)
		if proto {
			data, err = protoCodecs().fromJSON(kindOf(q.t), obj.Data)
		}
	case asPartial:
		data, err = encodePartialObject(out.asAPIVersion(), obj.Data)
		if err == nil && proto {
			data, err = protoCodecs().partialFromJSON(out.asAPIVersion(), asPartial, data)
		}
	case asPartialList:
		err = notAList(kindOf(q.t))
	case asTable:
		var p *tablePrinter
		if p, err = newTablePrinter(q.r.Context(), q.t, out, q.r.URL.Query()); err == nil {
			data, err = p.encodeObject(obj.Data, true)
		}
	}
	if err != nil {
		q.fail(err)
		return
	}
	writeEncoded(q.w, out, code, data)
}

// writeItems answers with a list of stored objects in the negotiated
// format: the type's <Kind>List, a PartialObjectMetadataList or a Table.
func (q *request) writeItems(out output, code int, meta api.ListMeta, items []*storage.Object) {
	proto := out.mediaType == mediaProtobuf
	var data []byte
	var err error
	switch out.as {
	case "":
		shape := listShapeOf(q.t)
		if !auditLevel(q.r).Less(auditinternal.LevelRequestResponse) {
			if data, err := encodeItems(shape, meta, items); err == nil {
				auditResponseObject(q.r, data)
			}
		}
		if !proto {
			writeList(q.w, out, code, shape, meta, items)
			return
		}
		if data, err = encodeItems(shape, meta, items); err == nil {
			data, err = protoCodecs().fromJSON(listKindOf(q.t), data)
		}
	case asPartial:
		err = aList(q.t.ListKind)
	case asPartialList:
		var l *api.PartialObjectMetadataList
		if l, err = partialObjectList(out.asAPIVersion(), meta, items); err == nil {
			data, err = json.Marshal(l)
		}
		if err == nil && proto {
			data, err = protoCodecs().partialFromJSON(out.asAPIVersion(), asPartialList, data)
		}
	case asTable:
		var p *tablePrinter
		if p, err = newTablePrinter(q.r.Context(), q.t, out, q.r.URL.Query()); err == nil {
			data, err = p.encodeList(meta, items)
		}
	}
	if err != nil {
		q.fail(err)
		return
	}
	writeEncoded(q.w, out, code, data)
}

// writeEncoded writes a response encoded for the negotiated format:
// protobuf as it is, JSON in the negotiated JSON or YAML form.
func writeEncoded(w http.ResponseWriter, out output, code int, data []byte) {
	if out.mediaType == mediaProtobuf {
		writeProtobuf(w, code, data)
		return
	}
	writeJSONBytes(w, out, code, data)
}

// writeJSONBytes writes an encoded JSON document in the negotiated format.
func writeJSONBytes(w http.ResponseWriter, out output, code int, data []byte) {
	body := data
	switch {
	case out.mediaType == mediaYAML:
		y, err := yaml.JSONToYAML(data)
		if err != nil {
			// Our own encodings always convert; fall back to JSON rather
			// than lose the response.
			out.mediaType = mediaJSON
		} else {
			body = y
		}
	case out.pretty:
		// Indented without a final newline, as kube's serializer
		// (json.MarshalIndent) writes it.
		var buf bytes.Buffer
		if err := json.Indent(&buf, data, "", "  "); err == nil {
			body = buf.Bytes()
		}
	}
	// Compact JSON ends in a newline, as kube's serializer (a
	// json.Encoder) writes it; data may be a cached object's bytes, so
	// the newline is written after them rather than appended.
	newline := out.mediaType == mediaJSON && !out.pretty && !bytes.HasSuffix(body, []byte{'\n'})
	n := len(body)
	if newline {
		n++
	}
	w.Header().Set("Content-Type", out.mediaType)
	w.Header().Set("Content-Length", strconv.Itoa(n))
	w.WriteHeader(code)
	w.Write(body)
	if newline {
		w.Write([]byte{'\n'})
	}
}

// writeValue encodes v as JSON and writes it in the negotiated format.
func writeValue(w http.ResponseWriter, out output, code int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "encoding failed", http.StatusInternalServerError)
		return
	}
	writeJSONBytes(w, out, code, data)
}

// bodyToJSON converts a body of the request's Content-Type to JSON, once
// for the whole request. An absent Content-Type is read as JSON.
// Protobuf bodies are read for built-in kinds only (objects and
// DeleteOptions alike: the body names its kind); for custom types they
// are 415, as in kube-apiserver. strict lists what the conversion lost
// that a strict decoder reports: duplicate keys in a YAML body, which
// JSON cannot hold.
func bodyToJSON(r *http.Request, t *registry.Type, body []byte) (j []byte, strict []string, err error) {
	proto := servesProtobuf(t)
	ct := r.Header.Get("Content-Type")
	mt := mediaJSON
	if ct != "" {
		if mt, _, err = mime.ParseMediaType(ct); err != nil {
			return nil, nil, api.NewUnsupportedMediaType(acceptedMedia())
		}
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, nil, api.NewBadRequest("the request body is empty")
	}
	switch mt {
	case mediaJSON:
		return body, nil, nil
	case mediaYAML:
		if j, err := yaml.YAMLToJSONStrict(body); err == nil {
			return j, nil, nil
		} else if j, err2 := yaml.YAMLToJSON(body); err2 == nil {
			return j, yamlStrictErrors(err.Error()), nil
		}
		_, err := yaml.YAMLToJSON(body)
		return nil, nil, api.NewBadRequest(fmt.Sprintf("the body is not valid YAML: %v", err))
	case mediaProtobuf:
		if proto {
			j, err := protoCodecs().toJSON(t, body)
			return j, nil, err
		}
	}
	return nil, nil, api.NewUnsupportedMediaType(acceptedMedia())
}

// yamlStrictErrors splits a YAML strict-decoding error into its lines,
// one problem each, as kube-apiserver turns them into warnings.
func yamlStrictErrors(msg string) []string {
	_, rest, ok := strings.Cut(msg, "yaml: unmarshal errors:\n")
	if !ok {
		return []string{msg}
	}
	var out []string
	for _, line := range strings.Split(rest, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out
}

// NegotiateDiscovery picks the format of a legacy discovery document as
// kube-apiserver's discovery handlers do: JSON, YAML or protobuf, with no
// conversion; nothing else is 406.
func NegotiateDiscovery(r *http.Request) (mediaType string, pretty bool, err error) {
	out, ok := negotiate(r, func(_, as string) bool { return as == "" })
	if !ok {
		return "", false, api.NewNotAcceptable(routeMedia)
	}
	return out.mediaType, out.pretty, nil
}

// NegotiateAggregated reports whether a discovery request asks for the
// aggregated document, in which format and whether indented, as
// kube-apiserver decides: with its negotiation and its own test of the
// clause's conversion.
func NegotiateAggregated(r *http.Request) (mediaType string, pretty, ok bool) {
	opts, ok := negotiation.NegotiateMediaTypeOptions(r.Header.Get("Accept"), servedMedia, aggregated.DiscoveryEndpointRestrictions)
	if !ok || !aggregated.IsAggregatedDiscoveryGVK(opts.Convert) {
		return "", false, false
	}
	return opts.Accepted.MediaType, opts.Pretty || wantsPretty(r), true
}
