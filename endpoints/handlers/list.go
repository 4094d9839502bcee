package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/storage"
)

// list answers GET on a collection.
func (q *request) list() {
	out, err := negotiateOutput(q.r)
	if err != nil {
		q.fail(err)
		return
	}
	p, err := parseListParams(q.r.URL.Query(), false)
	if err != nil {
		q.fail(err)
		return
	}
	l, err := q.store.List(q.r.Context(), q.info.Namespace, p.ListOptions)
	if err != nil {
		q.fail(err)
		return
	}
	data, err := encodeList(q.t.APIVersion(), q.t.ListKind, l)
	if err != nil {
		q.fail(err)
		return
	}
	writeJSONBytes(q.w, out, http.StatusOK, data)
}

// encodeList frames stored items as a <Kind>List without re-encoding them.
func encodeList(apiVersion, listKind string, l *storage.List) ([]byte, error) {
	meta := api.ListMeta{
		ResourceVersion:    storage.FormatResourceVersion(l.Revision),
		Continue:           l.Continue,
		RemainingItemCount: l.RemainingItemCount,
	}
	return encodeItems(apiVersion, listKind, meta, l.Items)
}

// encodeItems writes {"apiVersion","kind","metadata","items":[...]} with
// each item's stored bytes copied as they are.
func encodeItems(apiVersion, listKind string, meta api.ListMeta, items []*storage.Object) ([]byte, error) {
	mb, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	size := 128 + len(mb)
	for _, it := range items {
		size += len(it.Data) + 1
	}
	var buf bytes.Buffer
	buf.Grow(size)
	fmt.Fprintf(&buf, `{"apiVersion":%q,"kind":%q,"metadata":`, apiVersion, listKind)
	buf.Write(mb)
	buf.WriteString(`,"items":[`)
	for i, it := range items {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(it.Data)
	}
	buf.WriteString("]}")
	return buf.Bytes(), nil
}

func badResourceVersion(rv string) error {
	return api.NewBadRequest(fmt.Sprintf("invalid resourceVersion %q: must be a non-negative integer", rv))
}
