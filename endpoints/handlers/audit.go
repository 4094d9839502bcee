package handlers

import (
	"encoding/json"
	"net/http"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	"k8s.io/apiserver/pkg/audit"
)

// The audit event of a request (kube's audit filters put it in the
// request's context when the policy audits the request) gets what kube's
// handlers add to it: the request's object, the response's object and
// an error's Status, each only at the levels kube records them. Without
// an audit policy these return at once.

// auditJSON encodes the objects the audit event holds: they are JSON
// already.
var auditJSON = runtime.NewSimpleNegotiatedSerializer(runtime.SerializerInfo{
	MediaType: runtime.ContentTypeJSON, Serializer: unstructured.UnstructuredJSONScheme,
})

// auditLevel is the request's audit level; "" (below None) when it is
// not audited.
func auditLevel(r *http.Request) auditinternal.Level {
	ac := audit.AuditContextFrom(r.Context())
	if !ac.Enabled() {
		return ""
	}
	return ac.GetEventLevel()
}

// auditRequestObject records a write's object (JSON) as kube's handlers
// do (audit.LogRequestObject): its name, uid and resourceVersion complete
// the event's objectRef, and from level Request on it is the
// requestObject.
func auditRequestObject(r *http.Request, t *registry.Type, subresource string, j []byte) {
	if auditLevel(r).Less(auditinternal.LevelMetadata) {
		return
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(j); err != nil {
		return // the write fails on it, with its own error
	}
	gvr := schema.GroupVersionResource{Group: t.Group, Version: t.Version, Resource: t.Plural}
	audit.LogRequestObject(r.Context(), obj, gvr.GroupVersion(), gvr, subresource, auditJSON)
}

// auditRequestPatch records a patch as kube does (audit.LogRequestPatch).
func auditRequestPatch(r *http.Request, patch []byte) {
	if auditLevel(r).Less(auditinternal.LevelRequest) {
		return
	}
	audit.LogRequestPatch(r.Context(), patch)
}

// auditResponseObject records the answer's object (JSON), the
// responseObject at level RequestResponse, as kube's response writers do.
func auditResponseObject(r *http.Request, j []byte) {
	if auditLevel(r).Less(auditinternal.LevelRequestResponse) {
		return
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(j); err != nil {
		return
	}
	audit.LogResponseObject(r.Context(), obj, obj.GroupVersionKind().GroupVersion(), auditJSON)
}

// auditStatus records an error's Status as the event's responseStatus,
// whole, as kube's error writer does.
func auditStatus(r *http.Request, st api.Status) {
	if auditLevel(r).Less(auditinternal.LevelMetadata) {
		return
	}
	b, err := json.Marshal(st)
	if err != nil {
		return
	}
	ms := &metav1.Status{}
	if json.Unmarshal(b, ms) != nil {
		return
	}
	audit.AuditContextFrom(r.Context()).LogResponseObject(ms, nil)
}
