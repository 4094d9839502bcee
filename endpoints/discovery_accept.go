package endpoints

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// mediaRange is one clause of an Accept header.
type mediaRange struct {
	// typ and subtype are lower-cased; "*" is a wildcard.
	typ, subtype string
	// params are the clause's parameters other than q, keys lower-cased.
	params map[string]string
	q      float64
}

// parseAccept splits an Accept header into its clauses, best first: by q,
// then in header order. An empty header is a single */* clause; clauses
// that do not parse, and those with q=0, are dropped.
//
// It is deliberately more tolerant than mime.ParseMediaType: the OpenAPI
// protobuf types kubectl asks for contain an '@'
// ("application/com.github.proto-openapi.spec.v2@v1.0+protobuf"), which
// RFC 2045 does not allow in a token.
func parseAccept(header string) []mediaRange {
	if strings.TrimSpace(header) == "" {
		return []mediaRange{{typ: "*", subtype: "*", q: 1}}
	}
	var out []mediaRange
	for clause := range strings.SplitSeq(header, ",") {
		parts := strings.Split(clause, ";")
		typ, subtype, ok := strings.Cut(strings.ToLower(strings.TrimSpace(parts[0])), "/")
		if !ok || typ == "" || subtype == "" {
			continue
		}
		m := mediaRange{typ: typ, subtype: subtype, q: 1}
		for _, p := range parts[1:] {
			k, v, _ := strings.Cut(p, "=")
			k, v = strings.ToLower(strings.TrimSpace(k)), strings.Trim(strings.TrimSpace(v), `"`)
			if k == "" {
				continue
			}
			if k == "q" {
				if q, err := strconv.ParseFloat(v, 64); err == nil {
					m.q = q
				}
				continue
			}
			if m.params == nil {
				m.params = map[string]string{}
			}
			m.params[k] = v
		}
		if m.q > 0 {
			out = append(out, m)
		}
	}
	slices.SortStableFunc(out, func(a, b mediaRange) int { return cmp.Compare(b.q, a.q) })
	return out
}

// matches reports whether the clause accepts the media type typ/subtype.
func (m mediaRange) matches(typ, subtype string) bool {
	return (m.typ == "*" || m.typ == typ) && (m.subtype == "*" || m.subtype == subtype)
}
