package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/fieldmanager"
	"github.com/miniapi/miniapi/registry"
	"github.com/miniapi/miniapi/storage"
	"k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
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
// kube-apiserver does: malformed values are 400, invalid combinations 422.
func parseListParams(q url.Values, watch bool) (*listParams, error) {
	p := &listParams{watch: watch}
	var err error
	if s := q.Get("labelSelector"); s != "" {
		if p.Label, err = labels.Parse(s); err != nil {
			return nil, api.NewBadRequest(fmt.Sprintf("unable to parse labelSelector %q: %v", s, err))
		}
	}
	if s := q.Get("fieldSelector"); s != "" {
		if p.Field, err = fields.ParseSelector(s); err != nil {
			return nil, api.NewBadRequest(fmt.Sprintf("unable to parse fieldSelector %q: %v", s, err))
		}
	}
	if s := q.Get("limit"); s != "" {
		if p.Limit, err = strconv.ParseInt(s, 10, 64); err != nil {
			return nil, api.NewBadRequest(fmt.Sprintf("limit must be an integer, got %q", s))
		}
		if p.Limit < 0 {
			p.Limit = 0 // kube-apiserver treats a negative limit as none
		}
	}
	p.Continue = q.Get("continue")
	p.ResourceVersion = q.Get("resourceVersion")
	if _, err := storage.ParseResourceVersion(p.ResourceVersion); err != nil {
		return nil, badResourceVersion(p.ResourceVersion)
	}
	p.ResourceVersionMatch = q.Get("resourceVersionMatch")
	if b, set, err := boolParam(q, "allowWatchBookmarks"); err != nil {
		return nil, err
	} else if set {
		p.allowWatchBookmarks = b
	}
	if b, set, err := boolParam(q, "sendInitialEvents"); err != nil {
		return nil, err
	} else if set {
		p.sendInitialEvents = &b
	}
	if s := q.Get("timeoutSeconds"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return nil, api.NewBadRequest(fmt.Sprintf("timeoutSeconds must be a non-negative integer, got %q", s))
		}
		p.timeout = time.Duration(n) * time.Second
	}
	// Storage's rule (a continue token pins its own revision), answered
	// here before the selectors are looked at, and for watches too. With
	// a valid resourceVersion and no match it is the only one that fails.
	if (storage.ListOptions{ResourceVersion: p.ResourceVersion, Continue: p.Continue}).Validate() != nil {
		return nil, api.NewBadRequest("specifying resource version is not allowed when using continue")
	}
	opts := &internalversion.ListOptions{
		ResourceVersion:      p.ResourceVersion,
		ResourceVersionMatch: metav1.ResourceVersionMatch(p.ResourceVersionMatch),
		Watch:                watch,
		AllowWatchBookmarks:  p.allowWatchBookmarks,
		SendInitialEvents:    p.sendInitialEvents,
		Continue:             p.Continue,
		Limit:                p.Limit,
	}
	if errs := validation.ValidateListOptions(opts, true); len(errs) > 0 {
		return nil, api.NewInvalid(api.GroupKind{Group: metaGroup, Kind: "ListOptions"}, "", errs)
	}
	return p, nil
}

// boolParam parses an optional boolean query parameter.
func boolParam(q url.Values, name string) (val, set bool, err error) {
	s, ok := q[name]
	if !ok || len(s) == 0 {
		return false, false, nil
	}
	b, perr := strconv.ParseBool(s[0])
	if perr != nil {
		return false, false, api.NewBadRequest(fmt.Sprintf("%s must be true or false, got %q", name, s[0]))
	}
	return b, true, nil
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
	if force, set, err := boolParam(q, "force"); err != nil {
		return p, err
	} else if set && patchType != registry.PatchApply {
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

// warnIgnoredParams adds a warning for each query parameter miniapi
// accepts, as kube-apiserver does, without doing what it asks, so that a
// client is never silently given less than it requested.
func warnIgnoredParams(ctx context.Context, r *http.Request) {
	q := r.URL.Query()
	if r.Method == http.MethodDelete {
		if b, _, _ := boolParam(q, "ignoreStoreReadErrorWithClusterBreakingPotential"); b {
			api.AddWarning(ctx, "ignoreStoreReadErrorWithClusterBreakingPotential has no effect: miniapi stores no object it cannot read")
		}
	}
}

// gracePeriodWarning is the answer to a gracePeriodSeconds in a delete's
// query or body, for kinds without graceful deletion.
const gracePeriodWarning = "gracePeriodSeconds has no effect: only Pods are deleted gracefully, other objects at once (or once their finalizers are gone), as by kube-apiserver"
