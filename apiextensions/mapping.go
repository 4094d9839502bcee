package apiextensions

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/miniapi/miniapi/registry"
	"github.com/miniapi/miniapi/schema"
	"k8s.io/apimachinery/pkg/version"
)

// Types returns the registry types that serve crd: one per served
// version, named by names (the accepted names), each storing its objects
// in the storage version, converted by the CRD's webhook when its
// conversion strategy is Webhook (Type.Conversion). Schema, printer
// columns, selectable fields and subresources come from the version. Their Strategy is a
// registry.GenericStrategy saying only whether /status is served; the
// controller swaps in the schema's strategy when it serves the type.
func Types(crd *CRD, names Names) []registry.Type {
	storageVersion := crd.Spec.StorageVersion()
	schemas := map[string]json.RawMessage{}
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		schemas[v.Name] = nil
		if hasSchema(v) {
			schemas[v.Name] = v.Schema.OpenAPIV3Schema
		}
	}
	var conversion json.RawMessage
	if c := crd.Spec.Conversion; c != nil && c.Strategy == WebhookConverter {
		conversion, _ = json.Marshal(c) // a decoded struct always encodes
	}
	var out []registry.Type
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		if !v.Served {
			continue
		}
		t := versionType(crd, names, v, storageVersion)
		t.VersionSchemas = schemas
		t.Conversion = conversion
		out = append(out, t)
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
	if v.Deprecated {
		if v.DeprecationWarning != nil {
			t.DeprecationWarning = *v.DeprecationWarning
		} else {
			t.DeprecationWarning = defaultDeprecationWarning(&crd.Spec, v.Name)
		}
	}
	for _, f := range v.SelectableFields {
		t.SelectableFields = append(t.SelectableFields, strings.TrimPrefix(f.JSONPath, "."))
	}
	if len(v.AdditionalPrinterColumns) > 0 {
		t.PrinterColumns = slices.Clone(v.AdditionalPrinterColumns)
	} else {
		// Without additionalPrinterColumns kube-apiserver shows Age.
		t.PrinterColumns = registry.DefaultPrinterColumns()
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
	t.Strategy = registry.GenericStrategy{Status: status}
	return t
}

// ReadDefaults returns the defaulting a CRD version's storage applies to
// every object it reads, as kube-apiserver defaults custom resources read
// from etcd: the version's schema defaults, or nil when t is not a CRD
// version (StorageVersion unset) or its schema declares no default. The
// server's storage factory puts it in the version's storage/versioned
// decorator, below the cache, so cached objects are already defaulted.
func ReadDefaults(t *registry.Type) func(map[string]any) {
	if t.StorageVersion == "" || !bytes.Contains(t.Schema, []byte(`"default"`)) {
		return nil
	}
	s, err := schema.Compile(t.Schema)
	if err != nil {
		return nil
	}
	return s.Default
}

// withSchemaStrategy gives t the strategy of a custom resource version:
// its schema's pruning, defaulting and validation (registry.SchemaStrategy)
// and the status subresource when declared. Compiling the schema costs
// more than comparing types, so the controller does it only for a type it
// is about to serve. A schema that does not compile (one stored before a
// stricter check) leaves the type without validation.
func withSchemaStrategy(t registry.Type) (registry.Type, error) {
	if len(t.Schema) == 0 {
		return t, nil
	}
	s, err := schema.Compile(t.Schema)
	if err != nil {
		return t, err
	}
	t.Strategy = registry.SchemaStrategy(s, &t)
	return t, nil
}

// defaultDeprecationWarning is kube-apiserver's warning for a deprecated
// version without a deprecationWarning: "<group>/<version> <Kind> is
// deprecated", followed by "; use <group>/<newer> <Kind>" naming the
// highest served, undeprecated version that sorts after it (kube's
// version order: v2 > v1 > v1beta1).
func defaultDeprecationWarning(spec *Spec, deprecated string) string {
	msg := fmt.Sprintf("%s/%s %s is deprecated", spec.Group, deprecated, spec.Names.Kind)
	var newer []string
	for _, v := range spec.Versions {
		if v.Served && !v.Deprecated && version.CompareKubeAwareVersionStrings(deprecated, v.Name) < 0 {
			newer = append(newer, v.Name)
		}
	}
	if len(newer) == 0 {
		return msg
	}
	best := slices.MaxFunc(newer, version.CompareKubeAwareVersionStrings)
	return msg + fmt.Sprintf("; use %s/%s %s", spec.Group, best, spec.Names.Kind)
}

// hasSchema reports whether version v declares a schema.
func hasSchema(v *Version) bool {
	return v.Schema != nil && len(v.Schema.OpenAPIV3Schema) > 0 && string(v.Schema.OpenAPIV3Schema) != "null"
}
