package apiextensions

import (
	"strings"

	"github.com/miniapi/miniapi/registry"
)

// Types returns the registry types that serve crd: one per served
// version, named by names (the accepted names), each storing its objects
// in the storage version. Schema, printer columns, selectable fields and
// subresources come from the version.
func Types(crd *CRD, names Names) []registry.Type {
	storageVersion := crd.Spec.StorageVersion()
	var out []registry.Type
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		if !v.Served {
			continue
		}
		out = append(out, versionType(crd, names, v, storageVersion))
	}
	return out
}

func versionType(crd *CRD, names Names, v *Version, storageVersion string) registry.Type {
	t := registry.Type{
		Group:          crd.Spec.Group,
		Version:        v.Name,
		StorageVersion: storageVersion,
		Kind:           names.Kind,
		ListKind:       names.ListKind,
		Plural:         names.Plural,
		Singular:       names.Singular,
		ShortNames:     names.ShortNames,
		Categories:     names.Categories,
		Namespaced:     crd.Spec.Scope == NamespaceScoped,
	}
	if hasSchema(v) {
		t.Schema = v.Schema.OpenAPIV3Schema
	}
	for _, f := range v.SelectableFields {
		t.SelectableFields = append(t.SelectableFields, strings.TrimPrefix(f.JSONPath, "."))
	}
	if len(v.AdditionalPrinterColumns) > 0 {
		for _, c := range v.AdditionalPrinterColumns {
			t.PrinterColumns = append(t.PrinterColumns, registry.PrinterColumn{
				Name: c.Name, Type: c.Type, Format: c.Format, Description: c.Description,
				Priority: c.Priority, JSONPath: c.JSONPath,
			})
		}
	} else {
		// Without additionalPrinterColumns kube-apiserver shows Age.
		t.PrinterColumns = []registry.PrinterColumn{{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"}}
	}
	status := false
	if sub := v.Subresources; sub != nil {
		status = sub.Status != nil && string(*sub.Status) != "null"
		if s := sub.Scale; s != nil {
			t.Scale = &registry.ScaleSubresource{SpecReplicasPath: s.SpecReplicasPath, StatusReplicasPath: s.StatusReplicasPath}
			if s.LabelSelectorPath != nil {
				t.Scale.LabelSelectorPath = *s.LabelSelectorPath
			}
		}
	}
	t.Strategy = customResourceStrategy(t.Schema, status)
	return t
}

// customResourceStrategy is the strategy of a custom resource version:
// a status subresource when declared. Schema validation, defaulting and
// pruning join here when the schema package provides them.
func customResourceStrategy(_ []byte, status bool) registry.Strategy {
	return registry.GenericStrategy{Status: status}
}
