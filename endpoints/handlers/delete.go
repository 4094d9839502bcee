package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	"github.com/miniapi/miniapi/storage"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
	"k8s.io/apiserver/pkg/util/apihelpers"
)

// delete answers DELETE on an object with its last state, 200 OK, also
// when finalizers keep it for now. As kube-apiserver, 202 Accepted only
// when the object stays and the client asked for cascading deletion with
// orphanDependents=false (answering 202 more often breaks old clients).
func (q *request) delete() {
	out, opts, ok := q.readDelete()
	if !ok {
		return
	}
	if opts.IgnoreStoreReadError {
		if err := q.authorizeUnsafeDelete(); err != nil {
			q.fail(err)
			return
		}
	}
	obj, deleted, err := q.store.Delete(q.r.Context(), q.info.Namespace, q.info.Name, opts.DeleteOptions)
	if err != nil {
		q.fail(err)
		return
	}
	if deleted && !q.t.ReturnDeletedObject {
		q.writeDeleted(obj)
		return
	}
	code := http.StatusOK
	if !deleted && opts.cascadeRequested {
		code = http.StatusAccepted
	}
	q.writeObject(out, code, obj)
}

// writeDeleted answers a delete that removed obj as kube-apiserver's
// store does for a kind that does not return deleted objects: a Status
// Success naming it, details.kind being the resource, as kube sets it.
func (q *request) writeDeleted(obj *storage.Object) {
	var m struct {
		UID string `json:"uid"`
	}
	_ = json.Unmarshal(storage.MetadataJSON(obj.Data), &m) // stored objects have metadata; an empty uid otherwise
	st := api.Status{TypeMeta: api.TypeMeta{APIVersion: "v1", Kind: "Status"}, Status: api.StatusSuccess,
		Details: &api.StatusDetails{Name: q.info.Name, Group: q.t.Group, Kind: q.t.Plural, UID: m.UID}}
	writeStatus(q.w, q.r, http.StatusOK, st)
}

// deleteRequest is a delete's options and how to answer it.
type deleteRequest struct {
	registry.DeleteOptions
	// cascadeRequested is orphanDependents=false, which asks for 202 while
	// the object is still there.
	cascadeRequested bool
}

// deleteCollection answers DELETE on a collection with the list it
// deleted from: the objects as listed, at the list's resourceVersion, as
// kube-apiserver answers; with a limit, the first page's, with its
// continue token.
func (q *request) deleteCollection() {
	p, err := parseListParams(q.r.URL.Query(), false)
	if err != nil {
		q.fail(err)
		return
	}
	out, opts, ok := q.readDelete()
	if !ok {
		return
	}
	if opts.IgnoreStoreReadError {
		// kube-apiserver's delete-collection handler refuses it.
		errs := field.ErrorList{field.Invalid(field.NewPath("ignoreStoreReadErrorWithClusterBreakingPotential"), true, "is not allowed with DELETECOLLECTION, try again after removing the option")}
		q.fail(api.NewInvalid(api.GroupKind{Group: metaGroup, Kind: "DeleteOptions"}, "", errs))
		return
	}
	l, err := q.store.DeleteCollection(q.r.Context(), q.info.Namespace, p.ListOptions, opts.DeleteOptions)
	if err != nil {
		q.fail(err)
		return
	}
	meta := api.ListMeta{ResourceVersion: storage.FormatResourceVersion(l.Revision), Continue: l.Continue, RemainingItemCount: l.RemainingItemCount}
	q.writeItems(out, http.StatusOK, meta, l.Items)
}

// readDelete negotiates the answer and reads the delete options; it
// answers errors itself and reports false when the request is done.
func (q *request) readDelete() (output, deleteRequest, bool) {
	out, err := negotiateOutput(q.r, q.t)
	var opts deleteRequest
	if err == nil {
		opts, err = q.deleteOptions()
	}
	if err != nil {
		q.fail(err)
		return out, opts, false
	}
	return out, opts, true
}

// deleteOptions reads DeleteOptions from the body or, when there is
// none, from the query (dryRun, propagationPolicy, orphanDependents,
// gracePeriodSeconds, and uid and resourceVersion as preconditions, also
// on a collection, where resourceVersion is the list's too), and
// validates them as kube-apiserver does. As
// kube-apiserver's delete handlers, a body is the whole of the options:
// the query's are then not read.
func (q *request) deleteOptions() (deleteRequest, error) {
	var do api.DeleteOptions
	body, err := readBody(q.w, q.r, q.h.maxBody)
	if err != nil {
		return deleteRequest{}, err
	}
	if len(body) > 0 {
		if err := decodeDeleteOptions(q.r, body, &do); err != nil {
			return deleteRequest{}, err
		}
		if ignored := queryDeleteParams(q.r.URL.Query(), q.info.Name == ""); len(ignored) > 0 {
			api.AddWarning(q.r.Context(), fmt.Sprintf(bodyOverridesQueryWarning, strings.Join(ignored, ", ")))
		}
	} else if err := queryDeleteOptions(q.r.URL.Query(), &do); err != nil {
		return deleteRequest{}, err
	}
	if _, graceful := q.t.Strategy.(registry.GracefulDeleter); do.GracePeriodSeconds != nil && !graceful {
		api.AddWarning(q.r.Context(), gracePeriodWarning)
	}
	mo := &metav1.DeleteOptions{DryRun: do.DryRun, GracePeriodSeconds: do.GracePeriodSeconds,
		IgnoreStoreReadErrorWithClusterBreakingPotential: do.IgnoreStoreReadErrorWithClusterBreakingPotential}
	//lint:ignore SA1019 clients still send it; kube's rule judges it
	mo.OrphanDependents = do.OrphanDependents
	if do.PropagationPolicy != nil {
		p := metav1.DeletionPropagation(*do.PropagationPolicy)
		mo.PropagationPolicy = &p
	}
	if p := do.Preconditions; p != nil {
		mo.Preconditions = &metav1.Preconditions{UID: (*types.UID)(p.UID), ResourceVersion: p.ResourceVersion}
	}
	if errs := metav1validation.ValidateDeleteOptions(mo); len(errs) > 0 {
		return deleteRequest{}, api.NewInvalid(api.GroupKind{Group: metaGroup, Kind: "DeleteOptions"}, "", errs)
	}
	dry := len(do.DryRun) > 0
	opts := deleteRequest{DeleteOptions: registry.DeleteOptions{DryRun: dry, Preconditions: do.Preconditions, GracePeriodSeconds: do.GracePeriodSeconds,
		IgnoreStoreReadError: do.IgnoreStoreReadErrorWithClusterBreakingPotential != nil && *do.IgnoreStoreReadErrorWithClusterBreakingPotential}}
	switch {
	case do.PropagationPolicy != nil:
		opts.PropagationPolicy = *do.PropagationPolicy
	case do.OrphanDependents != nil && *do.OrphanDependents:
		opts.PropagationPolicy = api.DeletePropagationOrphan
	case do.OrphanDependents != nil:
		// The deprecated orphanDependents=false is an explicit Background.
		opts.PropagationPolicy = api.DeletePropagationBackground
		opts.cascadeRequested = true
	}
	return opts, nil
}

// decodeDeleteOptions decodes a delete's body as kube-apiserver's delete
// handler does, with its codecs for meta.k8s.io (JSON, YAML or protobuf,
// meta.k8s.io/v1 by default, any group's DeleteOptions accepted), and
// answers its 400 in its words for anything else; do gets what it said.
func decodeDeleteOptions(r *http.Request, body []byte, do *api.DeleteOptions) error {
	codecs := apihelpers.GetMetaInternalVersionCodecs()
	s, err := negotiation.NegotiateInputSerializer(r, false, codecs)
	if err != nil {
		return api.FromKubeError(err)
	}
	opts := &metav1.DeleteOptions{}
	defaultGVK := metav1.SchemeGroupVersion.WithKind("DeleteOptions")
	obj, _, err := codecs.DecoderToVersion(s.Serializer, defaultGVK.GroupVersion()).Decode(body, &defaultGVK, opts)
	if err != nil {
		return api.NewBadRequest(err.Error())
	}
	if obj != opts {
		return api.NewBadRequest("decoded object cannot be converted to DeleteOptions")
	}
	fromKubeDeleteOptions(opts, do)
	return nil
}

// fromKubeDeleteOptions copies kube's DeleteOptions into do.
func fromKubeDeleteOptions(opts *metav1.DeleteOptions, do *api.DeleteOptions) {
	do.GracePeriodSeconds, do.DryRun = opts.GracePeriodSeconds, opts.DryRun
	//lint:ignore SA1019 clients still send it; kube's rule judges it
	do.OrphanDependents = opts.OrphanDependents
	if p := opts.PropagationPolicy; p != nil {
		do.PropagationPolicy = (*string)(p)
	}
	if p := opts.Preconditions; p != nil {
		do.Preconditions = &api.Preconditions{UID: (*string)(p.UID), ResourceVersion: p.ResourceVersion}
	}
	do.IgnoreStoreReadErrorWithClusterBreakingPotential = opts.IgnoreStoreReadErrorWithClusterBreakingPotential
}

// queryDeleteOptions reads the DeleteOptions a query gives into do with
// kube's conversion of query parameters, which also makes ?uid= and
// ?resourceVersion= the delete's preconditions.
func queryDeleteOptions(qv url.Values, do *api.DeleteOptions) error {
	var opts metav1.DeleteOptions
	if err := metav1.Convert_url_Values_To_v1_DeleteOptions(&qv, &opts, nil); err != nil {
		// The conversion's words (gracePeriodSeconds that is not a
		// number) are kube's 400 message.
		return api.NewBadRequest(err.Error())
	}
	fromKubeDeleteOptions(&opts, do)
	return nil
}

// deleteQueryParams are the DeleteOptions a query may give.
var deleteQueryParams = []string{"dryRun", "gracePeriodSeconds", "orphanDependents", "propagationPolicy", "resourceVersion", "uid"}

// queryDeleteParams returns the DeleteOptions parameters the query has;
// on a collection, resourceVersion is the list's too, so not one of them.
func queryDeleteParams(qv url.Values, collection bool) []string {
	var out []string
	for _, p := range deleteQueryParams {
		if qv.Has(p) && !(collection && p == "resourceVersion") {
			out = append(out, p)
		}
	}
	return out
}

// bodyOverridesQueryWarning answers a delete whose query's options are
// not read because it has a body (%s: the parameters).
const bodyOverridesQueryWarning = "%s in the query have no effect: a DELETE with a body takes its options from the body alone, as on kube-apiserver"
