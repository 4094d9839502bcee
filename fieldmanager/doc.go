// Package fieldmanager tracks field ownership (metadata.managedFields) and
// merges server-side apply patches, for objects in miniapi's own form.
//
// It is a thin edge around Kubernetes' own field manager
// (k8s.io/apimachinery/pkg/util/managedfields, itself built on
// sigs.k8s.io/structured-merge-diff), so ownership, merges and conflicts
// come out exactly as kube-apiserver computes them. Objects cross the edge
// as unstructured maps: the store keeps working on api.Object and JSON
// bytes, and no scheme or conversion machinery reaches it.
//
// A Manager serves one resource type. Build it from the type's merge
// schema (a TypeConverter: ForModels for the built-in kinds, from kube's
// OpenAPI definitions of them, ForSchema for a CRD's openAPIV3Schema or a
// type without one), then call
// Update for every create, update and non-apply patch, and Apply for
// apply patches:
//
//	m, err := fieldmanager.New(fieldmanager.Config{Kind: gvk, TypeConverter: tc, HasStatus: true})
//	obj, err = m.Update(live, obj, fieldmanager.ManagerName(query.Get("fieldManager"), userAgent), "")
//	merged, err := m.Apply(live, patch, "kubectl", "", force)
//
// A Manager is immutable and safe for concurrent use.
package fieldmanager
