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

// setResourceVersionInPlace edits metadata.resourceVersion without
// re-encoding. It reports false when data is not a valid JSON object with a
// metadata object, leaving those cases to the decoding path.
func setResourceVersionInPlace(data []byte, rev int64) ([]byte, bool) {
	if !json.Valid(data) {
		return nil, false
	}
	i := skipSpace(data, 0)
	if data[i] != '{' {
		return nil, false
	}
	for i = skipSpace(data, i+1); data[i] == '"'; {
		keyEnd, _ := skipString(data, i)
		key := data[i:keyEnd]
		v := skipSpace(data, skipSpace(data, keyEnd)+1) // past the colon
		if string(key) == `"metadata"` && data[v] == '{' {
			return setMemberInPlace(data, v, rev), true
		}
		i = skipSpace(data, skipValue(data, v))
		if data[i] != ',' {
			break
		}
		i = skipSpace(data, i+1)
	}
	return nil, false
}

// setMemberInPlace sets (or, for rev 0, removes) the resourceVersion
// member of the JSON object starting at data[open].
func setMemberInPlace(data []byte, open int, rev int64) []byte {
	prevEnd := -1 // end of the previous member's value, if any
	for i := skipSpace(data, open+1); data[i] == '"'; {
		keyEnd, _ := skipString(data, i)
		v := skipSpace(data, skipSpace(data, keyEnd)+1)
		vEnd := skipValue(data, v)
		next := skipSpace(data, vEnd)
		if string(data[i:keyEnd]) == `"resourceVersion"` {
			var cutFrom, cutTo int
			switch {
			case rev != 0:
				return splice(data, v, vEnd, strconv.AppendQuote(nil, FormatResourceVersion(rev)))
			case data[next] == ',':
				cutFrom, cutTo = i, skipSpace(data, next+1)
			case prevEnd >= 0:
				cutFrom, cutTo = prevEnd, vEnd
			default:
				cutFrom, cutTo = i, vEnd
			}
			return splice(data, cutFrom, cutTo, nil)
		}
		if data[next] != ',' {
			break
		}
		prevEnd = vEnd
		i = skipSpace(data, next+1)
	}
	if rev == 0 {
		return data
	}
	member := []byte(`"resourceVersion":"` + FormatResourceVersion(rev) + `"`)
	if data[skipSpace(data, open+1)] != '}' {
		member = append(member, ',')
	}
	return splice(data, open+1, open+1, member)
}

// splice returns a new slice: data with data[from:to] replaced by with.
func splice(data []byte, from, to int, with []byte) []byte {
	out := make([]byte, 0, len(data)-(to-from)+len(with))
	out = append(out, data[:from]...)
	out = append(out, with...)
	return append(out, data[to:]...)
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the offset after the JSON value starting at data[i].
// data must be valid JSON.
func skipValue(data []byte, i int) int {
	switch data[i] {
	case '"':
		end, _ := skipString(data, i)
		return end
	case '{', '[':
		depth := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				i, _ = skipString(data, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	default:
		for i < len(data) && !bytes.ContainsRune([]byte(",}] \t\r\n"), rune(data[i])) {
			i++
		}
		return i
	}
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
	// Any key order: walk the top-level members, skipping values.
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil
	}
	i++
	for {
		i = skipSpace(data, i)
		if i >= len(data) || data[i] != '"' {
			return nil
		}
		keyEnd, ok := skipString(data, i)
		if !ok {
			return nil
		}
		key := data[i+1 : keyEnd-1]
		i = skipSpace(data, keyEnd)
		if i >= len(data) || data[i] != ':' {
			return nil
		}
		i = skipSpace(data, i+1)
		end, ok := scanValue(data, i)
		if !ok {
			return nil
		}
		if string(key) == "metadata" {
			return data[i:end]
		}
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ',' {
			return nil
		}
		i++
	}
}

// scanValue returns the offset just after the JSON value starting at
// data[i]. Unlike skipValue it may be given invalid JSON: it checks the
// structure it needs (brackets, strings) and reports failure instead of
// running off the end.
func scanValue(data []byte, i int) (int, bool) {
	if i >= len(data) {
		return 0, false
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for ; i < len(data); i++ {
			switch data[i] {
			case '"':
				end, ok := skipString(data, i)
				if !ok {
					return 0, false
				}
				i = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
		}
		return 0, false
	default: // number, true, false, null
		j := i
		for j < len(data) && !bytes.ContainsRune([]byte(",}] \t\r\n"), rune(data[j])) {
			j++
		}
		return j, j > i
	}
}
