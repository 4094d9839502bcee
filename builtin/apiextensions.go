package builtin

import (
	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition"
	crdtable "k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition/tableconvertor"
)

// apiextensionsResources are apiextensions.k8s.io/v1's resources, which
// kube-apiserver serves from its embedded apiextensions-apiserver, with
// that server's strategies and table convertor. Serving a CRD's objects
// is package apiextensions' controller's part.
func apiextensionsResources() []*resource {
	return []*resource{{
		group: "apiextensions.k8s.io", version: "v1", kind: "CustomResourceDefinition", plural: "customresourcedefinitions",
		shortNames: []string{"crd", "crds"}, categories: []string{"api-extensions"},
		strategy: customresourcedefinition.NewStrategy(scheme),
		status:   customresourcedefinition.NewStatusStrategy(scheme),
		attrs:    customresourcedefinition.GetAttrs,
		printer:  crdtable.New(),
	}}
}

// crdKind is the CustomResourceDefinition kind: a kind plus the deletion
// kube's CRD storage (not its strategy) implements, which the registry's
// DeletionHolder expresses. The first delete adds the cleanup finalizer
// and the Terminating condition; package apiextensions' controller then
// deletes the CRD's objects and removes the finalizer.
type crdKind struct{ *kind }

var _ registry.DeletionHolder = crdKind{}

// PrepareForDelete does what kube's CRD storage does to a CRD on the
// first delete, but for the deletionTimestamp the Store sets.
func (k crdKind) PrepareForDelete(obj *api.Object) {
	in, err := k.toInternal(obj)
	if err != nil {
		return // an undecodable CRD is deleted as it is
	}
	crd := in.(*apiextensions.CustomResourceDefinition)
	if !apiextensions.CRDHasFinalizer(crd, apiextensions.CustomResourceCleanupFinalizer) {
		crd.Finalizers = append(crd.Finalizers, apiextensions.CustomResourceCleanupFinalizer)
	}
	apiextensions.SetCRDCondition(crd, apiextensions.CustomResourceDefinitionCondition{
		Type:    apiextensions.Terminating,
		Status:  apiextensions.ConditionTrue,
		Reason:  "InstanceDeletionPending",
		Message: "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
	})
	if out, err := k.fromInternal(in); err == nil {
		finalizers := crd.Finalizers
		out.Metadata = obj.Metadata
		out.Metadata.Finalizers = finalizers
		*obj = *out
	}
}

// HoldsDeletion is false: the cleanup finalizer alone keeps a CRD.
func (crdKind) HoldsDeletion(*api.Object) bool { return false }
