package schema

import (
	"slices"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
)

// Default fills in obj, a whole object as generic JSON, the defaults the
// schema declares, as kube-apiserver does on create, on update and when
// reading from storage: a property that is absent gets its default (a
// deep copy), also inside array items and additionalProperties values,
// top-down, so a defaulted object gets its own properties' defaults;
// a null where the schema is not nullable is replaced by the default, or
// dropped when there is none. A non-structural schema defaults nothing.
func (s *Schema) Default(obj map[string]any) {
	if s.structural == nil {
		return
	}
	defaulting.PruneNonNullableNullsWithoutDefaults(obj, s.structural)
	defaulting.Default(obj, s.structural)
}

// Prune removes from obj, a whole object as generic JSON, every field the
// schema does not declare, as kube-apiserver prunes custom resources:
// x-kubernetes-preserve-unknown-fields keeps a subtree, an
// x-kubernetes-embedded-resource keeps apiVersion, kind and metadata
// (pruned to ObjectMeta's fields), and at the root apiVersion, kind and
// metadata are always kept (the store decodes root metadata as
// ObjectMeta, dropping its unknown fields itself). It returns the paths
// of the removed fields ("spec.foo", "spec.items[0].bar"), sorted, for
// fieldValidation: kube-apiserver answers them with 400 BadRequest
// ("strict decoding error: unknown field ...") under Strict and with a
// Warning header each under Warn. A non-structural schema prunes nothing.
func (s *Schema) Prune(obj map[string]any) []string {
	if s.structural == nil {
		return nil
	}
	paths := pruning.PruneWithOptions(obj, s.structural, true, structuralschema.UnknownFieldPathOptions{
		TrackUnknownFieldPaths: true,
	})
	// Embedded resources' metadata is pruned to ObjectMeta's fields. A
	// metadata field of the wrong type stays, for Validate to report.
	_, metaPaths := objectmeta.CoerceWithOptions(nil, obj, s.structural, false, objectmeta.CoerceOptions{
		ReturnUnknownFieldPaths: true,
	})
	if len(metaPaths) == 0 {
		return paths
	}
	paths = append(paths, metaPaths...)
	slices.Sort(paths)
	return paths
}
