package storage

import "bytes"

// Storage reads and edits encoded objects without decoding them: it
// injects resourceVersions, finds the metadata member, reads selector
// attributes. All of that walks JSON objects with the scanner below. It
// checks only the structure it walks (strings, brackets, separators), so
// it may be given invalid JSON and reports failure instead of running off
// the end; callers that need valid JSON check it first.

// objectScanner reads the members of one JSON object in order.
type objectScanner struct {
	data []byte
	// i is where the scanner reads next: just after the opening brace,
	// then after each member's value.
	i     int
	first bool
	// end is the offset just after the closing brace once next has
	// reached it, -1 until then and when the object is malformed.
	end int
}

// member is one member of a JSON object: its key, quotes included, is
// data[key:keyEnd] and its value data[val:end].
type member struct {
	key, keyEnd, val, end int
}

// scanObject returns a scanner over the object whose opening brace is at
// data[open], and false when there is none.
func scanObject(data []byte, open int) (*objectScanner, bool) {
	if open >= len(data) || data[open] != '{' {
		return nil, false
	}
	return &objectScanner{data: data, i: open + 1, first: true, end: -1}, true
}

// next returns the next member. It reports false at the closing brace
// (end is then set) and when the object is malformed. The separator after
// a member is checked only when the next one is asked for, so a caller may
// stop at a member whatever follows it.
func (s *objectScanner) next() (member, bool) {
	data := s.data
	i := skipSpace(data, s.i)
	if i >= len(data) {
		return member{}, false
	}
	switch {
	case data[i] == '}':
		s.end = i + 1
		return member{}, false
	case !s.first:
		if data[i] != ',' {
			return member{}, false
		}
		i = skipSpace(data, i+1)
	}
	s.first = false
	m := member{key: i}
	var ok bool
	if m.keyEnd, ok = skipString(data, i); !ok {
		return member{}, false
	}
	i = skipSpace(data, m.keyEnd)
	if i >= len(data) || data[i] != ':' {
		return member{}, false
	}
	m.val = skipSpace(data, i+1)
	if m.end, ok = scanValue(data, m.val); !ok {
		return member{}, false
	}
	s.i = m.end
	return m, true
}

// keyIs reports whether m's key, as written (escapes are not decoded), is
// name.
func (m member) keyIs(data []byte, name string) bool {
	return m.keyEnd-m.key == len(name)+2 && string(data[m.key+1:m.keyEnd-1]) == name
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
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

// scanValue returns the offset just after the JSON value starting at
// data[i], checking the brackets and strings it passes.
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

// expect reports whether data continues at i with lit, and the offset
// after it.
func expect(data []byte, i int, lit string) (int, bool) {
	if !bytes.HasPrefix(data[i:], []byte(lit)) {
		return 0, false
	}
	return i + len(lit), true
}

// ObjectMembers calls fn with the key (decoded) and the value (as
// written) of each member of the JSON object span, in order, without
// looking into the values, until fn returns false. A key without
// escapes is a slice of span, nothing copied; fn must not keep key or
// value beyond the call unless it may keep span. It reports whether it
// walked the whole of span as one object with every fn call true: false
// for anything else, so callers that read only some members that way
// can fall back to encoding/json. Like the rest of this scanner it
// checks only the structure it walks; span must be valid JSON for the
// values to be.
func ObjectMembers(span []byte, fn func(key, value []byte) bool) bool {
	obj, ok := scanObject(span, skipSpace(span, 0))
	if !ok {
		return false
	}
	for m, ok := obj.next(); ok; m, ok = obj.next() {
		key := span[m.key+1 : m.keyEnd-1]
		if bytes.IndexByte(key, '\\') >= 0 || !isPlainASCII(key) {
			s, _, ok := scanString(span, m.key)
			if !ok {
				return false
			}
			key = []byte(s)
		}
		if !fn(key, span[m.val:m.end]) {
			return false
		}
	}
	return obj.end >= 0 && skipSpace(span, obj.end) == len(span)
}

// isPlainASCII reports whether b is printable ASCII, which a JSON string
// holds as is.
func isPlainASCII(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c >= 0x80 {
			return false
		}
	}
	return true
}

// JSONString decodes value, a JSON string as ObjectMembers gives it, as
// encoding/json would; false when value is not one string.
func JSONString(value []byte) (string, bool) {
	s, end, ok := scanString(value, 0)
	return s, ok && end == len(value)
}
