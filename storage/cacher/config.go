package cacher

import (
	"errors"
	"log/slog"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapi/miniapi/storage"
)

// Defaults for the zero values of Config's fields.
const (
	// DefaultBookmarkInterval is how often a watch that allows bookmarks
	// gets one, as kube-apiserver (about once a minute).
	DefaultBookmarkInterval = time.Minute
	// DefaultDispatchBudget is how long the dispatcher may wait, in total,
	// for watchers whose buffers are full (kube-apiserver's 100 ms).
	DefaultDispatchBudget = 100 * time.Millisecond
	// DefaultWatcherBuffer is the number of events a watcher may have
	// queued before the dispatcher has to wait for it.
	DefaultWatcherBuffer = 100
	// DefaultFreshnessTimeout bounds how long a read or watch waits for the
	// cache to reach a resourceVersion (kube-apiserver's 3 s).
	DefaultFreshnessTimeout = 3 * time.Second

	// minHistory and maxHistory bound the history when HistorySize is 0;
	// eventFreshDuration is how much history the dynamic size aims to keep.
	// The numbers are kube-apiserver's.
	minHistory         = 100
	maxHistory         = 100 * 1024
	eventFreshDuration = 75 * time.Second

	// bookmarkBeforeDeadline is how long before a watch context's deadline
	// the watcher sends its last bookmark, so a client that times out
	// re-watches from a recent revision.
	bookmarkBeforeDeadline = 2 * time.Second
	// bookmarkTick is the shortest time between two offers of bookmarks
	// by one dispatcher: it bounds how late a bookmark can be, so it is
	// short next to bookmarkBeforeDeadline.
	bookmarkTick = 250 * time.Millisecond
	// pokeInterval is how often a read or watch waiting for a revision
	// asks the underlying storage for progress again (kube-apiserver asks
	// every 100 ms while anyone waits).
	pokeInterval = 250 * time.Millisecond
)

// Config configures a Cacher. Only Prefix is required.
type Config struct {
	// Resource is the group and resource of the type the cacher serves:
	// the labels of its watch cache metrics and object counts. Empty
	// records no metrics.
	Resource schema.GroupResource

	// Prefix is the key prefix of the one resource type the cacher serves,
	// as storage.ResourceKeys.Prefix returns it; it ends in "/". The
	// reflector lists and watches exactly this prefix; reads outside it
	// go to the underlying storage.
	Prefix string

	// Attrs computes an object's labels and selectable fields. It is called
	// once per object when the object enters the cache, never per watcher
	// or per list; it must be the AttrFunc the registry puts in the
	// predicates it passes (a Predicate's own Attrs is not consulted). Nil
	// means storage.DefaultAttrs.
	Attrs storage.AttrFunc

	// HistorySize is the capacity of the ring of recent events that watches
	// from a resourceVersion are served from (the server's
	// --watch-cache-size). Zero means dynamic: the ring starts small and
	// doubles whenever it is full and its oldest event is younger than 75
	// seconds, up to 102,400 events, as kube-apiserver sizes its history.
	HistorySize int

	// BookmarkInterval is how often a watch that allows bookmarks receives
	// one when it has nothing else to say. Zero means
	// DefaultBookmarkInterval.
	BookmarkInterval time.Duration

	// DispatchBudget is the total time the dispatcher may block on watchers
	// whose buffers are full; it refills at DispatchBudget per second. A
	// watcher still full when the budget is spent is terminated: its
	// channel closes without an error and the client re-watches from the
	// last resourceVersion it saw. Zero means DefaultDispatchBudget.
	DispatchBudget time.Duration

	// WatcherBuffer is the number of events queued per watcher. Zero means
	// DefaultWatcherBuffer.
	WatcherBuffer int

	// FreshnessTimeout bounds how long a Get, List or Watch waits for the
	// cache to reach the resourceVersion it asks for (or, for consistent
	// reads, etcd's current revision). Zero means DefaultFreshnessTimeout.
	FreshnessTimeout time.Duration

	// Logger receives the cacher's logs; nil means slog.Default(). Watcher
	// terminations are logged at debug level.
	Logger *slog.Logger

	// Clock is the time source, replaceable in tests; nil means real time.
	Clock Clock
}

// Clock is the time the cacher sees.
type Clock interface {
	Now() time.Time
	// After behaves like time.After.
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// withDefaults validates cfg and fills its zero fields.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.Prefix == "" || !strings.HasSuffix(cfg.Prefix, "/") {
		return cfg, errors.New(`cacher: Config.Prefix must be a key prefix ending in "/"`)
	}
	if cfg.HistorySize < 0 || cfg.WatcherBuffer < 0 || cfg.BookmarkInterval < 0 ||
		cfg.DispatchBudget < 0 || cfg.FreshnessTimeout < 0 {
		return cfg, errors.New("cacher: Config sizes and durations must not be negative")
	}
	if cfg.Attrs == nil {
		cfg.Attrs = storage.DefaultAttrs
	}
	if cfg.BookmarkInterval == 0 {
		cfg.BookmarkInterval = DefaultBookmarkInterval
	}
	if cfg.DispatchBudget == 0 {
		cfg.DispatchBudget = DefaultDispatchBudget
	}
	if cfg.WatcherBuffer == 0 {
		cfg.WatcherBuffer = DefaultWatcherBuffer
	}
	if cfg.FreshnessTimeout == 0 {
		cfg.FreshnessTimeout = DefaultFreshnessTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Clock == nil {
		cfg.Clock = realClock{}
	}
	return cfg, nil
}
