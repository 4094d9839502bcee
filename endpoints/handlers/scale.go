package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"sync"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/builtin"
	"github.com/miniapi/miniapi/registry"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"sigs.k8s.io/yaml"
)

// scale serves /scale of a type with a scale subresource: GET, PUT and
// PATCH of the object's autoscaling/v1 Scale. The Scale is a built-in
// kind, so it is served in JSON, YAML and protobuf whatever the type, as
// kube-apiserver serves a custom resource's /scale.
func (q *request) scale() {
	if !registry.HasScale(q.t) {
		q.fail(api.NewGenericNotFound())
		return
	}
	switch q.r.Method {
	case http.MethodGet:
		q.getScale()
	case http.MethodPut:
		q.updateScale()
	case http.MethodPatch:
		q.patchScale()
	default:
		q.notAllowed()
	}
}

func (q *request) getScale() {
	out, err := negotiateOutput(q.r, q.t)
	if err != nil {
		q.fail(err)
		return
	}
	rv, ok := q.getResourceVersion()
	if !ok {
		return
	}
	sc, err := q.store.GetScale(q.r.Context(), q.info.Namespace, q.info.Name, rv)
	if err != nil {
		q.fail(err)
		return
	}
	q.writeScale(out, sc)
}

func (q *request) updateScale() {
	out, p, body, ok := q.readBody("UpdateOptions", "")
	if !ok {
		return
	}
	j, typed, err := scaleBodyToJSON(q.r, body)
	if err == nil && !typed {
		// As kube's decoder: the kind first, then the fields.
		if err = q.store.CheckScaleBody(j); err == nil {
			err = registry.CheckScaleFields(q.r.Context(), j, p.fieldValidation)
		}
	}
	var sc *registry.Scale
	if err == nil {
		sc, err = registry.DecodeScale(j)
	}
	if err == nil {
		sc, err = q.store.UpdateScale(q.r.Context(), q.info.Namespace, q.info.Name, sc,
			registry.UpdateOptions{DryRun: p.dryRun, FieldManager: p.manager})
	}
	if err != nil {
		q.fail(err)
		return
	}
	q.writeScale(out, sc)
}

func (q *request) patchScale() {
	mt, ok := q.patchType()
	if !ok {
		return
	}
	out, p, body, ok := q.readBody("PatchOptions", mt)
	if !ok {
		return
	}
	var sc *registry.Scale
	var err error
	if mt == registry.PatchApply {
		sc, err = q.store.ApplyScale(q.r.Context(), q.info.Namespace, q.info.Name, body, registry.ApplyOptions{
			DryRun: p.dryRun, FieldManager: p.fieldManager, Force: p.force, FieldValidation: p.fieldValidation,
		})
	} else {
		sc, err = q.store.PatchScale(q.r.Context(), q.info.Namespace, q.info.Name, mt, body,
			registry.UpdateOptions{DryRun: p.dryRun, FieldValidation: p.fieldValidation, FieldManager: p.manager})
	}
	if err != nil {
		q.fail(err)
		return
	}
	q.writeScale(out, sc)
}

// writeScale answers 200 with a Scale in the negotiated format: the
// Scale, its PartialObjectMetadata, or its Table as kube-apiserver prints
// a Scale (`kubectl get --subresource=scale`).
func (q *request) writeScale(out output, sc *registry.Scale) {
	data, err := json.Marshal(sc)
	if err != nil {
		q.fail(err)
		return
	}
	switch out.as {
	case "":
		if out.mediaType == mediaProtobuf {
			data, err = scaleCodec().fromJSON(data)
		}
	case asPartial:
		data, err = encodePartialObject(out.asAPIVersion(), data)
		if err == nil && out.mediaType == mediaProtobuf {
			data, err = protoCodecs().partialFromJSON(out.asAPIVersion(), asPartial, data)
		}
	case asPartialList:
		err = notAList(schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"})
	case asTable:
		var p *tablePrinter
		if p, err = q.scaleTablePrinter(out); err == nil {
			data, err = p.encodeObject(data, true)
		}
	}
	if err != nil {
		q.fail(err)
		return
	}
	writeEncoded(q.w, out, http.StatusOK, data)
}

// scaleTablePrinter prints a Scale of q's type as kube-apiserver does:
// a built-in kind's with kube's printer for Scale; a custom resource's
// with the columns kube's CRD handler gives its scale subresource (Name,
// Desired and Available where the CRD names the replicas paths, Age).
func (q *request) scaleTablePrinter(out output) (*tablePrinter, error) {
	if servesProtobuf(q.t) {
		sp := builtin.ScalePrinter()
		return newTablePrinter(q.r.Context(), &registry.Type{Strategy: sp}, out, q.r.URL.Query())
	}
	var cols []registry.PrinterColumn
	if sub := q.t.Scale; sub != nil && sub.SpecReplicasPath != "" {
		cols = append(cols, registry.PrinterColumn{Name: "Desired", Type: "integer", Description: "Number of desired replicas", JSONPath: ".spec.replicas"})
	}
	if sub := q.t.Scale; sub != nil && sub.StatusReplicasPath != "" {
		cols = append(cols, registry.PrinterColumn{Name: "Available", Type: "integer", Description: "Number of actual replicas", JSONPath: ".status.replicas"})
	}
	cols = append(cols, registry.DefaultPrinterColumns()...) // Age
	return newTablePrinter(q.r.Context(), &registry.Type{PrinterColumns: cols}, out, q.r.URL.Query())
}

// scaleBodyToJSON converts a Scale sent as JSON, YAML or protobuf to
// JSON. An absent Content-Type is JSON, as client-go's scale client
// sends it. typed reports a protobuf body, which cannot carry unknown
// or duplicate fields.
func scaleBodyToJSON(r *http.Request, body []byte) (j []byte, typed bool, err error) {
	ct := r.Header.Get("Content-Type")
	mt := mediaJSON
	if ct != "" {
		var err error
		if mt, _, err = mime.ParseMediaType(ct); err != nil {
			return nil, false, api.NewUnsupportedMediaType(acceptedMedia())
		}
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, false, api.NewBadRequest("the request body is empty")
	}
	switch mt {
	case mediaJSON:
		return body, false, nil
	case mediaYAML:
		if j, err = yaml.YAMLToJSON(body); err != nil {
			return nil, false, api.NewBadRequest(fmt.Sprintf("the body is not valid YAML: %v", err))
		}
		return j, false, nil
	case mediaProtobuf:
		j, err = scaleCodec().toJSON(body)
		return j, true, err
	}
	return nil, false, api.NewUnsupportedMediaType(acceptedMedia())
}

// scaleProtoCodec converts autoscaling/v1 Scales between JSON and
// protobuf through k8s.io/api's generated type, at the HTTP edge only.
type scaleProtoCodec struct {
	serializer *protobuf.Serializer
}

// scaleCodec is built once, on first use, and only read afterwards.
var scaleCodec = sync.OnceValue(func() *scaleProtoCodec {
	s := runtime.NewScheme()
	s.AddKnownTypes(autoscalingv1.SchemeGroupVersion, &autoscalingv1.Scale{})
	metav1.AddToGroupVersion(s, autoscalingv1.SchemeGroupVersion)
	return &scaleProtoCodec{serializer: protobuf.NewSerializer(s, s)}
})

// fromJSON encodes a Scale's JSON in protobuf.
func (c *scaleProtoCodec) fromJSON(data []byte) ([]byte, error) {
	var sc autoscalingv1.Scale
	if err := json.Unmarshal(data, &sc); err != nil {
		return nil, fmt.Errorf("handlers: protobuf encode Scale: decode JSON: %w", err)
	}
	sc.SetGroupVersionKind(autoscalingv1.SchemeGroupVersion.WithKind("Scale"))
	var buf bytes.Buffer
	if err := c.serializer.Encode(&sc, &buf); err != nil {
		return nil, fmt.Errorf("handlers: protobuf encode Scale: %w", err)
	}
	return buf.Bytes(), nil
}

// toJSON decodes a protobuf Scale into JSON; anything else is 400.
func (c *scaleProtoCodec) toJSON(body []byte) ([]byte, error) {
	defaults := autoscalingv1.SchemeGroupVersion.WithKind("Scale")
	obj, gvk, err := c.serializer.Decode(body, &defaults, nil)
	if err != nil {
		if gvk != nil && gvk.Kind != "" {
			return nil, api.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a Scale: %v", gvk.Kind, gvk.Version, err))
		}
		return nil, api.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type Scale): %v (%s)", err, api.SummarizeBody(body)))
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, api.NewBadRequest(fmt.Sprintf("%s cannot be handled as a Scale: %v", gvk.Kind, err))
	}
	return data, nil
}
