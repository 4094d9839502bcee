package endpoints

import (
	"bufio"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/miniapi/miniapi/api"
)

var jsonMarshal = json.Marshal

// statusRecorder remembers the status code, whether headers went out and
// how many body bytes were written.
// It implements Unwrap so http.ResponseController reaches the real
// writer's Flush and SetWriteDeadline.
type statusRecorder struct {
	http.ResponseWriter
	code        int
	wroteHeader bool
	written     int
}

func (s *statusRecorder) WriteHeader(code int) {
	if !s.wroteHeader {
		s.code, s.wroteHeader = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if !s.wroteHeader {
		s.code, s.wroteHeader = http.StatusOK, true
	}
	n, err := s.ResponseWriter.Write(b)
	s.written += n
	return n, err
}

// Hijack hands the connection over (WebSocket upgrades); some libraries
// type-assert http.Hijacker rather than use http.ResponseController.
func (s *statusRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	s.wroteHeader = true
	return http.NewResponseController(s.ResponseWriter).Hijack()
}

// Flush sends buffered data, for code that type-asserts http.Flusher.
func (s *statusRecorder) Flush() {
	http.NewResponseController(s.ResponseWriter).Flush()
}

// Unwrap returns the wrapped writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// recoverPanics turns a panic in a handler into a 500 Status and a log
// line with the stack, so one bad request never takes the server down.
func recoverPanics(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := &statusRecorder{ResponseWriter: w}
			defer func() {
				p := recover()
				if p == nil || p == http.ErrAbortHandler {
					if p != nil {
						panic(p)
					}
					return
				}
				log.Error("panic in handler", "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				if !rec.wroteHeader {
					writeStatus(rec, api.NewInternalError(fmt.Errorf("panic: %v", p)))
				}
			}()
			next.ServeHTTP(rec, r)
		})
	}
}

// logRequests writes one debug line per request.
func logRequests(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
			next.ServeHTTP(rec, r)
			log.Debug("request", "method", r.Method, "path", r.URL.Path, "query", r.URL.RawQuery,
				"code", rec.code, "duration", time.Since(start), "userAgent", r.UserAgent())
		})
	}
}
