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
