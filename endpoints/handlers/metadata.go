package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/builtin"
	"github.com/miniapi/miniapi/storage"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// objectMetadata returns the metadata of a stored object as stored.
func objectMetadata(data []byte) (json.RawMessage, error) {
	var top struct {
		Metadata json.RawMessage `json:"metadata"`
	}
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("handlers: read metadata: %w", err)
	}
	if len(top.Metadata) == 0 {
		top.Metadata = json.RawMessage("{}")
	}
	return top.Metadata, nil
}

// partialObject reduces a stored object to a PartialObjectMetadata of
// the meta.k8s.io apiVersion given.
func partialObject(apiVersion string, data []byte) (api.PartialObjectMetadata, error) {
	m, err := objectMetadata(data)
	if err != nil {
		return api.PartialObjectMetadata{}, err
	}
	return api.PartialObjectMetadata{
		TypeMeta: api.TypeMeta{APIVersion: apiVersion, Kind: asPartial},
		Metadata: m,
	}, nil
}

// encodePartialObject is partialObject, encoded as JSON.
func encodePartialObject(apiVersion string, data []byte) ([]byte, error) {
	p, err := partialObject(apiVersion, data)
	if err != nil {
		return nil, err
	}
	return json.Marshal(p)
}

// partialObjectList reduces a list of stored objects to a
// PartialObjectMetadataList with the list's metadata. An empty one has
// "items": null, as kube-apiserver's.
func partialObjectList(apiVersion string, meta api.ListMeta, items []*storage.Object) (*api.PartialObjectMetadataList, error) {
	l := &api.PartialObjectMetadataList{
		TypeMeta: api.TypeMeta{APIVersion: apiVersion, Kind: asPartialList},
		Metadata: meta,
	}
	if len(items) > 0 {
		l.Items = make([]api.PartialObjectMetadata, 0, len(items))
	}
	for _, it := range items {
		p, err := partialObject(apiVersion, it.Data)
		if err != nil {
			return nil, err
		}
		l.Items = append(l.Items, p)
	}
	return l, nil
}

// notAcceptable is a 406 with kube-apiserver's message for a conversion
// that does not fit what the request returns.
func notAcceptable(msg string) error {
	return &api.StatusError{ErrStatus: api.Status{Code: http.StatusNotAcceptable, Reason: api.ReasonNotAcceptable, Message: msg}}
}

// notAList answers a PartialObjectMetadataList request for one object
// of kind gvk: in kube-apiserver's words, which name the Go type of a
// built-in kind's internal object ("(*core.ConfigMap)"); a custom
// resource's message names none (kube answers it 500).
func notAList(gvk schema.GroupVersionKind) error {
	msg := fmt.Sprintf("you requested %s, but the requested object is not a list", asPartialList)
	internal := schema.GroupVersionKind{Group: gvk.Group, Version: runtime.APIVersionInternal, Kind: gvk.Kind}
	if obj, err := builtin.Scheme().New(internal); err == nil {
		msg += fmt.Sprintf(" (%T)", obj)
	}
	return notAcceptable(msg)
}

// aList answers a PartialObjectMetadata request for a list.
func aList(listKind string) error {
	return notAcceptable(fmt.Sprintf("you requested %s, but the requested object is a list (%s)", asPartial, listKind))
}
