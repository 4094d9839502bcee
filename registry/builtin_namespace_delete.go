package registry

import (
	"encoding/json"

	"github.com/miniapi/miniapi/api"
)

// A Namespace's deletion, as kube-apiserver's namespace storage runs it:
// the first delete sets deletionTimestamp and phase Terminating and keeps
// the namespace; the namespace controller empties it and then removes its
// "kubernetes" entry from spec.finalizers through /finalize; the namespace
// goes once spec.finalizers and metadata.finalizers are both empty.
var (
	_ DeletionHolder      = namespaceStrategy{}
	_ FinalizeSubresource = namespaceStrategy{}
)

// PrepareForDelete moves a namespace whose deletion begins to phase
// Terminating. A status that is not a JSON object is left for Normalize
// to refuse.
func (namespaceStrategy) PrepareForDelete(obj *api.Object) {
	status, ok := objectField(obj, "status")
	if !ok {
		return
	}
	status["phase"], _ = json.Marshal(namespaceTerminating)
	_ = setField(obj, "status", status, false)
}

// HoldsDeletion reports whether spec.finalizers still keep a namespace
// being deleted.
func (namespaceStrategy) HoldsDeletion(obj *api.Object) bool {
	spec, ok := objectField(obj, "spec")
	if !ok {
		return true // stored namespaces have an object spec; keep one that does not
	}
	var fins []string
	if raw, present := spec["finalizers"]; present && json.Unmarshal(raw, &fins) != nil {
		return true
	}
	return len(fins) > 0
}

// PrepareForFinalize makes obj the previous namespace with obj's
// spec.finalizers, so an update through /finalize changes nothing else.
func (namespaceStrategy) PrepareForFinalize(obj, old *api.Object) {
	var fins json.RawMessage
	if spec, ok := objectField(obj, "spec"); ok {
		fins = spec["finalizers"]
	}
	*obj = *old.DeepCopy()
	spec, ok := objectField(obj, "spec")
	if !ok {
		return
	}
	if fins == nil {
		delete(spec, "finalizers")
	} else {
		spec["finalizers"] = fins
	}
	_ = setField(obj, "spec", spec, false)
}

// RefusesCollectionDelete is true: kube-apiserver serves no
// deletecollection on namespaces.
func (namespaceStrategy) RefusesCollectionDelete() bool { return true }
