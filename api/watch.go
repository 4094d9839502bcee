package api

import "encoding/json"

// Watch event types, as they appear in a WatchEvent's type field.
const (
	EventAdded    = "ADDED"
	EventModified = "MODIFIED"
	EventDeleted  = "DELETED"
	EventBookmark = "BOOKMARK"
	EventError    = "ERROR"
)

// InitialEventsEndAnnotation marks the bookmark that ends a watch's initial
// events when the client asked for sendInitialEvents.
const InitialEventsEndAnnotation = "k8s.io/initial-events-end"

// WatchEvent is one frame of a watch stream.
type WatchEvent struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}
