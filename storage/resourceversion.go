package storage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// metadataPrefix is how api.Object's encoding of an object begins, up to
// the opening brace of metadata: {"apiVersion":S,"kind":S,"metadata":{
// InjectResourceVersion relies on it to avoid decoding the object.

// InjectResourceVersion returns stored with metadata.resourceVersion set to
// rev. stored must carry no resourceVersion (backends strip it on write);
// objects in api.Object's canonical encoding take a fast path that decodes
// nothing, anything else is decoded and re-encoded.
func InjectResourceVersion(stored []byte, rev int64) ([]byte, error) {
	if at := metadataBodyOffset(stored); at > 0 {
		rv := strconv.AppendInt(nil, rev, 10)
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
// rev (or removed when rev is 0), preserving every other field.
func SetResourceVersion(data []byte, rev int64) ([]byte, error) {
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
// and 0 otherwise.
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

func expect(data []byte, i int, lit string) (int, bool) {
	if !bytes.HasPrefix(data[i:], []byte(lit)) {
		return 0, false
	}
	return i + len(lit), true
}

// skipString skips a JSON string starting at data[i] and returns the
// offset after its closing quote.
func skipString(data []byte, i int) (int, bool) {
	if i >= len(data) || data[i] != '"' {
		return 0, false
	}
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return 0, false
}
