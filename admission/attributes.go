package admission

import (
	"sync"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kadmission "k8s.io/apiserver/pkg/admission"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	"k8s.io/apiserver/pkg/authentication/user"
)

// attributes is kube's admission.Attributes over one registry request.
// kube's own record carries the names, options, user and reinvocation
// context; the objects are converted from the request's on first use
// (object), and audit annotations kept here, where kube's audit
// decorator reads them (AnnotationsGetter).
type attributes struct {
	kadmission.Attributes
	req   *registry.AdmissionRequest
	forms objectForms

	mu          sync.Mutex
	obj, old    runtime.Object
	objErr      error
	objDone     bool
	oldDone     bool
	annotations map[string]annotation
}

type annotation struct {
	level auditinternal.Level
	value string
}

var _ kadmission.AnnotationsGetter = (*attributes)(nil)

func newAttributes(req *registry.AdmissionRequest, forms objectForms, kind schema.GroupVersionKind, resource schema.GroupVersionResource, options runtime.Object, u user.Info) *attributes {
	op := kadmission.Operation(req.Operation)
	return &attributes{
		Attributes: kadmission.NewAttributesRecord(nil, nil, kind, req.Namespace, req.Name, resource, req.Subresource, op, options, req.DryRun, u),
		req:        req,
		forms:      forms,
	}
}

// GetObject returns the object written, in the form kube's plugins
// expect, converting it on the first call.
func (a *attributes) GetObject() runtime.Object {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.objDone {
		a.objDone = true
		if a.req.Object != nil {
			a.obj, a.objErr = a.forms.toKube(a.req.Object)
		}
	}
	if a.obj == nil {
		return nil // a nil interface, not a typed nil
	}
	return a.obj
}

// GetOldObject returns the object an update or delete replaces.
func (a *attributes) GetOldObject() runtime.Object {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.oldDone {
		a.oldDone = true
		if a.req.OldObject != nil {
			var err error
			if a.old, err = a.forms.toKube(a.req.OldObject); err != nil && a.objErr == nil {
				a.objErr = err
			}
		}
	}
	if a.old == nil {
		return nil
	}
	return a.old
}

// writeBack turns the object plugins may have changed into the
// request's again, if any plugin looked at it.
func (a *attributes) writeBack() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.objErr != nil {
		return a.objErr
	}
	if a.obj == nil || a.req.Object == nil {
		return nil
	}
	out, err := a.forms.fromKube(a.obj)
	if err != nil {
		return err
	}
	*a.req.Object = *out
	return nil
}

// conversionErr is the error of converting the request's objects, if
// any plugin asked for them and it failed.
func (a *attributes) conversionErr() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.objErr
}

// AddAnnotation records an audit annotation at level Metadata.
func (a *attributes) AddAnnotation(key, value string) error {
	return a.AddAnnotationWithLevel(key, value, auditinternal.LevelMetadata)
}

// AddAnnotationWithLevel records an audit annotation, with kube's rules
// (key format, no level below Metadata, no overwriting with another
// value) checked by kube's record.
func (a *attributes) AddAnnotationWithLevel(key, value string, level auditinternal.Level) error {
	if err := a.Attributes.AddAnnotationWithLevel(key, value, level); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.annotations == nil {
		a.annotations = map[string]annotation{}
	}
	a.annotations[key] = annotation{level: level, value: value}
	return nil
}

// GetAnnotations returns the audit annotations at or below maxLevel.
func (a *attributes) GetAnnotations(maxLevel auditinternal.Level) map[string]string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.annotations == nil {
		return nil
	}
	out := make(map[string]string, len(a.annotations))
	for k, v := range a.annotations {
		if v.level.Less(maxLevel) || v.level == maxLevel {
			out[k] = v.value
		}
	}
	return out
}

// objectOf is the api.Object form of an unstructured object's JSON.
func objectOf(data []byte) (*api.Object, error) {
	var out api.Object
	if err := out.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	return &out, nil
}
