package storage

import "context"

// RunWatch runs a watch of s on the caller's goroutine, handing each event
// to fn until fn returns false, ctx ends or the watch does: with s's own
// RunWatch when s is a WatchRunner, through its Watch channel otherwise.
// The error is Watch's, for a watch that cannot start.
func RunWatch(ctx context.Context, s Interface, prefix string, opts WatchOptions, fn func(Event) bool) error {
	if r, ok := s.(WatchRunner); ok {
		return r.RunWatch(ctx, prefix, opts, fn)
	}
	w, err := s.Watch(ctx, prefix, opts)
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok || !fn(ev) {
				return nil
			}
		case <-ctx.Done():
			return nil
		}
	}
}
