package handlers

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/miniapi/miniapi/api"
)

// statusCarrier is any error that knows its Status.
type statusCarrier interface {
	Status() api.Status
}

// writeError answers err as a Status, in JSON, YAML or protobuf as the
// client accepts. Errors that carry one are the client's concern; anything
// else is a server bug, logged and answered 500.
//
// A request whose context has ended failed because of that, whatever err
// says: the client went away (context.Canceled) or its ?timeout= or the
// request timeout ran out (DeadlineExceeded). It is answered with the 504
// kube-apiserver's FinishRequest gives (unless err is a Timeout already),
// and logged at debug only, so a client that cancels many requests cannot
// fill the log.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	if ctxErr := r.Context().Err(); ctxErr != nil {
		log.Debug("request ended before it completed", "method", r.Method, "path", r.URL.Path, "cause", ctxErr, "err", err)
		if api.ReasonForError(err) != api.ReasonTimeout {
			// kube's finisher builds it with apierrors.NewTimeoutError,
			// whose message starts "Timeout: ".
			err = api.NewTimeout("request did not complete within requested timeout - "+ctxErr.Error(), 0)
		}
	}
	var sc statusCarrier
	if !errors.As(err, &sc) {
		log.Error("internal error", "method", r.Method, "path", r.URL.Path, "err", err)
		sc = api.NewInternalError(err)
	}
	st := sc.Status()
	auditStatus(r, st)
	code := int(st.Code)
	if code == 0 {
		code = http.StatusInternalServerError
	}
	if st.Details != nil && st.Details.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(st.Details.RetryAfterSeconds)))
	}
	writeStatus(w, r, code, st)
}

// writeStatus writes st with code in the form the request accepts.
func writeStatus(w http.ResponseWriter, r *http.Request, code int, st api.Status) {
	out := negotiateStatus(r)
	if out.mediaType == mediaProtobuf {
		// Typed clients that asked for protobuf first decode errors as
		// protobuf Status, as kube-apiserver sends them.
		if data, err := protoCodecs().status(st); err == nil {
			writeProtobuf(w, code, data)
			return
		}
		out.mediaType = mediaJSON
	}
	writeValue(w, out, code, st)
}

// WriteStatus writes the Status of err in the form the request accepts,
// as the resource handlers write errors.
func WriteStatus(w http.ResponseWriter, r *http.Request, err error) {
	var sc statusCarrier
	if !errors.As(err, &sc) {
		sc = api.NewInternalError(err)
	}
	st := sc.Status()
	writeStatus(w, r, int(st.Code), st)
}
