package handlers

import (
	"bufio"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/miniapi/miniapi/api"
)

// withWarnings gives the request a warnings collector and returns a
// writer that adds the collected warnings as Warning headers just before
// the response's headers go out, whichever layer added them.
func withWarnings(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, *http.Request) {
	ctx, warnings := api.WithWarnings(r.Context())
	return &warningWriter{ResponseWriter: w, warnings: warnings}, r.WithContext(ctx)
}

// warningWriter writes collected warnings as headers on the first write.
type warningWriter struct {
	http.ResponseWriter
	warnings *api.Warnings
	wrote    bool
}

func (w *warningWriter) WriteHeader(code int) {
	if !w.wrote {
		w.wrote = true
		for _, msg := range w.warnings.Messages() {
			w.Header().Add("Warning", warningHeader(msg))
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *warningWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Hijack hands the connection over (WebSocket upgrades): libraries
// type-assert http.Hijacker instead of using http.ResponseController.
func (w *warningWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.wrote = true
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// Flush sends buffered data, for code that type-asserts http.Flusher.
func (w *warningWriter) Flush() {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection.
func (w *warningWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// warningHeader formats one warning as RFC 7234 says and kube-apiserver
// sends: code 299, agent "-", the text quoted.
func warningHeader(msg string) string {
	msg = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, msg)
	return "299 - " + strconv.Quote(msg)
}
