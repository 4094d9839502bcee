package storage

import (
	"fmt"
	"strconv"
)

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
