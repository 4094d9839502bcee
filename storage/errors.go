package storage

import (
	"errors"
	"fmt"
)

// Code classifies a storage error by what callers branch on.
type Code int

// Error codes.
const (
	CodeNotFound Code = iota + 1
	CodeExists
	// CodeConflict: a precondition failed (uid or resourceVersion).
	CodeConflict
	// CodeCompacted: the revision asked for has been compacted away.
	CodeCompacted
	// CodeTooLargeResourceVersion: the revision asked for is newer than the
	// backend has seen, even after waiting.
	CodeTooLargeResourceVersion
	// CodeInvalid: the request to storage is malformed (a bad
	// resourceVersion or continue token).
	CodeInvalid
	// CodeInternal: the backend failed.
	CodeInternal
	// CodeEntityTooLarge: a write was refused because the object is
	// larger than the backend stores (etcd's --max-request-bytes, 1.5 MiB
	// by default, or the client's largest message); nothing was written.
	CodeEntityTooLarge
)

var codeNames = map[Code]string{
	CodeNotFound:                "not found",
	CodeExists:                  "already exists",
	CodeConflict:                "conflict",
	CodeCompacted:               "compacted",
	CodeTooLargeResourceVersion: "too large resource version",
	CodeInvalid:                 "invalid",
	CodeInternal:                "internal error",
	CodeEntityTooLarge:          "entity too large",
}

// Error is every error storage returns about a key.
type Error struct {
	Code Code
	Key  string
	// ResourceVersion is the revision involved, when there is one: the
	// current object's for Conflict, the oldest available for Compacted.
	ResourceVersion int64
	Err             error
}

func (e *Error) Error() string {
	msg := "storage: " + codeNames[e.Code]
	if e.Key != "" {
		msg += fmt.Sprintf(" %q", e.Key)
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// NewError builds an *Error.
func NewError(code Code, key string, rv int64, err error) *Error {
	return &Error{Code: code, Key: key, ResourceVersion: rv, Err: err}
}

func hasCode(err error, c Code) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == c
}

// IsNotFound reports whether err says the key does not exist.
func IsNotFound(err error) bool { return hasCode(err, CodeNotFound) }

// IsExists reports whether err says the key already exists.
func IsExists(err error) bool { return hasCode(err, CodeExists) }

// IsConflict reports whether err says a precondition failed.
func IsConflict(err error) bool { return hasCode(err, CodeConflict) }

// IsCompacted reports whether err says a revision was compacted.
func IsCompacted(err error) bool { return hasCode(err, CodeCompacted) }

// IsTooLargeResourceVersion reports whether err says a revision is newer
// than the backend has.
func IsTooLargeResourceVersion(err error) bool { return hasCode(err, CodeTooLargeResourceVersion) }

// IsEntityTooLarge reports whether err says a write was refused for the
// size of the object.
func IsEntityTooLarge(err error) bool { return hasCode(err, CodeEntityTooLarge) }

// IsInvalid reports whether err says the storage request was malformed.
func IsInvalid(err error) bool { return hasCode(err, CodeInvalid) }
