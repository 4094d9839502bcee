package registry

import (
	"context"
	"fmt"
	"strings"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/storage"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// ApplyOptions qualify an Apply.
type ApplyOptions struct {
	// DryRun merges and validates without persisting.
	DryRun bool
	// FieldManager is the applier; kube-apiserver requires one.
	FieldManager string
	// Force takes ownership of fields other managers own instead of
	// failing with a conflict.
	Force bool
	// FieldValidation is FieldValidationStrict, FieldValidationWarn (also
	// for "") or FieldValidationIgnore: as in kube-apiserver it concerns
	// duplicate fields in the patch; a field the type does not declare
	// is always refused.
	FieldValidation string
	// Subresource is "" for the main resource or "status".
	Subresource string
}

// Apply merges a server-side apply patch (YAML or JSON of a partial
// object) into the named object on behalf of opts.FieldManager, as
// kube-apiserver does, creating the object when it does not exist (created
// then reports true). Fields other managers own with other values are a
// 409 conflict unless opts.Force; fields the manager applied before and
// leaves out now are removed when no other manager owns them; an apply
// that changes nothing writes nothing.
func (s *Store) Apply(ctx context.Context, ns, name string, patch []byte, opts ApplyOptions) (out *storage.Object, created bool, err error) {
	ns = s.namespaceOf(ns)
	if opts.Subresource != "" && !s.servesSubresource(opts.Subresource) {
		return nil, false, api.NewNotFound(s.t.GroupResource(), name)
	}
	fm, err := s.fieldManager()
	if err != nil {
		return nil, false, fmt.Errorf("registry: apply to %s: %w", s.t.GroupResource(), err)
	}
	patchObj, err := decodeApplyPatch(ctx, patch, opts.FieldValidation)
	if err != nil {
		return nil, false, err
	}
	merge := func(live *api.Object) (*api.Object, error) {
		merged, err := fm.Apply(live, runtime.DeepCopyJSON(patchObj), opts.FieldManager, opts.Subresource, opts.Force)
		if err != nil {
			return nil, err
		}
		if merged, err = s.defaultApplied(merged); err != nil {
			return nil, err
		}
		if err := s.checkTypeMeta(merged, sourceApplied); err != nil {
			return nil, err
		}
		if merged.Metadata.Name != name {
			return nil, api.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", merged.Metadata.Name, name))
		}
		if err := s.checkNamespace(merged, ns); err != nil {
			return nil, err
		}
		return merged, nil
	}
	uopts := UpdateOptions{DryRun: opts.DryRun, Subresource: opts.Subresource, FieldManager: opts.FieldManager, fieldsRecorded: true}
	for {
		out, err = s.update(ctx, ns, name, uopts, merge)
		if !api.IsNotFound(err) || opts.Subresource != "" {
			return out, false, err
		}
		// As kube-apiserver: applying to an object that does not exist
		// creates it, owned by the applier alone.
		obj, err := merge(nil)
		if err != nil {
			return nil, false, err
		}
		// kube's patch handler refuses a uid no object has, and its
		// store ignores a resourceVersion on an object it creates.
		if uid := obj.Metadata.UID; uid != "" {
			return nil, false, api.NewConflict(s.t.GroupResource(), name,
				fmt.Sprintf("uid mismatch: the provided object specified uid %s, and no existing object was found", uid))
		}
		obj.Metadata.ResourceVersion = ""
		out, err = s.create(ctx, ns, obj, CreateOptions{DryRun: opts.DryRun, FieldManager: opts.FieldManager, fieldsRecorded: true})
		if api.IsAlreadyExists(err) {
			continue // created meanwhile: apply to it
		}
		return out, err == nil, err
	}
}

// decodeApplyPatch decodes an apply patch, as kube-apiserver does with a
// YAML decoder (JSON is YAML), and reports duplicate fields as the
// fieldValidation directive asks.
func decodeApplyPatch(ctx context.Context, patch []byte, directive string) (map[string]any, error) {
	var obj map[string]any
	strictErr := error(nil)
	if directive != FieldValidationIgnore {
		// Most patches have no duplicate fields: one strict decode then
		// serves both the check and the patch.
		if strictErr = yaml.UnmarshalStrict(patch, &obj); strictErr != nil {
			obj = nil
		}
	}
	if obj == nil {
		if err := yaml.Unmarshal(patch, &obj); err != nil {
			return nil, api.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
		}
	}
	if obj == nil {
		return nil, api.NewBadRequest("error decoding patch: the patch is empty")
	}
	if strictErr != nil {
		if directive == FieldValidationStrict {
			return nil, api.NewBadRequest(fmt.Sprintf("error strict decoding patch: %v", strictErr))
		}
		api.AddWarning(ctx, strings.TrimSpace(strictErr.Error()))
	}
	return obj, nil
}

// defaultApplied applies a built-in kind's defaults to the result of an
// apply, as kube-apiserver's field manager does after merging (so the
// applier does not own what defaulting sets). Custom types are defaulted
// later, with the rest of their generic rules.
func (s *Store) defaultApplied(merged *api.Object) (*api.Object, error) {
	d, ok := s.t.Strategy.(Decoder)
	if !ok {
		return merged, nil
	}
	data, err := encode(merged)
	if err != nil {
		return nil, err
	}
	out, _, err := d.Decode(data)
	return out, err
}
