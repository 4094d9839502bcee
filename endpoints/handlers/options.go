package handlers

import (
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	"k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	for _, v := range vals {
		if v != "All" {
			return false, api.NewInvalid(api.GroupKind{Group: metaGroup, Kind: kind}, "",
				field.ErrorList{field.NotSupported(field.NewPath("dryRun"), v, []string{"All"})})
		}
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
	if p.ResourceVersion != "" {
		if n, err := strconv.ParseInt(p.ResourceVersion, 10, 64); err != nil || n < 0 {
			return nil, api.NewBadRequest(fmt.Sprintf("invalid resourceVersion %q: must be a non-negative integer", p.ResourceVersion))
		}
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
	if p.Continue != "" && p.ResourceVersion != "" && p.ResourceVersion != "0" {
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
