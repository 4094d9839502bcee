package handlers

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	"github.com/miniapi/miniapi/storage"
)

// list answers GET on a collection.
func (q *request) list() {
	out, err := negotiateOutput(q.r, q.t)
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
	if err == nil {
		// A list the client gave up on ends as kube-apiserver's does
		// (504, logged at debug), whether or not storage noticed: the
		// in-process etcd client may serve a read whose context is
		// already done.
		err = q.r.Context().Err()
	}
	if err != nil {
		q.fail(err)
		return
	}
	meta := api.ListMeta{
		ResourceVersion:    storage.FormatResourceVersion(l.Revision),
		Continue:           l.Continue,
		RemainingItemCount: l.RemainingItemCount,
	}
	q.writeItems(out, http.StatusOK, meta, l.Items)
}

// writeList answers a <Kind>List of stored items. Plain JSON is streamed:
// the stored bytes of each item go to the connection as they are, with no
// list-sized buffer in between; other formats convert the assembled list.
func writeList(w http.ResponseWriter, out output, code int, shape listShape, meta api.ListMeta, items []*storage.Object) {
	if out.mediaType != mediaJSON || out.pretty {
		data, err := encodeItems(shape, meta, items)
		if err != nil {
			http.Error(w, "encoding failed", http.StatusInternalServerError)
			return
		}
		writeJSONBytes(w, out, code, data)
		return
	}
	head, err := listHead(shape.apiVersion, shape.listKind, meta)
	if err != nil {
		http.Error(w, "encoding failed", http.StatusInternalServerError)
		return
	}
	size := len(head) + len(listTail)
	for i, it := range items {
		if i > 0 {
			size++
		}
		size += len(shape.item(it.Data)) + 1
	}
	w.Header().Set("Content-Type", mediaJSON)
	w.Header().Set("Content-Length", strconv.Itoa(size))
	w.WriteHeader(code)
	// net/http buffers 4 KiB; a larger buffer turns thousands of item
	// writes into a few large ones without holding the whole list.
	bw := listWriters.Get().(*bufio.Writer)
	bw.Reset(w)
	defer func() {
		bw.Reset(nil)
		listWriters.Put(bw)
	}()
	bw.Write(head)
	for i, it := range items {
		if i > 0 {
			bw.Write(listComma)
		}
		bw.WriteByte('{')
		if _, err := bw.Write(shape.item(it.Data)); err != nil {
			return // the client went away
		}
	}
	bw.Write(listTail)
	bw.Flush()
}

// listWriters recycles the write buffers of streamed lists.
var listWriters = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 64<<10) }}

var (
	listComma = []byte{','}
	listTail  = []byte("]}\n") // kube's serializer ends with a newline
)

// listHead is a list's JSON up to the opening bracket of its items.
func listHead(apiVersion, listKind string, meta api.ListMeta) ([]byte, error) {
	mb, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, `{"apiVersion":%q,"kind":%q,"metadata":`, apiVersion, listKind)
	buf.Write(mb)
	buf.WriteString(`,"items":[`)
	return buf.Bytes(), nil
}

// listShape is how a type's lists are written: their apiVersion and
// kind, and itemPrefix, how a stored object begins when kube-apiserver
// leaves that beginning out of its lists' items. The items of a
// built-in kind's list carry no apiVersion and kind (a custom
// resource's, unstructured, do); itemPrefix is nil for kinds whose
// items keep them.
type listShape struct {
	apiVersion, listKind string
	itemPrefix           []byte
}

func listShapeOf(t *registry.Type) listShape {
	shape := listShape{apiVersion: t.APIVersion(), listKind: t.ListKind}
	if _, ok := t.Strategy.(registry.OpenAPIModeler); ok {
		shape.itemPrefix = fmt.Appendf(nil, `{"apiVersion":%q,"kind":%q,`, t.APIVersion(), t.Kind)
	}
	return shape
}

// item is an item's stored bytes after the opening brace, without
// itemPrefix when they start with it.
func (s listShape) item(data []byte) []byte {
	if len(s.itemPrefix) > 0 && bytes.HasPrefix(data, s.itemPrefix) {
		return data[len(s.itemPrefix):]
	}
	return data[1:]
}

// encodeItems writes {"apiVersion","kind","metadata","items":[...]} with
// each item's stored bytes copied as they are, less the shape's
// itemPrefix.
func encodeItems(shape listShape, meta api.ListMeta, items []*storage.Object) ([]byte, error) {
	head, err := listHead(shape.apiVersion, shape.listKind, meta)
	if err != nil {
		return nil, err
	}
	size := len(head) + len(listTail)
	for _, it := range items {
		size += len(it.Data) + 1
	}
	buf := bytes.NewBuffer(make([]byte, 0, size))
	buf.Write(head)
	for i, it := range items {
		if i > 0 {
			buf.Write(listComma)
		}
		buf.WriteByte('{')
		buf.Write(shape.item(it.Data))
	}
	buf.Write(listTail)
	return buf.Bytes(), nil
}

// badResourceVersion is the 400 for a resourceVersion ParseResourceVersion
// refused with err, in kube-apiserver's words for a list. (A get or
// watch with one gets a 500 from kube-apiserver 1.37, with the same
// words; it is the client's mistake, so miniapi answers 400.)
func badParam(err error) error {
	var se *storage.Error
	if errors.As(err, &se) && se.Err != nil {
		return api.NewBadRequest(se.Err.Error())
	}
	return api.NewBadRequest(err.Error())
}
