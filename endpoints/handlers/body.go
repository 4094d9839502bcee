package handlers

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/miniapi/miniapi/api"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// readBody reads a request body of at most limit bytes; a larger one is
// refused with 413 before it is read in full.
//
// The body must arrive before the request's deadline (its ?timeout=, or
// the server's request timeout): the connection's read deadline is set to
// it while the body is read, so a client trickling a body in cannot hold
// the request, its goroutine and its buffer beyond that. It is answered
// with the 504 kube-apiserver's timeout filter gives at the deadline
// (kube does so over HTTP/2; over HTTP/1.1 it waits for the body), and
// the connection is not reused. Once the body is in, the read deadline is
// cleared again: net/http's check for a client closing the connection
// reads on, and must not time out while the handler works.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, api.NewRequestEntityTooLarge(limit)
	}
	rc := http.NewResponseController(w)
	deadline, bounded := r.Context().Deadline()
	if bounded {
		// Writers that cannot (an httptest recorder) leave the body
		// unbounded in time.
		bounded = rc.SetReadDeadline(deadline) == nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return nil, api.FromKubeError(apierrors.NewTimeoutError("request did not complete within the allotted timeout", 0))
	}
	if err != nil {
		return nil, api.NewBadRequest(fmt.Sprintf("reading the request body failed: %v", err))
	}
	if int64(len(b)) > limit {
		return nil, api.NewRequestEntityTooLarge(limit)
	}
	if bounded {
		rc.SetReadDeadline(time.Time{})
	}
	return b, nil
}
