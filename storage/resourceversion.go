package storage

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	kubestorage "k8s.io/apiserver/pkg/storage"
)

// This file holds the resourceVersion rules every backend follows, as
// methods on the option types, so that etcd3, the cacher and the handlers
// in front of them cannot disagree.

// ParseResourceVersion parses a resourceVersion sent by a client: "" is 0
// (unset), anything else must be what kube-apiserver's versioner accepts
// (strconv.ParseUint: decimal digits, no sign), refused in its words.
// Revisions past the largest int64 read as the largest: no etcd revision
// reaches them, so they are too large, as they are for kube-apiserver.
func ParseResourceVersion(rv string) (int64, error) {
	n, err := kubestorage.APIObjectVersioner{}.ParseResourceVersion(rv)
	if err != nil {
		return 0, NewError(CodeInvalid, "", 0, fmt.Errorf("invalid resource version: %w", err))
	}
	return int64(min(n, math.MaxInt64)), nil
}

// FormatResourceVersion is the one place a revision becomes a
// resourceVersion string.
func FormatResourceVersion(rev int64) string {
	return strconv.FormatInt(rev, 10)
}

// SendsInitialEvents reports whether the watch starts with Added events
// for the objects that exist when it starts: as SendInitialEvents says
// when it is set, and otherwise for a resourceVersion of "" or 0, which
// kube-apiserver 1.37 treats as sendInitialEvents=true.
func (o WatchOptions) SendsInitialEvents() bool {
	if o.SendInitialEvents != nil {
		return *o.SendInitialEvents
	}
	rv, err := ParseResourceVersion(o.ResourceVersion)
	return err == nil && rv == 0
}

// SendsInitialEventsEnd reports whether the initial events end with a
// Bookmark marked InitialEventsEnd: whenever a watch that accepts
// bookmarks gets initial events, whether it asked for them or got them by
// default. kube-apiserver requires allowWatchBookmarks with
// sendInitialEvents=true, and sends no such bookmark without it.
func (o WatchOptions) SendsInitialEventsEnd() bool {
	return o.AllowBookmarks && o.SendsInitialEvents()
}

// Validate returns an Invalid error for options no backend serves: a
// ResourceVersion that is not "" or a revision; a ResourceVersion other
// than "" or "0" with a continue token, which pins its own revision (or
// the token, when it does not decode); and,
// without a token, ResourceVersionMatch NotOlderThan with no
// ResourceVersion, Exact with none other than 0, or an unknown match.
func (o ListOptions) Validate() error {
	rv, err := ParseResourceVersion(o.ResourceVersion)
	if err != nil {
		return err
	}
	invalid := func(msg string) error { return NewError(CodeInvalid, "", 0, errors.New(msg)) }
	if o.Continue != "" {
		if o.ResourceVersion != "" && o.ResourceVersion != "0" {
			// kube-apiserver reads the token first: a bad one is
			// its error. (Otherwise the backend's read of the token
			// is the one that refuses it, once.)
			if _, _, err := DecodeContinue(o.Continue, ""); err != nil {
				return err
			}
			return invalid("specifying resource version is not allowed when using continue")
		}
		return nil
	}
	switch o.ResourceVersionMatch {
	case "":
	case MatchNotOlderThan:
		if o.ResourceVersion == "" {
			return invalid("resourceVersionMatch is forbidden unless resourceVersion is provided")
		}
	case MatchExact:
		if rv == 0 {
			return invalid("resourceVersionMatch Exact needs a resourceVersion other than 0")
		}
	default:
		return invalid(fmt.Sprintf("unknown resourceVersionMatch %q", o.ResourceVersionMatch))
	}
	return nil
}

// Exact reports whether a list without a continue token must show the
// state at exactly revision ResourceVersion, rather than any state at
// least that new: with ResourceVersionMatch Exact, and, by Kubernetes'
// legacy rule, for a paged list (Limit > 0) at a revision other than 0
// with no match. (A continue token always pins the revision it carries.)
func (o ListOptions) Exact() bool {
	switch o.ResourceVersionMatch {
	case MatchExact:
		return true
	case "":
		rv, err := ParseResourceVersion(o.ResourceVersion)
		return err == nil && rv > 0 && o.Limit > 0
	}
	return false
}
