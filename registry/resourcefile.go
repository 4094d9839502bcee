package registry

import (
	"bytes"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// ResourceFile is the format of --resources: a list of types to serve
// beyond the built-in ones.
//
//	resources:
//	- group: example.com
//	  version: v1
//	  kind: Widget
//	  plural: widgets
//	  namespaced: true
//	  shortNames: [wd]
//	  statusSubresource: true
//	  scale:
//	    specReplicasPath: .spec.replicas
//	    statusReplicasPath: .status.replicas
//	    labelSelectorPath: .status.selector
//	  selectableFields: [spec.color]
//	  printerColumns:
//	  - {name: Color, type: string, jsonPath: .spec.color}
type ResourceFile struct {
	Resources []ResourceSpec `json:"resources"`
}

// ResourceSpec declares one type in a resources file.
type ResourceSpec struct {
	Group             string          `json:"group"`
	Version           string          `json:"version"`
	Kind              string          `json:"kind"`
	ListKind          string          `json:"listKind,omitempty"`
	Plural            string          `json:"plural"`
	Singular          string          `json:"singular,omitempty"`
	ShortNames        []string        `json:"shortNames,omitempty"`
	Categories        []string        `json:"categories,omitempty"`
	Namespaced        bool            `json:"namespaced"`
	StatusSubresource bool            `json:"statusSubresource,omitempty"`
	SelectableFields  []string        `json:"selectableFields,omitempty"`
	PrinterColumns    []PrinterColumn `json:"printerColumns,omitempty"`
	// Scale gives the type a /scale subresource, as a CRD's
	// subresources.scale.
	Scale *ScaleSubresource `json:"scale,omitempty"`
}

// LoadResourceFile reads the types declared in a resources file. Unknown
// fields are errors, so a typo does not silently change a type.
func LoadResourceFile(path string) ([]Type, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("registry: read resources file: %w", err)
	}
	return ParseResourceFile(data)
}

// ParseResourceFile parses the YAML (or JSON) of a resources file.
func ParseResourceFile(data []byte) ([]Type, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	var f ResourceFile
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("registry: parse resources file: %w", err)
	}
	types := make([]Type, 0, len(f.Resources))
	for i, r := range f.Resources {
		t, err := Type{
			Group: r.Group, Version: r.Version, Kind: r.Kind, ListKind: r.ListKind,
			Plural: r.Plural, Singular: r.Singular, ShortNames: r.ShortNames, Categories: r.Categories,
			Namespaced: r.Namespaced, SelectableFields: r.SelectableFields, PrinterColumns: r.PrinterColumns,
			Strategy: GenericStrategy{Status: r.StatusSubresource}, Scale: r.Scale,
		}.withDefaults()
		if err == nil && r.Scale != nil {
			err = validateScaleSubresource(r.Scale, field.NewPath("scale")).ToAggregate()
		}
		if err != nil {
			return nil, fmt.Errorf("registry: resources file entry %d: %w", i, err)
		}
		types = append(types, t)
	}
	return types, nil
}
