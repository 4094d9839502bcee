package registry

import (
	"errors"
	"fmt"
	"strings"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/storage"
)

// statusErr converts an error from storage into the StatusError a client
// should see; errors that already carry a Status pass through. name is the
// object the request addressed, "" for lists.
func (s *Store) statusErr(err error, name string) error {
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
	gr := s.t.GroupResource()
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
		return api.NewTimeout(msg, 1)
	case storage.CodeInvalid:
		msg := "invalid request"
		if e.Err != nil {
			msg = e.Err.Error()
		}
		return api.NewBadRequest(msg)
	}
	return err
}

func compactedDetail(e *storage.Error) string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return fmt.Sprint(e.ResourceVersion)
}

// continueExpired is kube-apiserver's answer to a continue token whose
// revision has been compacted.
func continueExpired() error {
	return api.NewResourceExpired("The provided continue parameter is too old to display a consistent list result. " +
		"You can start a new list without the continue parameter, or use the continue token in this response to " +
		"retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - " +
		"objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.")
}
