package endpoints

import "github.com/miniapi/miniapi/endpoints/handlers"

// mediaRange is one clause of an Accept header, as handlers.ParseAccept
// reads it: discovery and OpenAPI negotiate with the parser resources do.
type mediaRange struct{ handlers.MediaRange }

// parseAccept returns the clauses of an Accept header, best first. Unlike
// resource negotiation, discovery and OpenAPI consider the clauses that
// are not valid RFC 2045 media types too (see handlers.MediaRange.Valid).
func parseAccept(header string) []mediaRange {
	clauses := handlers.ParseAccept(header)
	out := make([]mediaRange, len(clauses))
	for i, c := range clauses {
		out[i] = mediaRange{c}
	}
	return out
}

// matches reports whether the clause accepts the media type typ/subtype.
func (m mediaRange) matches(typ, subtype string) bool { return m.Matches(typ, subtype) }
