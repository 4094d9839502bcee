package handlers

import (
	"net/http"
	"net/url"
	"time"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/fieldmanager"
	"github.com/miniapi/miniapi/registry"
	"github.com/miniapi/miniapi/storage"
	"k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	"k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// metaGroup is the API group of option kinds in error messages.
const metaGroup = "meta.k8s.io"

// dryRun parses ?dryRun=; only "All" is defined. kind names the options
// type in the error, e.g. "CreateOptions".
func dryRun(q url.Values, kind string) (bool, error) {
	vals := q["dryRun"]
	if errs := metav1validation.ValidateDryRun(field.NewPath("dryRun"), vals); len(errs) > 0 {
		return false, api.NewInvalid(api.GroupKind{Group: metaGroup, Kind: kind}, "", errs)
	}
	return len(vals) > 0, nil
}

// listParams are the list and watch query parameters.
type listParams struct {
	registry.ListOptions
	watch               bool
	allowWatchBookmarks bool
	sendInitialEvents   *bool
	timeout             time.Duration
}

// parseListParams reads and validates list/watch query parameters the way
// kube-apiserver does: decoded by kube's parameter codec into its
// ListOptions (so a malformed number or selector is 400 with kube's
// message, and a boolean is true unless "false" or "0"), then judged by
// kube's ValidateListOptions (invalid combinations 422).
func parseListParams(q url.Values, watch bool) (*listParams, error) {
	var opts internalversion.ListOptions
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(q, metav1.SchemeGroupVersion, &opts); err != nil {
		return nil, api.NewBadRequest(err.Error())
	}
	p := &listParams{watch: watch}
	// The codec gives an empty selector for an absent one; nil is what
	// the rest of the path takes for "none".
	if opts.LabelSelector != nil && !opts.LabelSelector.Empty() {
		p.Label = opts.LabelSelector
	}
	if opts.FieldSelector != nil && !opts.FieldSelector.Empty() {
		p.Field = opts.FieldSelector
	}
	if opts.Limit < 0 {
		opts.Limit = 0 // kube-apiserver treats a negative limit as none
	}
	p.Limit, p.Continue = opts.Limit, opts.Continue
	p.ResourceVersion, p.ResourceVersionMatch = opts.ResourceVersion, string(opts.ResourceVersionMatch)
	p.allowWatchBookmarks, p.sendInitialEvents = opts.AllowWatchBookmarks, opts.SendInitialEvents
	if t := opts.TimeoutSeconds; t != nil {
		// A negative one ends a watch at once, as in kube-apiserver.
		p.timeout = time.Duration(*t) * time.Second
	}
	// kube validates the options with its defaults applied (a watch
	// from "" or "0" sends initial events, not older than then), and
	// only then reads the resourceVersion and, for a list, the rule
	// that a continue token pins its own revision, before the selectors
	// are looked at; storage reads the token itself. A watch ignores a
	// continue token.
	opts.Watch = watch
	internalversion.SetListOptionsDefaults(&opts, true)
	if errs := validation.ValidateListOptions(&opts, true); len(errs) > 0 {
		return nil, api.NewInvalid(api.GroupKind{Group: metaGroup, Kind: "ListOptions"}, "", errs)
	}
	if _, err := storage.ParseResourceVersion(p.ResourceVersion); err != nil {
		return nil, badParam(err)
	}
	if !watch {
		if err := (storage.ListOptions{ResourceVersion: p.ResourceVersion, Continue: p.Continue}).Validate(); err != nil {
			return nil, badParam(err)
		}
	}
	return p, nil
}

// boolParam reads an optional boolean query parameter by kube's rule for
// options (runtime.Convert_Slice_string_To_Pointer_bool, which its
// parameter codec applies): true unless "false" or "0", any case.
func boolParam(q url.Values, name string) (val, set bool) {
	s, ok := q[name]
	if !ok {
		return false, false
	}
	var b *bool
	_ = runtime.Convert_Slice_string_To_Pointer_bool(&s, &b, nil) // never fails
	return *b, true
}

// writeParams are the query parameters of the writes that carry an
// object or a patch: create, update and patch.
type writeParams struct {
	dryRun bool
	// fieldValidation is Strict, Warn or Ignore; absent means Warn, as in
	// kube-apiserver.
	fieldValidation string
	// fieldManager is the fieldManager parameter as sent; manager is
	// the name to record for a write that is not an apply (the user
	// agent's when fieldManager is empty).
	fieldManager, manager string
	// force is an apply's force parameter.
	force bool
}

// parseWriteParams reads dryRun, fieldManager, fieldValidation and (for
// patches) force, and validates them as kube-apiserver does: a bad value
// is 422 Invalid on kind (CreateOptions, UpdateOptions or PatchOptions).
// patchType is the media type of a patch, "" for create and update.
func parseWriteParams(r *http.Request, kind, patchType string) (writeParams, error) {
	q := r.URL.Query()
	var p writeParams
	var err error
	if p.dryRun, err = dryRun(q, kind); err != nil {
		return p, err
	}
	p.fieldManager = q.Get("fieldManager")
	p.manager = fieldmanager.ManagerName(p.fieldManager, r.UserAgent())
	p.fieldValidation = q.Get("fieldValidation")
	var errs field.ErrorList
	if patchType == registry.PatchApply && p.fieldManager == "" {
		// Controllers must name themselves; kubectl sends "kubectl".
		errs = append(errs, field.Required(field.NewPath("fieldManager"), "is required for apply patch"))
	}
	errs = append(errs, metav1validation.ValidateFieldManager(p.fieldManager, field.NewPath("fieldManager"))...)
	errs = append(errs, metav1validation.ValidateFieldValidation(field.NewPath("fieldValidation"), p.fieldValidation)...)
	if force, set := boolParam(q, "force"); set && patchType != registry.PatchApply {
		errs = append(errs, field.Forbidden(field.NewPath("force"), "may not be specified for non-apply patch"))
	} else {
		p.force = force
	}
	if len(errs) > 0 {
		return p, api.NewInvalid(api.GroupKind{Group: metaGroup, Kind: kind}, "", errs)
	}
	if p.fieldValidation == "" {
		p.fieldValidation = registry.FieldValidationWarn
	}
	return p, nil
}

// gracePeriodWarning is the answer to a gracePeriodSeconds in a delete's
// query or body, for kinds without graceful deletion.
const gracePeriodWarning = "gracePeriodSeconds has no effect: only Pods are deleted gracefully, other objects at once (or once their finalizers are gone), as by kube-apiserver"
