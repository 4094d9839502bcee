package storage

import (
	"fmt"
	"strconv"
)

// This file holds the resourceVersion rules every backend follows, as
// methods on the option types, so that etcd3, the cacher and the handlers
// in front of them cannot disagree.

// ParseResourceVersion parses a resourceVersion sent by a client: "" is 0
// (unset), anything else must be a non-negative decimal revision.
func ParseResourceVersion(rv string) (int64, error) {
	if rv == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil || n < 0 {
		return 0, NewError(CodeInvalid, "", 0, fmt.Errorf("invalid resource version %q", rv))
	}
	return n, nil
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
