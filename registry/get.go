package registry

import (
	"context"

	"github.com/miniapi/miniapi/storage"
)

// Get returns the named object. resourceVersion follows kube-apiserver: ""
// reads the latest state, "0" any cached state, N a state at least as new.
func (s *Store) Get(ctx context.Context, ns, name, resourceVersion string) (*storage.Object, error) {
	ns = s.namespaceOf(ns)
	out, err := s.storage.Get(ctx, s.keys.Key(ns, name), storage.GetOptions{ResourceVersion: resourceVersion})
	return out, s.statusErr(err, name)
}
