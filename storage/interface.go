package storage

import (
	"context"
)

// Object is one stored object: its key, the etcd revision of its last
// write, and its encoded JSON with metadata.resourceVersion set to that
// revision. Data is shared and must not be modified.
type Object struct {
	Key      string
	Revision int64
	Data     []byte
}

// Interface is what the registry needs from storage. Implementations are
// safe for concurrent use.
type Interface interface {
	// Get returns the object at key. opts.ResourceVersion "" reads the
	// latest state; "0" accepts any state the backend holds; N requires a
	// state at least as new as N.
	Get(ctx context.Context, key string, opts GetOptions) (*Object, error)

	// List returns the objects under prefix (which ends in "/") that match
	// opts.Predicate, one page at a time when opts.Limit > 0.
	List(ctx context.Context, prefix string, opts ListOptions) (*List, error)

	// Create stores data at key if nothing is there and returns the stored
	// object; an existing object yields an Exists error.
	Create(ctx context.Context, key string, data []byte) (*Object, error)

	// GuaranteedUpdate reads the object at key, calls tryUpdate with it and
	// writes what it returns if the object has not changed meanwhile,
	// retrying with the newer object otherwise. If tryUpdate returns the
	// current Data unchanged (bytes.Equal), nothing is written and the
	// current object is returned. A missing object yields NotFound unless
	// opts.IgnoreNotFound, in which case tryUpdate sees nil.
	GuaranteedUpdate(ctx context.Context, key string, opts UpdateOptions, tryUpdate UpdateFunc) (*Object, error)

	// Delete removes the object at key if opts.Preconditions hold and
	// opts.Validate (if set) accepts it, and returns its last state with
	// Revision set to the deletion's revision.
	Delete(ctx context.Context, key string, opts DeleteOptions) (*Object, error)

	// Watch streams the changes under prefix (a key ending in "/", or one
	// object's key) after opts.ResourceVersion. The caller must call Stop.
	Watch(ctx context.Context, prefix string, opts WatchOptions) (Watcher, error)
}

// RevisionReader is implemented by backends that can tell etcd's current
// revision, the resourceVersion a consistent read must reach.
type RevisionReader interface {
	CurrentRevision(ctx context.Context) (int64, error)
}

// UpdateFunc computes the next state of an object from its current one. It
// may be called more than once; returning an error aborts the update with
// that error.
type UpdateFunc func(current *Object) (next []byte, err error)

// GetOptions qualify a Get.
type GetOptions struct {
	// ResourceVersion as the client sent it: "", "0" or a revision.
	ResourceVersion string
}

// Resource version match values for lists, as Kubernetes defines them.
const (
	MatchNotOlderThan = "NotOlderThan"
	MatchExact        = "Exact"
)

// ListOptions qualify a List.
type ListOptions struct {
	// ResourceVersion as the client sent it: "", "0" or a revision.
	ResourceVersion string
	// ResourceVersionMatch is "", MatchNotOlderThan or MatchExact.
	ResourceVersionMatch string
	// Predicate selects the objects returned.
	Predicate Predicate
	// Limit caps the page size; 0 means everything.
	Limit int64
	// Continue is the token from a previous page.
	Continue string
}

// List is one page of a list.
type List struct {
	Items []*Object
	// Revision is the etcd revision the list reflects.
	Revision int64
	// Continue is the token for the next page, empty on the last page.
	Continue string
	// RemainingItemCount is how many objects follow this page, when known
	// (it is not known when a selector filtered the list).
	RemainingItemCount *int64
}

// UpdateOptions qualify a GuaranteedUpdate.
type UpdateOptions struct {
	// IgnoreNotFound passes a nil current object to tryUpdate instead of
	// failing when the key is missing, making the update a create.
	IgnoreNotFound bool
	// Preconditions are checked against every current object tried.
	Preconditions *Preconditions
}

// DeleteOptions qualify a Delete.
type DeleteOptions struct {
	Preconditions *Preconditions
	// Validate, if set, is called with the current object before deleting;
	// an error aborts the delete with that error.
	Validate func(current *Object) error
}

// Preconditions are checked against the current object before a write.
type Preconditions struct {
	UID             *string
	ResourceVersion *string
}

// WatchOptions qualify a Watch.
type WatchOptions struct {
	// ResourceVersion as the client sent it. "" and "0" start with ADDED
	// events for the current objects (for "" a consistent snapshot); N
	// streams exactly the changes after revision N.
	ResourceVersion string
	// Predicate selects the events delivered. An object that starts
	// matching arrives as Added, one that stops matching as Deleted.
	Predicate Predicate
	// SendInitialEvents, when set, overrides whether the watch starts with
	// the current objects (see SendsInitialEvents); with AllowBookmarks,
	// a Bookmark carrying InitialEventsEnd follows them
	// (SendsInitialEventsEnd).
	SendInitialEvents *bool
	// AllowBookmarks asks for periodic Bookmark events.
	AllowBookmarks bool
	// ProgressNotify asks the backend to report its progress as Bookmark
	// events even when nothing under prefix changes (used by the cacher).
	ProgressNotify bool
}

// EventType says what happened to an object.
type EventType string

// Event types. Bookmark carries only a revision; ErrorEvent carries Err and is
// the last event before the channel closes.
const (
	Added      EventType = "ADDED"
	Modified   EventType = "MODIFIED"
	Deleted    EventType = "DELETED"
	Bookmark   EventType = "BOOKMARK"
	ErrorEvent EventType = "ERROR"
)

// Event is one change seen by a watch.
type Event struct {
	Type EventType
	// Object is the new state; for Deleted, the last state with Revision
	// (and resourceVersion) of the deletion; for Bookmark, only Revision.
	Object *Object
	// PrevObject is the state before the change, when known.
	PrevObject *Object
	// InitialEventsEnd marks the Bookmark that ends the initial events.
	InitialEventsEnd bool
	// MoreAtRevision says the next event has the same revision and
	// follows at once: one transaction changed several objects. A
	// consumer that keeps state (the cacher) applies such a run as one
	// change, so that no reader sees half a revision.
	MoreAtRevision bool
	// Err is set on ErrorEvent events; it is usually a *Error (Compacted → 410).
	Err error
}

// Watcher is a running watch. The producer sends events on ResultChan and
// closes it exactly once, after its last send; a failure after the watch
// started arrives as one ErrorEvent followed by the close. The consumer
// must call Stop, which is idempotent, safe at any time, and makes the
// producer close the channel soon after.
type Watcher interface {
	ResultChan() <-chan Event
	Stop()
}

// FlushReporter is a Watcher that can be told how far its consumer has
// written events out (to a client's connection), so that Deliverer can
// tell what a client has been sent. A consumer that reports calls
// ConsumerFlushes before it reads the first event, then Flushed after
// each write that reached the client.
type FlushReporter interface {
	ConsumerFlushes()
	Flushed(rev int64)
}

// Deliverer is implemented by backends that know what their open watches
// have been sent: Delivered reports whether every open watch has been
// handed every event up to rev that it asked for (written out, where its
// consumer reports flushes).
type Deliverer interface {
	Delivered(rev int64) bool
}

// ProgressRequester is implemented by backends whose watches can be asked
// to report progress now: every open watch started with ProgressNotify
// soon delivers a Bookmark carrying the backend's current revision. The
// cacher uses it to learn that it has caught up before serving a
// consistent read from memory.
type ProgressRequester interface {
	RequestProgress(ctx context.Context) error
}

// WatchRunner is implemented by backends whose watch can run on its
// consumer's goroutine: RunWatch watches as Watch does but calls fn with
// each event, in order, instead of sending it on a channel, and returns
// when fn returns false, when ctx ends, or after the watch's last event
// (a final ErrorEvent is passed to fn first). The error is Watch's, for a
// watch that cannot start. A consumer with a goroutine of its own (the
// cacher's reflector) so saves the backend's goroutine and a channel
// hand-off per event.
type WatchRunner interface {
	RunWatch(ctx context.Context, prefix string, opts WatchOptions, fn func(Event) bool) error
}
