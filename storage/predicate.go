package storage

import (
	"encoding/json"
	"fmt"

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
		if err := json.Unmarshal(span, &m.Metadata); err == nil {
			return attrsOf(&m), nil
		}
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return Attrs{}, fmt.Errorf("storage: decode object metadata: %w", err)
	}
	return attrsOf(&m), nil
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
