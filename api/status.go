package api

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// StatusReason is a machine-readable reason for a failure, as Kubernetes
// defines them.
type StatusReason string

// The reasons miniapi answers with; each maps to one HTTP code.
const (
	ReasonUnknown               StatusReason = ""
	ReasonNotFound              StatusReason = "NotFound"
	ReasonAlreadyExists         StatusReason = "AlreadyExists"
	ReasonConflict              StatusReason = "Conflict"
	ReasonInvalid               StatusReason = "Invalid"
	ReasonBadRequest            StatusReason = "BadRequest"
	ReasonForbidden             StatusReason = "Forbidden"
	ReasonMethodNotAllowed      StatusReason = "MethodNotAllowed"
	ReasonNotAcceptable         StatusReason = "NotAcceptable"
	ReasonRequestEntityTooLarge StatusReason = "RequestEntityTooLarge"
	ReasonUnsupportedMediaType  StatusReason = "UnsupportedMediaType"
	ReasonExpired               StatusReason = "Expired"
	ReasonGone                  StatusReason = "Gone"
	ReasonTimeout               StatusReason = "Timeout"
	ReasonTooManyRequests       StatusReason = "TooManyRequests"
	ReasonInternalError         StatusReason = "InternalError"
	ReasonServiceUnavailable    StatusReason = "ServiceUnavailable"
)

// Status is the object every failed request answers with (and some
// successful deletes).
type Status struct {
	TypeMeta `json:",inline"`
	Metadata ListMeta       `json:"metadata"`
	Status   string         `json:"status,omitempty"`
	Message  string         `json:"message,omitempty"`
	Reason   StatusReason   `json:"reason,omitempty"`
	Details  *StatusDetails `json:"details,omitempty"`
	Code     int32          `json:"code,omitempty"`
}

// Status values.
const (
	StatusSuccess = "Success"
	StatusFailure = "Failure"
)

// StatusDetails names the object a Status is about and, for Invalid, each
// field that is wrong.
type StatusDetails struct {
	Name              string        `json:"name,omitempty"`
	Group             string        `json:"group,omitempty"`
	Kind              string        `json:"kind,omitempty"`
	UID               string        `json:"uid,omitempty"`
	Causes            []StatusCause `json:"causes,omitempty"`
	RetryAfterSeconds int32         `json:"retryAfterSeconds,omitempty"`
}

// StatusCause is one reason behind a failure, usually one invalid field.
type StatusCause struct {
	Type    string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	Field   string `json:"field,omitempty"`
}

// GroupResource names a resource within an API group, e.g. configmaps in
// the core group ("") or leases in coordination.k8s.io.
type GroupResource struct {
	Group    string
	Resource string
}

// String is "resource" or "resource.group", as Kubernetes prints it.
func (gr GroupResource) String() string {
	if gr.Group == "" {
		return gr.Resource
	}
	return gr.Resource + "." + gr.Group
}

// GroupKind names a kind within an API group.
type GroupKind struct {
	Group string
	Kind  string
}

// String is "Kind" or "Kind.group", as Kubernetes prints it.
func (gk GroupKind) String() string {
	if gk.Group == "" {
		return gk.Kind
	}
	return gk.Kind + "." + gk.Group
}

// StatusError is an error a client caused or must know about; handlers
// answer it as its Status.
type StatusError struct {
	ErrStatus Status
}

// Error returns the status message.
func (e *StatusError) Error() string { return e.ErrStatus.Message }

// Status returns the Status to send, with its type and Failure filled in.
func (e *StatusError) Status() Status {
	s := e.ErrStatus
	s.Kind, s.APIVersion = "Status", "v1"
	if s.Status == "" {
		s.Status = StatusFailure
	}
	return s
}

func newStatusError(code int, reason StatusReason, msg string, d *StatusDetails) *StatusError {
	return &StatusError{Status{Status: StatusFailure, Code: int32(code), Reason: reason, Message: msg, Details: d}}
}

// NewNotFound says the named object of resource gr does not exist.
func NewNotFound(gr GroupResource, name string) *StatusError {
	return newStatusError(http.StatusNotFound, ReasonNotFound,
		fmt.Sprintf("%s %q not found", gr, name),
		&StatusDetails{Name: name, Group: gr.Group, Kind: gr.Resource})
}

// NewAlreadyExists says an object of that name already exists.
func NewAlreadyExists(gr GroupResource, name string) *StatusError {
	return newStatusError(http.StatusConflict, ReasonAlreadyExists,
		fmt.Sprintf("%s %q already exists", gr, name),
		&StatusDetails{Name: name, Group: gr.Group, Kind: gr.Resource})
}

// NewConflict says a write lost a race or failed a precondition; reason
// completes the sentence.
func NewConflict(gr GroupResource, name string, reason string) *StatusError {
	return newStatusError(http.StatusConflict, ReasonConflict,
		fmt.Sprintf("Operation cannot be fulfilled on %s %q: %s", gr, name, reason),
		&StatusDetails{Name: name, Group: gr.Group, Kind: gr.Resource})
}

// ConflictModified is the reason Kubernetes gives for a stale resourceVersion.
const ConflictModified = "the object has been modified; please apply your changes to the latest version and try again"

// NewInvalid says the object is invalid, with one cause per field error,
// formatted as kube-apiserver formats them.
func NewInvalid(gk GroupKind, name string, errs field.ErrorList) *StatusError {
	causes := make([]StatusCause, 0, len(errs))
	for _, e := range errs {
		causes = append(causes, StatusCause{Type: string(e.Type), Message: e.ErrorBody(), Field: e.Field})
	}
	var msg string
	switch len(errs) {
	case 0:
		msg = fmt.Sprintf("%s %q is invalid", gk, name)
	default:
		msg = fmt.Sprintf("%s %q is invalid: %v", gk, name, errs.ToAggregate())
	}
	return newStatusError(http.StatusUnprocessableEntity, ReasonInvalid, msg,
		&StatusDetails{Name: name, Group: gk.Group, Kind: gk.Kind, Causes: causes})
}

// NewBadRequest says the request itself is malformed.
func NewBadRequest(msg string) *StatusError {
	return newStatusError(http.StatusBadRequest, ReasonBadRequest, msg, nil)
}

// NewForbidden says the request is not allowed, for the reason given.
func NewForbidden(gr GroupResource, name string, reason string) *StatusError {
	var msg string
	if name == "" {
		msg = fmt.Sprintf("%s is forbidden: %s", gr, reason)
	} else {
		msg = fmt.Sprintf("%s %q is forbidden: %s", gr, name, reason)
	}
	return newStatusError(http.StatusForbidden, ReasonForbidden, msg,
		&StatusDetails{Name: name, Group: gr.Group, Kind: gr.Resource})
}

// NewMethodNotAllowed is kube-apiserver's answer to an HTTP method that
// no route of the path serves (a GET of namespaces/{name}/finalize): its
// router's generic 405, naming no resource.
func NewMethodNotAllowed() *StatusError {
	return newStatusError(http.StatusMethodNotAllowed, ReasonMethodNotAllowed,
		"the server does not allow this method on the requested resource", &StatusDetails{})
}

// NewMethodNotSupported says the resource does not support action, a verb
// such as "watch", on a route that exists: kube-apiserver's answer to a
// watch of a list it cannot watch.
func NewMethodNotSupported(gr GroupResource, action string) *StatusError {
	return newStatusError(http.StatusMethodNotAllowed, ReasonMethodNotAllowed,
		fmt.Sprintf("%s is not supported on resources of kind %q", action, gr.String()),
		&StatusDetails{Group: gr.Group, Kind: gr.Resource})
}

// NewNotAcceptable says none of the media types the client accepts can be
// produced.
func NewNotAcceptable(accepted []string) *StatusError {
	return newStatusError(http.StatusNotAcceptable, ReasonNotAcceptable,
		"only the following media types are accepted: "+strings.Join(accepted, ", "), nil)
}

// NewUnsupportedMediaType says the request body's media type is not one
// the endpoint reads, in the words of kube-apiserver's content
// negotiation (k8s.io/apiserver's negotiation.NewUnsupportedMediaTypeError).
func NewUnsupportedMediaType(accepted []string) *StatusError {
	return newStatusError(http.StatusUnsupportedMediaType, ReasonUnsupportedMediaType,
		"the body of the request was in an unknown format - accepted media types include: "+strings.Join(accepted, ", "), nil)
}

// NewRequestEntityTooLarge says the body exceeds the limit in bytes.
func NewRequestEntityTooLarge(limit int64) *StatusError {
	return newStatusError(http.StatusRequestEntityTooLarge, ReasonRequestEntityTooLarge,
		fmt.Sprintf("Request entity too large: limit is %d", limit), nil)
}

// NewResourceExpired says a resourceVersion or continue token is too old;
// it answers 410 with reason Expired.
func NewResourceExpired(msg string) *StatusError {
	return newStatusError(http.StatusGone, ReasonExpired, msg, nil)
}

// NewTimeout says the server could not finish in time; the client should
// retry after the given seconds.
func NewTimeout(msg string, retryAfterSeconds int) *StatusError {
	// "Timeout: " as apimachinery's NewTimeoutError words it.
	return newStatusError(http.StatusGatewayTimeout, ReasonTimeout, "Timeout: "+msg,
		&StatusDetails{RetryAfterSeconds: int32(retryAfterSeconds)})
}

// NewTooManyRequests asks the client to come back later.
func NewTooManyRequests(msg string, retryAfterSeconds int) *StatusError {
	return newStatusError(http.StatusTooManyRequests, ReasonTooManyRequests, msg,
		&StatusDetails{RetryAfterSeconds: int32(retryAfterSeconds)})
}

// NewServiceUnavailable says the server cannot serve the request now.
func NewServiceUnavailable(msg string) *StatusError {
	return newStatusError(http.StatusServiceUnavailable, ReasonServiceUnavailable, msg, nil)
}

// NewInternalError wraps a server-side failure.
func NewInternalError(err error) *StatusError {
	return newStatusError(http.StatusInternalServerError, ReasonInternalError,
		fmt.Sprintf("Internal error occurred: %v", err),
		&StatusDetails{Causes: []StatusCause{{Message: err.Error()}}})
}

// NewGenericNotFound is the 404 for a path that names no resource.
func NewGenericNotFound() *StatusError {
	return newStatusError(http.StatusNotFound, ReasonNotFound, "the server could not find the requested resource", &StatusDetails{})
}

// ReasonForError returns the reason of err's Status, or ReasonUnknown when
// err carries none.
func ReasonForError(err error) StatusReason {
	var se *StatusError
	if errors.As(err, &se) {
		return se.ErrStatus.Reason
	}
	return ReasonUnknown
}

// IsNotFound reports whether err is a NotFound StatusError.
func IsNotFound(err error) bool { return ReasonForError(err) == ReasonNotFound }

// IsConflict reports whether err is a Conflict StatusError.
func IsConflict(err error) bool { return ReasonForError(err) == ReasonConflict }

// IsAlreadyExists reports whether err is an AlreadyExists StatusError.
func IsAlreadyExists(err error) bool { return ReasonForError(err) == ReasonAlreadyExists }
