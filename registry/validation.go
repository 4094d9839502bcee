package registry

import (
	"github.com/miniapi/miniapi/api"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// metadataPath is the root of every metadata error.
var metadataPath = field.NewPath("metadata")

// ValidateObjectMeta checks a new object's metadata as kube-apiserver does
// on create: the name by rule, generateName, namespace required on
// namespaced types and forbidden on cluster-scoped ones, labels,
// annotations (keys and their 256 KiB total), ownerReferences, finalizers
// and managedFields. Errors are under "metadata" with kube-apiserver's
// wording, because the rules are apimachinery's own.
//
// A name may be empty while generateName is set: the Store validates
// before it generates the name, whereas kube-apiserver validates after,
// so "name or generateName is required" is only reported when both are
// missing.
func ValidateObjectMeta(meta *api.ObjectMeta, namespaced bool, rule NameRule) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(ptr(api.ToMetaV1(meta)), namespaced, NameValidator(rule), metadataPath)
	if meta.Name == "" && meta.GenerateName != "" {
		errs = dropErrors(errs, metadataPath.Child("name").String(), field.ErrorTypeRequired)
	}
	return errs
}

// ValidateObjectMetaUpdate checks that an update keeps what kube-apiserver
// makes immutable (name, namespace, uid, creationTimestamp,
// deletionTimestamp, deletionGracePeriodSeconds), does not decrement
// generation, adds no finalizer to an object being deleted, and carries
// valid labels, annotations, ownerReferences and managedFields.
//
// Unlike apimachinery it does not require metadata.resourceVersion: the
// Store enforces resourceVersion preconditions itself and allows
// unconditional updates, as kube-apiserver does for every built-in type.
func ValidateObjectMetaUpdate(newMeta, oldMeta *api.ObjectMeta) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaUpdate(ptr(api.ToMetaV1(newMeta)), ptr(api.ToMetaV1(oldMeta)), metadataPath)
	return dropErrors(errs, metadataPath.Child("resourceVersion").String(), field.ErrorTypeInvalid)
}

// NameValidator returns apimachinery's check for a NameRule. The function
// returns one message per violated constraint; prefix is true when the
// value is a generateName that gets a suffix appended.
func NameValidator(rule NameRule) func(name string, prefix bool) []string {
	switch rule {
	case NameLabel:
		return apivalidation.NameIsDNSLabel
	case NamePathSegment:
		//lint:ignore SA1019 kube-apiserver validates these names with it still
		return path.ValidatePathSegmentName
	default:
		return apivalidation.NameIsDNSSubdomain
	}
}

// dropErrors removes the errors of type typ at field f.
func dropErrors(errs field.ErrorList, f string, typ field.ErrorType) field.ErrorList {
	out := errs[:0]
	for _, e := range errs {
		if e.Field == f && e.Type == typ {
			continue
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func ptr[T any](v T) *T { return &v }
