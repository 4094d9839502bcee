package server

import (
	"context"
	"fmt"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/builtin"
	"github.com/miniapi/miniapi/registry"
)

// SystemNamespaces are the namespaces kube-apiserver creates at start and
// clients assume exist: kubectl writes to "default" when told no namespace.
var SystemNamespaces = []string{"default", "kube-system", "kube-public", "kube-node-lease"}

// ensureSystemNamespaces creates the system namespaces that are missing.
// Several replicas may race to create them; AlreadyExists is success.
func (s *Server) ensureSystemNamespaces(ctx context.Context) error {
	res, ok := s.reg.Snapshot().Lookup("", "v1", "namespaces")
	if !ok {
		return nil
	}
	for _, name := range SystemNamespaces {
		if _, err := res.Store.Get(ctx, "", name, ""); err == nil {
			continue
		} else if !api.IsNotFound(err) {
			return fmt.Errorf("server: look up namespace %s: %w", name, err)
		}
		ns := &api.Object{Metadata: api.ObjectMeta{Name: name}}
		_, err := res.Store.CreateObject(ctx, "", ns, registry.CreateOptions{})
		if err != nil && api.ReasonForError(err) != api.ReasonAlreadyExists {
			return fmt.Errorf("server: create namespace %s: %w", name, err)
		}
	}
	return nil
}

// bootstrapFieldManager is the manager kube-apiserver's own writes are
// recorded under (its loopback client's user agent).
const bootstrapFieldManager = "kube-apiserver"

// ensureSystemObjects creates the objects kube-apiserver creates at
// start (builtin.SystemObjects) that are missing; objects a user changed
// are left as they are, as kube's post-start hooks leave them.
func (s *Server) ensureSystemObjects(ctx context.Context) error {
	objs, err := builtin.SystemObjects()
	if err != nil {
		return err
	}
	snap := s.reg.Snapshot()
	for _, o := range objs {
		res, ok := snap.Lookup(o.Group, o.Version, o.Resource)
		if !ok {
			continue
		}
		if _, err := res.Store.Get(ctx, "", o.Name, ""); err == nil {
			continue
		} else if !api.IsNotFound(err) {
			return fmt.Errorf("server: look up %s %s: %w", o.Resource, o.Name, err)
		}
		_, err := res.Store.Create(ctx, "", o.Body, registry.CreateOptions{FieldManager: bootstrapFieldManager})
		if err != nil && api.ReasonForError(err) != api.ReasonAlreadyExists {
			return fmt.Errorf("server: create %s %s: %w", o.Resource, o.Name, err)
		}
	}
	return nil
}
