package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/storage"
)

// Patch types, as the Content-Type of a PATCH names them.
const (
	PatchJSON           = "application/json-patch+json"
	PatchMerge          = "application/merge-patch+json"
	PatchStrategicMerge = "application/strategic-merge-patch+json"
	PatchApply          = "application/apply-patch+yaml"
)

// SupportsStrategicMerge reports whether strategic merge patches are
// accepted for this type. For the built-in types miniapi serves they are
// applied with merge-patch semantics, which is what a strategic merge
// patch means for types without merge keys in their lists; types from
// resource files have no patch strategy, as custom resources in
// Kubernetes, and answer 415.
func (s *Store) SupportsStrategicMerge() bool {
	_, ok := s.t.Strategy.(builtinStrategy)
	return ok
}

// builtinStrategy marks the strategies of types compiled into miniapi.
type builtinStrategy interface {
	isBuiltin()
}

// Patch applies patch, of the given patch type, to the named object.
func (s *Store) Patch(ctx context.Context, ns, name, patchType string, patch []byte, opts UpdateOptions) (*storage.Object, error) {
	ns = s.namespaceOf(ns)
	apply, err := s.patcher(patchType, patch)
	if err != nil {
		return nil, err
	}
	checkFields := s.patchFieldCheck(patchType, patch, opts.FieldValidation)
	return s.update(ctx, ns, name, opts, func(cur *api.Object) (*api.Object, error) {
		curJSON, err := encode(cur)
		if err != nil {
			return nil, err
		}
		patched, err := apply(curJSON)
		if err != nil {
			return nil, err
		}
		if pruned, err := checkFields(ctx, patched); err != nil {
			return nil, err
		} else if pruned != nil {
			patched = pruned
		}
		var obj api.Object
		if err := json.Unmarshal(patched, &obj); err != nil {
			return nil, api.NewBadRequest(fmt.Sprintf("the patched object is not valid: %v", err))
		}
		if err := s.checkTypeMeta(&obj); err != nil {
			return nil, err
		}
		if obj.Metadata.Name != name {
			return nil, api.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", obj.Metadata.Name, name))
		}
		if err := s.checkNamespace(&obj, ns); err != nil {
			return nil, err
		}
		return &obj, nil
	})
}

// patcher decodes a patch once and returns the function that applies it.
func (s *Store) patcher(patchType string, patch []byte) (func([]byte) ([]byte, error), error) {
	switch patchType {
	case PatchJSON:
		p, err := jsonpatch.DecodePatch(patch)
		if err != nil {
			return nil, api.NewBadRequest(fmt.Sprintf("invalid JSON patch: %v", err))
		}
		return func(doc []byte) ([]byte, error) {
			out, err := p.Apply(doc)
			if err != nil {
				return nil, unprocessable(fmt.Sprintf("the JSON patch could not be applied: %v", err))
			}
			return out, nil
		}, nil
	case PatchStrategicMerge:
		if !s.SupportsStrategicMerge() {
			return nil, api.NewUnsupportedMediaType(patchType, []string{PatchJSON, PatchMerge, PatchApply})
		}
		fallthrough
	case PatchMerge:
		if !json.Valid(patch) {
			return nil, api.NewBadRequest("invalid merge patch: the body is not valid JSON")
		}
		var probe any
		if err := json.Unmarshal(patch, &probe); err != nil {
			return nil, api.NewBadRequest(fmt.Sprintf("invalid merge patch: %v", err))
		}
		if _, ok := probe.(map[string]any); !ok {
			return nil, api.NewBadRequest("invalid merge patch: the patch must be a JSON object")
		}
		return func(doc []byte) ([]byte, error) {
			out, err := jsonpatch.MergePatch(doc, patch)
			if err != nil {
				return nil, api.NewBadRequest(fmt.Sprintf("the merge patch could not be applied: %v", err))
			}
			return out, nil
		}, nil
	case PatchApply:
		return nil, fmt.Errorf("registry: apply patches go through Store.Apply")
	default:
		return nil, api.NewUnsupportedMediaType(patchType, []string{PatchJSON, PatchMerge, PatchStrategicMerge, PatchApply})
	}
}

// unprocessable is the 422 kube-apiserver answers when a well-formed
// patch cannot be applied to the object.
func unprocessable(msg string) error {
	return &api.StatusError{ErrStatus: api.Status{
		Status: api.StatusFailure, Code: http.StatusUnprocessableEntity, Reason: api.ReasonInvalid, Message: msg,
	}}
}
