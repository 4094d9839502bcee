package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/storage"
	"k8s.io/apimachinery/pkg/fields"
)

// ReadFieldPath reads the scalar at a dotted path such as "spec.nodeName",
// "type" or "metadata.name" from obj, formatted as Kubernetes field
// selectors compare it: strings as they are, numbers as their JSON text,
// booleans as "true" or "false". A missing path, null, or a value that is
// an object or array reports ("", false).
func ReadFieldPath(obj *api.Object, path string) (string, bool) {
	first, rest, _ := strings.Cut(path, ".")
	if first == "metadata" {
		return readMetadataPath(&obj.Metadata, rest)
	}
	raw, ok := obj.Fields[first]
	if !ok {
		return "", false
	}
	return walkRaw(raw, rest)
}

// readMetadataPath serves the metadata fields selectors use without
// re-encoding; anything else is read from metadata's JSON form.
func readMetadataPath(m *api.ObjectMeta, rest string) (string, bool) {
	switch rest {
	case "name":
		return m.Name, m.Name != ""
	case "namespace":
		return m.Namespace, m.Namespace != ""
	case "uid":
		return m.UID, m.UID != ""
	case "generateName":
		return m.GenerateName, m.GenerateName != ""
	case "resourceVersion":
		return m.ResourceVersion, m.ResourceVersion != ""
	case "generation":
		return strconv.FormatInt(m.Generation, 10), m.Generation != 0
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return "", false
	}
	return walkRaw(raw, rest)
}

// walkRaw follows the dotted path rest ("" for raw itself) through nested
// JSON objects and formats the scalar it ends at. It decodes one level at
// a time into raw messages, so numbers keep their exact text.
func walkRaw(raw json.RawMessage, rest string) (string, bool) {
	for rest != "" {
		var seg string
		seg, rest, _ = strings.Cut(rest, ".")
		var m map[string]json.RawMessage
		if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &m) != nil {
			return "", false
		}
		var ok bool
		if raw, ok = m[seg]; !ok {
			return "", false
		}
	}
	return scalarText(raw)
}

// scalarText formats one JSON scalar as a field selector value.
func scalarText(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", false
	}
	switch raw[0] {
	case '"':
		if bytes.IndexByte(raw, '\\') < 0 {
			return string(raw[1 : len(raw)-1]), true
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return s, true
	case 't':
		return "true", true
	case 'f':
		return "false", true
	case 'n', '{', '[': // null, objects and arrays are not selectable values
		return "", false
	default:
		return string(raw), true
	}
}

// AttrFunc returns the function that extracts, from an encoded object of
// type t, its labels and its selectable fields: metadata.name,
// metadata.namespace and every one of t.SelectableFields. A field the
// object lacks is present as "", so "f=" matches it and "f!=x" does too,
// as in Kubernetes, where an unset field is its zero value.
//
// Values come from the strategy's FieldReader when it has one and reports
// a value, otherwise from ReadFieldPath. Each object is decoded once, into
// just metadata and the top-level fields the selectable paths start with;
// everything else is skipped by the JSON scanner without being copied.
func AttrFunc(t *Type) storage.AttrFunc {
	if src, ok := t.Strategy.(AttrSource); ok {
		return src.Attrs
	}
	reader, _ := t.Strategy.(FieldReader)
	paths := make([]string, 0, len(t.SelectableFields))
	var tops []string // distinct top-level fields to capture
	fullMeta := false
	for _, p := range t.SelectableFields {
		if p == "metadata.name" || p == "metadata.namespace" {
			continue
		}
		paths = append(paths, p)
		first, _, _ := strings.Cut(p, ".")
		if first == "metadata" {
			fullMeta = true
			continue
		}
		if !slices.Contains(tops, first) {
			tops = append(tops, first)
		}
	}
	if len(paths) == 0 && reader == nil {
		return storage.DefaultAttrs
	}
	doc := newPartialDoc(fullMeta, tops)
	return func(data []byte) (storage.Attrs, error) {
		obj, err := doc.decode(data)
		if err != nil {
			return storage.Attrs{}, fmt.Errorf("registry: decode %s for selectors: %w", t.GVR(), err)
		}
		set := make(fields.Set, len(paths)+2)
		set["metadata.name"] = obj.Metadata.Name
		set["metadata.namespace"] = obj.Metadata.Namespace
		// Top-level objects decoded one level, shared by the paths under
		// them (an Event has seven involvedObject.* fields).
		var trees map[string]map[string]json.RawMessage
		for _, p := range paths {
			if reader != nil {
				if v, ok := reader.SelectableFieldValue(obj, p); ok {
					set[p] = v
					continue
				}
			}
			first, rest, _ := strings.Cut(p, ".")
			if first == "metadata" {
				set[p], _ = readMetadataPath(&obj.Metadata, rest)
				continue
			}
			raw := obj.Fields[first]
			if rest == "" || len(raw) == 0 || raw[0] != '{' {
				set[p], _ = walkRaw(raw, rest)
				continue
			}
			tree, ok := trees[first]
			if !ok {
				_ = json.Unmarshal(raw, &tree) // nil on error: the path is missing
				if trees == nil {
					trees = make(map[string]map[string]json.RawMessage, len(tops))
				}
				trees[first] = tree
			}
			seg, deeper, _ := strings.Cut(rest, ".")
			set[p], _ = walkRaw(tree[seg], deeper)
		}
		return storage.Attrs{Labels: obj.Metadata.Labels, Fields: set}, nil
	}
}

// partialMeta is the metadata selectors need in the common case.
type partialMeta struct {
	Name      string            `json:"name"`
	Namespace string            `json:"namespace"`
	Labels    map[string]string `json:"labels"`
}

var (
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
	partialMetaType = reflect.TypeFor[partialMeta]()
	objectMetaType  = reflect.TypeFor[api.ObjectMeta]()
)

// partialDoc decodes an object into a struct type built for one resource
// type: a metadata field and one json.RawMessage per captured top-level
// field, so the decoder copies nothing else.
type partialDoc struct {
	typ  reflect.Type
	tops []string
	full bool
}

func newPartialDoc(fullMeta bool, tops []string) *partialDoc {
	metaType := partialMetaType
	if fullMeta {
		metaType = objectMetaType
	}
	sf := []reflect.StructField{{Name: "Metadata", Type: metaType, Tag: `json:"metadata"`}}
	var kept []string
	for _, top := range tops {
		if strings.ContainsAny(top, "\",\\` ") {
			continue // cannot be a struct tag; such a path never matches
		}
		sf = append(sf, reflect.StructField{
			Name: "F" + strconv.Itoa(len(kept)),
			Type: rawMessageType,
			Tag:  reflect.StructTag(`json:"` + top + `"`),
		})
		kept = append(kept, top)
	}
	return &partialDoc{typ: reflect.StructOf(sf), tops: kept, full: fullMeta}
}

// decode returns an Object holding the decoded metadata and the captured
// top-level fields that are present.
func (d *partialDoc) decode(data []byte) (*api.Object, error) {
	pv := reflect.New(d.typ)
	if err := json.Unmarshal(data, pv.Interface()); err != nil {
		return nil, err
	}
	v := pv.Elem()
	obj := &api.Object{Fields: make(map[string]json.RawMessage, len(d.tops))}
	if d.full {
		obj.Metadata = v.Field(0).Interface().(api.ObjectMeta)
	} else {
		pm := v.Field(0).Interface().(partialMeta)
		obj.Metadata = api.ObjectMeta{Name: pm.Name, Namespace: pm.Namespace, Labels: pm.Labels}
	}
	for i, top := range d.tops {
		if raw := v.Field(i + 1).Interface().(json.RawMessage); raw != nil {
			obj.Fields[top] = raw
		}
	}
	return obj, nil
}
