package server

import (
	"net/http"
	"time"

	"github.com/miniapi/miniapi/endpoints"
)

// The limits of the HTTP server are kube-apiserver's secure serving's
// (k8s.io/apiserver/pkg/server/secure_serving.go), so a client can hold
// no more of it than of kube's: a connection idle between requests is
// closed after idleTimeout, request headers must arrive within
// readHeaderTimeout, and HTTP/2 connections get kube's stream and buffer
// sizes. A request body must arrive within the request timeout (see
// endpoints.Config.RequestTimeout).
const (
	// readHeaderTimeout is "just shy of" kube's 34 s upper bound on a
	// request's timeout.
	readHeaderTimeout = 32 * time.Second
	maxHeaderBytes    = 1 << 20
	// http2MaxStreams is kube's default of --http2-max-streams-per-connection.
	http2MaxStreams = 100
	// http2BufferPerStream is kube's "99th percentile of a resource's
	// size": the largest frame read and the upload buffer of a stream.
	http2BufferPerStream = 256 << 10
)

// idleTimeout matches http.DefaultTransport's keep-alive timeout, as in
// kube. It is a variable so tests can shorten it.
var idleTimeout = 90 * time.Second

// http2Config is kube-apiserver's HTTP/2 server configuration.
func http2Config() *http.HTTP2Config {
	return &http.HTTP2Config{
		MaxConcurrentStreams:          http2MaxStreams,
		MaxReadFrameSize:              http2BufferPerStream,
		MaxReceiveBufferPerStream:     http2BufferPerStream,
		MaxReceiveBufferPerConnection: http2BufferPerStream * http2MaxStreams,
	}
}

// DefaultRequestTimeout is kube-apiserver's default --request-timeout,
// what Config.RequestTimeout 0 means.
const DefaultRequestTimeout = endpoints.DefaultRequestTimeout
