package registry

import (
	"context"

	"github.com/miniapi/miniapi/storage"
)

// WatchOptions qualify a Watch.
type WatchOptions struct {
	ListOptions
	SendInitialEvents *bool
	AllowBookmarks    bool
}

// Watch streams the changes to objects in ns ("" for all namespaces)
// matching the selectors. The caller must Stop the watcher.
func (s *Store) Watch(ctx context.Context, ns string, opts WatchOptions) (storage.Watcher, error) {
	pred, err := s.predicate(opts.ListOptions)
	if err != nil {
		return nil, err
	}
	w, err := s.storage.Watch(ctx, s.keys.NamespacePrefix(s.namespaceOf(ns)), storage.WatchOptions{
		ResourceVersion:   opts.ResourceVersion,
		Predicate:         pred,
		SendInitialEvents: opts.SendInitialEvents,
		AllowBookmarks:    opts.AllowBookmarks,
	})
	return w, s.statusErr(err, "")
}
