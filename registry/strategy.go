package registry

import (
	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/fieldmanager"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Strategy is a type's behaviour beyond generic storage. Any value is a
// Strategy; the Store discovers what it can do through the capability
// interfaces below, each optional.
type Strategy any

// Defaulter fills defaults into an object before it is validated and
// written, on create and on update.
type Defaulter interface {
	Default(obj *api.Object)
}

// CreatePreparer is implemented by strategies that set fields of a new
// object that its creator does not manage, as kube-apiserver's
// PrepareForCreate does: it runs after the creator's managedFields are
// recorded, so no manager owns what it sets.
type CreatePreparer interface {
	PrepareForCreate(obj *api.Object)
}

// Canonicalizer is implemented by strategies that complete a new object
// once its name is final (generated from generateName), as
// kube-apiserver's Canonicalize: after validation, and owned by no one.
type Canonicalizer interface {
	Canonicalize(obj *api.Object)
}

// UpdatePreparer adjusts an update of the main resource before it is
// defaulted and validated, e.g. to keep fields clients may not change
// there (a Namespace's spec.finalizers).
type UpdatePreparer interface {
	PrepareForUpdate(obj, old *api.Object)
}

// CreateValidator validates a new object beyond ObjectMeta, returning
// errors at field paths relative to the object root.
type CreateValidator interface {
	ValidateCreate(obj *api.Object) field.ErrorList
}

// UpdateValidator validates a changed object against its previous state.
type UpdateValidator interface {
	ValidateUpdate(obj, old *api.Object) field.ErrorList
}

// Normalizer rewrites an object into its stored form after defaulting,
// e.g. a Secret folds stringData into data. It may fail with a
// StatusError for input that cannot be normalized.
type Normalizer interface {
	Normalize(obj *api.Object) error
}

// StatusSubresource is implemented by strategies whose type has a /status
// subresource: writes to the main resource keep .status, writes to /status
// change only .status.
type StatusSubresource interface {
	HasStatus() bool
}

// FieldReader is implemented by strategies that compute selectable field
// values themselves instead of reading them by path (e.g. a field whose
// default applies when it is absent).
type FieldReader interface {
	SelectableFieldValue(obj *api.Object, path string) (string, bool)
}

// Generationless is implemented by strategies of types whose objects have
// no metadata.generation, as kube-apiserver's built-in types without a
// spec that controllers observe (ConfigMap, Secret, Namespace, Event,
// Lease) have none.
type Generationless interface {
	Generationless()
}

// GenerationPolicy is implemented by strategies that decide themselves
// whether an update bumps metadata.generation; without it, generation
// moves when anything outside metadata and status changes.
type GenerationPolicy interface {
	BumpsGeneration(obj, old *api.Object) bool
}

// ColumnComputer is implemented by strategies with printer columns that a
// JSONPath cannot express, such as a ConfigMap's count of data keys. Table
// output asks it for every column declared with an empty JSONPath; obj is
// the object decoded as generic JSON.
type ColumnComputer interface {
	ComputeColumn(column string, obj map[string]any) (value any, ok bool)
}

// CollectionDeleteRefuser is implemented by strategies whose type does not
// serve DELETE on its collection, as kube-apiserver does not for
// namespaces: one request must not be able to delete every namespace.
type CollectionDeleteRefuser interface {
	RefusesCollectionDelete() bool
}

// SupportsDeleteCollection reports whether t serves DELETE on its
// collection.
func SupportsDeleteCollection(t *Type) bool {
	r, ok := t.Strategy.(CollectionDeleteRefuser)
	return !ok || !r.RefusesCollectionDelete()
}

// hasStatus reports whether s declares a status subresource.
func hasStatus(s Strategy) bool {
	ss, ok := s.(StatusSubresource)
	return ok && ss.HasStatus()
}

// GenericStrategy is the strategy of types declared only as data (from a
// resources file): an optional status subresource and nothing else.
type GenericStrategy struct {
	Status bool
}

// HasStatus reports whether the type has a /status subresource.
func (g GenericStrategy) HasStatus() bool { return g.Status }

// HasStatus reports whether t has a /status subresource.
func HasStatus(t *Type) bool { return hasStatus(t.Strategy) }

// MergeSchema is implemented by strategies whose objects merge (for
// managedFields and server-side apply) by a schema other than the Type's
// Schema: the built-in types, which merge by Kubernetes' own definitions
// of them, with their list and map types.
type MergeSchema interface {
	TypeConverter() (fieldmanager.TypeConverter, error)
}
