package handlers

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/miniapi/miniapi/storage"
	"golang.org/x/net/websocket"
)

// isWebSocket reports whether r asks to upgrade to a WebSocket.
func isWebSocket(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket") &&
		strings.Contains(strings.ToLower(r.Header.Get("Connection")), "upgrade")
}

// wsSink sends each event as one message, as kube-apiserver does: a text
// message for JSON, a binary one (with no length prefix: the message has
// its own length) for protobuf.
type wsSink struct {
	ws     *websocket.Conn
	frames *frameEncoder
}

func (s *wsSink) write(ev storage.Event) error {
	frame, err := s.frames.encode(ev)
	if err != nil {
		return err
	}
	if s.frames.proto != nil {
		err = websocket.Message.Send(s.ws, frame)
	} else {
		err = websocket.Message.Send(s.ws, string(frame))
	}
	if err == nil {
		s.frames.sent(len(frame))
	}
	return err
}

// flush is a no-op: every message is sent whole.
func (s *wsSink) flush() error { return nil }

// reset closes the socket; x/net/websocket sends a close frame first.
func (s *wsSink) reset() { s.ws.Close() }

// serveWebSocketWatch upgrades the connection and streams events as
// messages until the watch ends or the client closes the socket.
//
// The upgrade is x/net/websocket's Handler, as kube-apiserver's watch
// uses it: its handshake refuses (403) a request without an Origin, or
// whose Origin is not a URL ("null", sent by sandboxed and file://
// pages), and accepts any other origin, as kube does.
func serveWebSocketWatch(ctx context.Context, w http.ResponseWriter, r *http.Request, watcher storage.Watcher, frames *frameEncoder, shutdown <-chan struct{}) {
	websocket.Handler(func(ws *websocket.Conn) {
		defer ws.Close()
		ctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		// The client sends nothing; reading tells us when it closes.
		wg.Go(func() {
			defer cancel()
			io.Copy(io.Discard, ws)
		})
		pump(ctx, watcher, &wsSink{ws: ws, frames: frames}, shutdown)
		ws.Close() // ends the reader
		wg.Wait()
		cancel()
	}).ServeHTTP(w, r)
}
