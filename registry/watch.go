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
	prefix, so, err := s.watchOptions(ns, opts)
	if err != nil {
		return nil, err
	}
	w, err := s.storage.Watch(ctx, prefix, so)
	return w, s.statusErr(err, "")
}

// RunWatch is Watch run on the caller's goroutine, each event handed to fn
// until fn returns false, ctx ends or the watch does (see
// storage.RunWatch): for consumers in the process with a goroutine of
// their own (the built-in controllers' informers), a goroutine fewer per
// watch where the storage can run it.
func (s *Store) RunWatch(ctx context.Context, ns string, opts WatchOptions, fn func(storage.Event) bool) error {
	prefix, so, err := s.watchOptions(ns, opts)
	if err != nil {
		return err
	}
	return s.statusErr(storage.RunWatch(ctx, s.storage, prefix, so, fn), "")
}

// watchOptions is what a watch of ns asks of the storage.
func (s *Store) watchOptions(ns string, opts WatchOptions) (string, storage.WatchOptions, error) {
	pred, err := s.predicate(opts.ListOptions)
	if err != nil {
		return "", storage.WatchOptions{}, err
	}
	return s.keys.NamespacePrefix(s.namespaceOf(ns)), storage.WatchOptions{
		ResourceVersion:   opts.ResourceVersion,
		Predicate:         pred,
		SendInitialEvents: opts.SendInitialEvents,
		AllowBookmarks:    opts.AllowBookmarks,
	}, nil
}
