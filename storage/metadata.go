package storage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// InjectResourceVersion returns stored with metadata.resourceVersion set to
// rev. stored must carry no resourceVersion (backends strip it on write);
// objects in api.Object's canonical encoding take a fast path that decodes
// nothing, anything else is decoded and re-encoded.
func InjectResourceVersion(stored []byte, rev int64) ([]byte, error) {
	if at := metadataBodyOffset(stored); at > 0 {
		var buf [20]byte // an int64 in decimal fits
		rv := strconv.AppendInt(buf[:0], rev, 10)
		out := make([]byte, 0, len(stored)+len(rv)+24)
		out = append(out, stored[:at]...)
		out = append(out, `"resourceVersion":"`...)
		out = append(out, rv...)
		out = append(out, '"')
		if stored[at] != '}' {
			out = append(out, ',')
		}
		out = append(out, stored[at:]...)
		return out, nil
	}
	return SetResourceVersion(stored, rev)
}

// SetResourceVersion returns data with metadata.resourceVersion replaced by
// rev (or removed when rev is 0), preserving every other field. When data
// has a metadata object the edit is made in place, leaving every other
// byte (key order, spacing) as it was, so that removing a resourceVersion
// InjectResourceVersion added gives back exactly the stored bytes; only an
// object without metadata is re-encoded.
func SetResourceVersion(data []byte, rev int64) ([]byte, error) {
	if out, ok := setResourceVersionInPlace(data, rev); ok {
		return out, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("storage: decode object: %w", err)
	}
	if top == nil {
		return nil, fmt.Errorf("storage: object is null")
	}
	var meta map[string]json.RawMessage
	if m := top["metadata"]; len(m) > 0 && string(m) != "null" {
		if err := json.Unmarshal(m, &meta); err != nil {
			return nil, fmt.Errorf("storage: decode object metadata: %w", err)
		}
	}
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	if rev == 0 {
		delete(meta, "resourceVersion")
	} else {
		meta["resourceVersion"] = json.RawMessage(`"` + strconv.FormatInt(rev, 10) + `"`)
	}
	mb, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	top["metadata"] = mb
	return encodeTop(top)
}

// encodeTop writes apiVersion, kind and metadata first, like api.Object,
// so the result takes InjectResourceVersion's fast path later.
func encodeTop(top map[string]json.RawMessage) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	first := true
	write := func(k string, v json.RawMessage) {
		if !first {
			buf.WriteByte(',')
		}
		first = false
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(v)
	}
	for _, k := range []string{"apiVersion", "kind", "metadata"} {
		if v, ok := top[k]; ok {
			write(k, v)
			delete(top, k)
		}
	}
	rest, err := json.Marshal(top)
	if err != nil {
		return nil, err
	}
	if len(rest) > 2 {
		if !first {
			buf.WriteByte(',')
		}
		buf.Write(rest[1 : len(rest)-1])
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// metadataBodyOffset returns the offset just after `"metadata":{` when
// data starts {"apiVersion":S,"kind":S,"metadata":{ with JSON strings S,
// as api.Object encodes every object, and 0 otherwise. It lets
// InjectResourceVersion and MetadataJSON skip walking the object.
func metadataBodyOffset(data []byte) int {
	i, ok := expect(data, 0, `{"apiVersion":`)
	if !ok {
		return 0
	}
	if i, ok = skipString(data, i); !ok {
		return 0
	}
	if i, ok = expect(data, i, `,"kind":`); !ok {
		return 0
	}
	if i, ok = skipString(data, i); !ok {
		return 0
	}
	if i, ok = expect(data, i, `,"metadata":{`); !ok || i >= len(data) {
		return 0
	}
	return i
}

// setResourceVersionInPlace edits metadata.resourceVersion without
// re-encoding. It reports false when data is not a valid JSON object with a
// metadata object, leaving those cases to the decoding path.
func setResourceVersionInPlace(data []byte, rev int64) ([]byte, bool) {
	if !json.Valid(data) {
		return nil, false
	}
	top, ok := scanObject(data, skipSpace(data, 0))
	if !ok {
		return nil, false
	}
	for m, ok := top.next(); ok; m, ok = top.next() {
		if m.keyIs(data, "metadata") && data[m.val] == '{' {
			return setMemberInPlace(data, m.val, rev), true
		}
	}
	return nil, false
}

// setMemberInPlace sets (or, for rev 0, removes) the resourceVersion
// member of the valid JSON object starting at data[open].
func setMemberInPlace(data []byte, open int, rev int64) []byte {
	obj, _ := scanObject(data, open)
	prevEnd := -1 // end of the previous member's value, if any
	for m, ok := obj.next(); ok; m, ok = obj.next() {
		if !m.keyIs(data, "resourceVersion") {
			prevEnd = m.end
			continue
		}
		var cutFrom, cutTo int
		next := skipSpace(data, m.end)
		switch {
		case rev != 0:
			return splice(data, m.val, m.end, strconv.AppendQuote(nil, FormatResourceVersion(rev)))
		case data[next] == ',':
			cutFrom, cutTo = m.key, skipSpace(data, next+1)
		case prevEnd >= 0:
			cutFrom, cutTo = prevEnd, m.end
		default:
			cutFrom, cutTo = m.key, m.end
		}
		return splice(data, cutFrom, cutTo, nil)
	}
	if rev == 0 {
		return data
	}
	add := []byte(`"resourceVersion":"` + FormatResourceVersion(rev) + `"`)
	if data[skipSpace(data, open+1)] != '}' {
		add = append(add, ',')
	}
	return splice(data, open+1, open+1, add)
}

// splice returns a new slice: data with data[from:to] replaced by with.
func splice(data []byte, from, to int, with []byte) []byte {
	out := make([]byte, 0, len(data)-(to-from)+len(with))
	out = append(out, data[:from]...)
	out = append(out, with...)
	return append(out, data[to:]...)
}

// MetadataJSON returns the bytes of data's top-level "metadata" value
// without decoding anything else, so callers that need only metadata
// (selector attributes, controllers' informers) can decode just that: the
// rest of an object, usually most of its bytes, is skipped, not parsed.
// For objects in api.Object's canonical encoding it stops right after the
// metadata. It returns nil when data is not a JSON object with metadata
// (callers then decode data whole and report its errors).
func MetadataJSON(data []byte) []byte {
	if at := metadataBodyOffset(data); at > 0 {
		if end, ok := scanValue(data, at-1); ok {
			return data[at-1 : end]
		}
		return nil
	}
	// Any key order: walk the top-level members.
	top, ok := scanObject(data, skipSpace(data, 0))
	if !ok {
		return nil
	}
	for m, ok := top.next(); ok; m, ok = top.next() {
		if m.keyIs(data, "metadata") {
			return data[m.val:m.end]
		}
	}
	return nil
}
