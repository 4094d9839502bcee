package registry

import (
	"errors"
	"fmt"
	"strings"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/storage"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// statusErr converts err for a request about the object name ("" for
// lists and watches) of the store's type; see statusError.
func (s *Store) statusErr(err error, name string) error {
	return statusError(s.t.GroupResource(), name, err)
}

// statusError is the one conversion of storage errors into what a client
// sees: a *api.StatusError with kube-apiserver's reason and code for the
// storage errors a client can act on (NotFound, Exists, Conflict,
// Compacted, TooLargeResourceVersion, EntityTooLarge, Invalid). Errors
// that already carry a Status pass through, and so does any other error,
// which handlers answer as a 500. gr and name are the resource and
// object a request addressed (name "" for lists and watches); nil stays
// nil.
func statusError(gr api.GroupResource, name string, err error) error {
	if err == nil {
		return nil
	}
	var se *api.StatusError
	if errors.As(err, &se) {
		return se
	}
	var e *storage.Error
	if !errors.As(err, &e) {
		return err
	}
	switch e.Code {
	case storage.CodeNotFound:
		return api.NewNotFound(gr, name)
	case storage.CodeExists:
		return api.NewAlreadyExists(gr, name)
	case storage.CodeConflict:
		msg := api.ConflictModified
		if e.Err != nil {
			msg = e.Err.Error()
		}
		return api.NewConflict(gr, name, msg)
	case storage.CodeCompacted:
		return api.NewResourceExpired(fmt.Sprintf("too old resource version: %s", compactedDetail(e)))
	case storage.CodeTooLargeResourceVersion:
		msg := "Too large resource version"
		if e.Err != nil {
			// kube-apiserver's wording starts with a capital:
			// "Too large resource version: N, current: M".
			m := e.Err.Error()
			msg = strings.ToUpper(m[:1]) + m[1:]
		}
		// With kube's cause, which clients (reflectors) look for.
		st := api.NewTimeout(msg, 1)
		st.ErrStatus.Details.Causes = []api.StatusCause{{Type: "ResourceVersionTooLarge", Message: "Too large resource version"}}
		return st
	case storage.CodeEntityTooLarge:
		// kube-apiserver answers this 500 (after one retry without
		// managedFields); it is the client's object that is too large,
		// so miniapi says so with the 413 kube gives a body over its
		// limit.
		what := gr.String()
		if name != "" {
			what = fmt.Sprintf("%s %q", what, name)
		}
		cause := e.Err
		if u := errors.Unwrap(cause); u != nil {
			cause = u // etcd's words, without the storage layer's prefix
		}
		return api.FromKubeError(apierrors.NewRequestEntityTooLargeError(
			fmt.Sprintf("%s is too large to be stored in etcd (%v)", what, cause)))
	case storage.CodeInvalid:
		msg := "invalid request"
		if e.Err != nil {
			msg = e.Err.Error()
		}
		return api.NewBadRequest(msg)
	}
	return err
}

// WatchEventError converts the error an ERROR event of a watch on gr
// carries, as statusError does, except that a watch from a compacted
// revision is answered in kube-apiserver's words for it: "too old
// resource version: <requestedRV> (<oldest available>)", requestedRV
// being the resourceVersion the watch asked for.
func WatchEventError(gr api.GroupResource, requestedRV string, err error) error {
	var e *storage.Error
	if errors.As(err, &e) && e.Code == storage.CodeCompacted {
		return api.NewResourceExpired(fmt.Sprintf("too old resource version: %s (%d)", requestedRV, e.ResourceVersion))
	}
	return statusError(gr, "", err)
}

func compactedDetail(e *storage.Error) string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return fmt.Sprint(e.ResourceVersion)
}

// continueExpired is kube-apiserver's answer to a continue token, of a
// list under prefix, whose revision has been compacted: with a token that
// continues from the same key at the latest revision, which the message
// offers.
func continueExpired(token, prefix string) error {
	st := api.NewResourceExpired("The provided continue parameter is too old to display a consistent list result. " +
		"You can start a new list without the continue parameter, or use the continue token in this response to " +
		"retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - " +
		"objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.")
	// The storage decoded the token before it answered Compacted.
	if from, _, err := storage.DecodeContinue(token, prefix); err == nil {
		if latest, err := storage.EncodeContinue(from, prefix, -1); err == nil {
			st.ErrStatus.Metadata.Continue = latest
		}
	}
	return st
}
