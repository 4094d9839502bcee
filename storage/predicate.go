package storage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

// Attrs are the parts of an object selectors look at.
type Attrs struct {
	Labels labels.Set
	// Fields holds every selectable field by path, including
	// metadata.name and metadata.namespace.
	Fields fields.Set
}

// AttrFunc extracts an object's selectable attributes from its encoded
// form. Each resource type has one; DefaultAttrs serves types whose only
// selectable fields are metadata.name and metadata.namespace.
type AttrFunc func(data []byte) (Attrs, error)

// objectMeta is the part of an object DefaultAttrs decodes.
type objectMeta struct {
	Metadata struct {
		Name      string            `json:"name"`
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels"`
	} `json:"metadata"`
}

// DefaultAttrs returns the labels and the metadata.name and
// metadata.namespace fields of an encoded object. Only its metadata is
// decoded (see MetadataJSON); what cannot be read that way is decoded
// whole, which also reports its errors.
func DefaultAttrs(data []byte) (Attrs, error) {
	var m objectMeta
	if span := MetadataJSON(data); span != nil {
		if scanMetadata(span, &m) {
			return attrsOf(&m), nil
		}
		if err := json.Unmarshal(span, &m.Metadata); err == nil {
			return attrsOf(&m), nil
		}
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return Attrs{}, fmt.Errorf("storage: decode object metadata: %w", err)
	}
	return attrsOf(&m), nil
}

// scanMetadata reads name, namespace and labels from span, the encoded
// metadata object, into m without encoding/json, which first validates
// and then reflects over the whole span: over a start that caches 10,000
// objects that cost a tenth of the start-up CPU. It handles the shape
// the server stores (string members, a labels object of strings) and
// skips every other member without looking into it; anything else (a
// key that differs from those three only in case, which encoding/json
// would match; a second labels member, which it would merge; a value of
// another type) makes it report false, and DefaultAttrs decodes with
// encoding/json as before.
func scanMetadata(span []byte, m *objectMeta) bool {
	sawLabels := false
	return ObjectMembers(span, func(key, v []byte) bool {
		var end int
		var ok bool
		switch string(key) {
		case "name":
			end, ok = scanMetaString(v, &m.Metadata.Name)
		case "namespace":
			end, ok = scanMetaString(v, &m.Metadata.Namespace)
		case "labels":
			if sawLabels {
				return false
			}
			sawLabels = true
			end, ok = scanLabels(v, 0, m)
		default:
			return !bytes.EqualFold(key, keyName) && !bytes.EqualFold(key, keyNamespace) && !bytes.EqualFold(key, keyLabels)
		}
		return ok && end == len(v)
	})
}

// The keys scanMetadata reads, for case-insensitive comparison.
var keyName, keyNamespace, keyLabels = []byte("name"), []byte("namespace"), []byte("labels")

// scanMetaString reads v, the value of member name or namespace, into
// field and returns the offset after it. null leaves the field as it is,
// as encoding/json does.
func scanMetaString(v []byte, field *string) (int, bool) {
	if end, ok := expect(v, 0, "null"); ok {
		return end, true
	}
	str, end, ok := scanString(v, 0)
	if !ok {
		return 0, false
	}
	*field = str
	return end, true
}

// scanLabels reads the labels member's value at span[i]: null, or an
// object whose values are all strings. It returns the offset after it.
func scanLabels(span []byte, i int, m *objectMeta) (int, bool) {
	if end, ok := expect(span, i, "null"); ok {
		m.Metadata.Labels = nil
		return end, true
	}
	if i >= len(span) || span[i] != '{' {
		return 0, false
	}
	labels := map[string]string{}
	i = skipSpace(span, i+1)
	if i < len(span) && span[i] == '}' {
		m.Metadata.Labels = labels
		return i + 1, true
	}
	for {
		k, next, ok := scanString(span, i)
		if !ok {
			return 0, false
		}
		i = skipSpace(span, next)
		if i >= len(span) || span[i] != ':' {
			return 0, false
		}
		v, next, ok := scanString(span, skipSpace(span, i+1))
		if !ok {
			return 0, false
		}
		labels[k] = v
		i = skipSpace(span, next)
		if i >= len(span) {
			return 0, false
		}
		switch span[i] {
		case ',':
			i = skipSpace(span, i+1)
		case '}':
			m.Metadata.Labels = labels
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// scanString decodes the JSON string at span[i] and returns it with the
// offset after it. Plain ASCII without escapes is copied as is; anything
// else is decoded by encoding/json, so escapes and invalid UTF-8 come out
// as encoding/json makes them.
func scanString(span []byte, i int) (string, int, bool) {
	end, ok := skipString(span, i)
	if !ok {
		return "", 0, false
	}
	raw := span[i+1 : end-1]
	for _, c := range raw {
		if c < 0x20 || c == '\\' || c >= utf8.RuneSelf {
			var s string
			if err := json.Unmarshal(span[i:end], &s); err != nil {
				return "", 0, false
			}
			return s, end, true
		}
	}
	return string(raw), end, true
}

func attrsOf(m *objectMeta) Attrs {
	return Attrs{
		Labels: m.Metadata.Labels,
		Fields: fields.Set{"metadata.name": m.Metadata.Name, "metadata.namespace": m.Metadata.Namespace},
	}
}

// Predicate selects objects by label and field selectors.
type Predicate struct {
	// Label is nil or empty to match every object.
	Label labels.Selector
	// Field is nil or empty to match every object.
	Field fields.Selector
	// Attrs extracts what the selectors match against; nil means
	// DefaultAttrs.
	Attrs AttrFunc
}

// Empty reports whether p matches everything without looking at objects.
func (p Predicate) Empty() bool {
	return (p.Label == nil || p.Label.Empty()) && (p.Field == nil || p.Field.Empty())
}

// Matches reports whether attributes a satisfy both selectors.
func (p Predicate) Matches(a Attrs) bool {
	if p.Label != nil && !p.Label.Empty() && !p.Label.Matches(a.Labels) {
		return false
	}
	if p.Field != nil && !p.Field.Empty() && !p.Field.Matches(a.Fields) {
		return false
	}
	return true
}

// MatchesData decodes what it needs of data and reports whether it
// matches.
func (p Predicate) MatchesData(data []byte) (bool, error) {
	if p.Empty() {
		return true, nil
	}
	attrs := p.Attrs
	if attrs == nil {
		attrs = DefaultAttrs
	}
	a, err := attrs(data)
	if err != nil {
		return false, err
	}
	return p.Matches(a), nil
}
