package builtin

import (
	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	"k8s.io/kubernetes/pkg/apis/core"
)

// namespaceKind is the Namespace kind: a kind plus the deletion kube's
// namespace storage (not its strategy) implements, which the registry's
// DeletionHolder expresses. The first delete marks the namespace
// Terminating; it goes once its spec.finalizers are empty too (the
// namespace controller empties it, then removes the "kubernetes"
// finalizer through /finalize).
type namespaceKind struct{ *kind }

var (
	_ registry.DeletionHolder          = namespaceKind{}
	_ registry.CollectionDeleteRefuser = namespaceKind{}
)

// RefusesCollectionDelete is true: kube-apiserver serves no
// deletecollection on namespaces.
func (namespaceKind) RefusesCollectionDelete() bool { return true }

// PrepareForDelete moves the namespace to phase Terminating.
func (k namespaceKind) PrepareForDelete(obj *api.Object) {
	in, err := k.toInternal(obj)
	if err != nil {
		return // an undecodable namespace is deleted as it is
	}
	in.(*core.Namespace).Status.Phase = core.NamespaceTerminating
	if out, err := k.fromInternal(in); err == nil {
		out.Metadata = obj.Metadata
		*obj = *out
	}
}

// HoldsDeletion reports whether spec.finalizers still hold the namespace.
func (k namespaceKind) HoldsDeletion(obj *api.Object) bool {
	in, err := k.toInternal(obj)
	if err != nil {
		return false
	}
	return len(in.(*core.Namespace).Spec.Finalizers) > 0
}
