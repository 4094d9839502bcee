package registry

import (
	"encoding/json"
	"sync"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/fieldmanager"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// DefaultFieldManager names the manager of writes that come from inside
// the server (system namespaces, CRD status, resource files) and carry no
// field manager of their own: "kube-apiserver", the name kube-apiserver
// records for its own writes, so objects compare equal with a cluster's.
const DefaultFieldManager = "kube-apiserver"

// ControllerFieldManager names the manager of writes by the controllers
// miniapi runs in process (namespace lifecycle, garbage collection), as
// kube-controller-manager's are recorded.
const ControllerFieldManager = "kube-controller-manager"

// fieldManagerCache builds a field manager on first use: the built-in
// schemas take client-go ~80 ms to parse, which a server that never
// writes should not pay at start.
type fieldManagerCache struct {
	once sync.Once
	m    *fieldmanager.Manager
	err  error
}

// get returns the cached manager, building it with build the first time.
func (c *fieldManagerCache) get(s *Store, build func() (*fieldmanager.Manager, error)) (*fieldmanager.Manager, error) {
	c.once.Do(func() {
		if c.m, c.err = build(); c.err != nil {
			s.reg.cfg.Logger.Error("registry: managedFields are not tracked for this type", "type", s.t.GroupResource(), "err", c.err)
		}
	})
	return c.m, c.err
}

// fieldManager returns the Store's field manager, or the error that
// prevented building it (a schema structured-merge-diff cannot use).
func (s *Store) fieldManager() (*fieldmanager.Manager, error) {
	return s.managed.get(s, func() (*fieldmanager.Manager, error) {
		gvk := schema.GroupVersionKind{Group: s.t.Group, Version: s.t.Version, Kind: s.t.Kind}
		var tc fieldmanager.TypeConverter
		var err error
		ms, builtin := s.t.Strategy.(MergeSchema)
		if builtin {
			tc, err = ms.TypeConverter()
		} else {
			versions := s.t.VersionSchemas
			if versions == nil {
				versions = map[string]json.RawMessage{s.t.Version: s.t.Schema}
			}
			tc, err = fieldmanager.ForSchema(gvk.GroupKind(), versions)
		}
		if err != nil {
			return nil, err
		}
		cfg := fieldmanager.Config{
			Kind: gvk, TypeConverter: tc, HasStatus: hasStatus(s.t.Strategy), CustomResource: !builtin,
			Finalize: s.servesSubresource(SubresourceFinalize),
		}
		for _, sr := range Subresources(s.t) {
			if sr.Serve == ServeUpdate && sr.Name != SubresourceStatus && sr.Name != SubresourceFinalize && sr.Name != SubresourceScale {
				cfg.Subresources = append(cfg.Subresources, sr.Name)
			}
		}
		if r, ok := s.t.Strategy.(FieldResetter); ok {
			cfg.ResetFields = r.ResetFields
		}
		if c, ok := s.t.Strategy.(KindConverter); ok {
			cfg.Convert = c.ConvertKind
		}
		return fieldmanager.New(cfg)
	})
}

// scaleFieldManager returns the field manager of the type's Scales.
func (s *Store) scaleFieldManager() (*fieldmanager.Manager, error) {
	return s.scaleManaged.get(s, fieldmanager.NewScale)
}

// recordUpdate records in obj's managedFields the fields manager changes
// from old (nil for a create), as kube-apiserver does for every write that
// is not an apply. A type whose field manager could not be built keeps
// the managedFields it had.
func (s *Store) recordUpdate(old, obj *api.Object, manager, subresource string) (*api.Object, error) {
	fm, err := s.fieldManager()
	if err != nil {
		return obj, nil
	}
	if manager == "" {
		manager = DefaultFieldManager
	}
	return fm.Update(old, obj, manager, subresource)
}
