package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"

	sigsjson "sigs.k8s.io/json"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/storage"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"

	// kube-apiserver's JSON and merge patch library (its patch handler
	// imports it): which patches apply, and which fail to decode rather
	// than to apply (400 against 422), are its rules.
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
)

// kube-apiserver's limits on JSON patches, which keep a small patch from
// growing an object without bound (CVE-2019-1002100): the operations one
// patch may hold (maxJSONPatchOperations in k8s.io/apiserver's patch
// handler; more is 413) and the bytes its copy operations may add in
// total (the default JSONPatchMaxCopyBytes of k8s.io/apiserver's server
// Config, as evanphx/json-patch's AccumulatedCopySizeLimit; more is 422).
const (
	MaxJSONPatchOperations = 10000
	JSONPatchMaxCopyBytes  = 3 << 20
)

// limitJSONPatchCopies sets the JSON patch library's copy limit, a
// process-wide variable, as k8s.io/apiserver's server Config does when
// it completes: lowered to JSONPatchMaxCopyBytes, never raised (another
// server of the process may have set a lower one).
func limitJSONPatchCopies() {
	for {
		cur := atomic.LoadInt64(&jsonpatch.AccumulatedCopySizeLimit)
		if cur > 0 && cur <= JSONPatchMaxCopyBytes {
			return
		}
		if atomic.CompareAndSwapInt64(&jsonpatch.AccumulatedCopySizeLimit, cur, JSONPatchMaxCopyBytes) {
			return
		}
	}
}

// Patch types, as the Content-Type of a PATCH names them.
const (
	PatchJSON           = "application/json-patch+json"
	PatchMerge          = "application/merge-patch+json"
	PatchStrategicMerge = "application/strategic-merge-patch+json"
	PatchApply          = "application/apply-patch+yaml"
)

// SupportsStrategicMerge reports whether strategic merge patches are
// accepted for this type: for the built-in kinds (StrategicMerger), as in
// kube-apiserver; custom types have no patch strategy and answer 415.
func (s *Store) SupportsStrategicMerge() bool {
	_, ok := s.t.Strategy.(StrategicMerger)
	return ok
}

// StrategicMerger is implemented by strategies of kinds that take
// strategic merge patches, merged by the patch strategies and keys of the
// kind's Go type as kube-apiserver merges them.
type StrategicMerger interface {
	// StrategicMerge applies patch to original (both JSON) and returns
	// the patched JSON; an error is the client's (a Status).
	StrategicMerge(original, patch []byte) ([]byte, error)
}

// Patch applies patch, of the given patch type, to the named object.
func (s *Store) Patch(ctx context.Context, ns, name, patchType string, patch []byte, opts UpdateOptions) (*storage.Object, error) {
	ns = s.namespaceOf(ns)
	apply, err := s.patcher(patchType, patch, opts.FieldValidation)
	if err != nil {
		return nil, err
	}
	decode := s.patchDecoder(patchType, patch, opts.FieldValidation)
	return s.update(ctx, ns, name, opts, func(cur *api.Object) (*api.Object, error) {
		curJSON, err := encode(cur)
		if err != nil {
			return nil, err
		}
		patched, err := apply(curJSON)
		if err != nil {
			return nil, err
		}
		obj, err := decode(ctx, patched)
		if err != nil {
			return nil, err
		}
		if err := s.checkTypeMeta(obj, sourcePatched); err != nil {
			return nil, err
		}
		if obj.Metadata.Name != name {
			return nil, api.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", obj.Metadata.Name, name))
		}
		if err := s.checkNamespace(obj, ns); err != nil {
			return nil, err
		}
		return obj, nil
	})
}

// patchDecoder returns how Patch decodes each patched object: through
// the kind's Decoder, its strict findings (and the patch's own duplicate
// fields) judged as kube-apiserver judges a patch's, or generically
// against the type's schema.
func (s *Store) patchDecoder(patchType string, patch []byte, directive string) func(ctx context.Context, patched []byte) (*api.Object, error) {
	d, kind := s.t.Strategy.(Decoder)
	if !kind {
		checkFields := s.patchFieldCheck(patchType, patch, directive)
		return func(ctx context.Context, patched []byte) (*api.Object, error) {
			value := string(patched)
			if pruned, err := checkFields(ctx, patched); err != nil {
				return nil, err
			} else if pruned != nil {
				patched = pruned
			}
			var obj api.Object
			if err := json.Unmarshal(patched, &obj); err != nil {
				return nil, api.NewBadRequest(fmt.Sprintf("the patched object is not valid: %v", err))
			}
			if err := s.missingTypeMeta(&obj, value); err != nil {
				return nil, err
			}
			return &obj, nil
		}
	}
	patchErrs := patchStrictErrors(patchType, patch, directive)
	return func(ctx context.Context, patched []byte) (*api.Object, error) {
		value := string(patched)
		if patchType == PatchStrategicMerge {
			value = patchMapString(patch)
		}
		obj, strict, err := d.Decode(patched)
		if err != nil {
			return nil, api.NewInvalid(api.GroupKind{}, "", field.ErrorList{field.Invalid(field.NewPath("patch"), value, decodeErrorMessage(err))})
		}
		if err := s.patchedTypeMeta(patchType, obj, value); err != nil {
			return nil, err
		}
		errs := append(append([]string(nil), patchErrs...), strict...)
		switch {
		case len(errs) == 0 || directive == FieldValidationIgnore:
		case directive == FieldValidationStrict:
			return nil, api.NewInvalid(api.GroupKind{}, "", field.ErrorList{field.Invalid(field.NewPath("patch"), value, strictDecodingError(errs))})
		default:
			warnAll(ctx, errs)
		}
		return obj, nil
	}
}

// patchedTypeMeta judges a built-in kind's patched apiVersion and kind as
// kube-apiserver's patch handler does: a strategic merge patch cannot
// change them (the patched map is read into the kind's Go type, which
// the kind's own are then written from); after a JSON or merge patch its
// decoder reads them, and what it cannot decode is 422 naming the
// patched object (value) with the decoder's words.
func (s *Store) patchedTypeMeta(patchType string, obj *api.Object, value string) error {
	if patchType == PatchStrategicMerge {
		obj.APIVersion, obj.Kind = s.t.APIVersion(), s.t.Kind
		return nil
	}
	j, ok := s.t.Strategy.(TypeMetaJudge)
	if !ok || !s.otherTypeMeta(obj) {
		return nil
	}
	if err := j.PatchedTypeMetaError(obj.APIVersion, obj.Kind); err != nil {
		return api.NewInvalid(api.GroupKind{}, "", field.ErrorList{field.Invalid(field.NewPath("patch"), value, err.Error())})
	}
	return nil
}

// missingTypeMeta refuses a patched object (value) without kind or
// apiVersion when the type's rules validate them (TypeMetaValidator),
// as kube-apiserver's decoder of custom resources (unstructured JSON)
// refuses it after a JSON patch: 422 naming the patched object. Another
// apiVersion or kind is for the rules to refuse.
func (s *Store) missingTypeMeta(obj *api.Object, value string) error {
	if _, ok := s.t.Strategy.(TypeMetaValidator); !ok || obj.Kind != "" && obj.APIVersion != "" {
		return nil
	}
	// kube's patch handler patched the object as a map and quotes it
	// encoded as one, keys sorted.
	var m map[string]any
	d := json.NewDecoder(strings.NewReader(value))
	d.UseNumber()
	if d.Decode(&m) == nil {
		if b, err := json.Marshal(m); err == nil {
			value = string(b)
		}
	}
	// kube-apiserver 1.37 answers a missing apiVersion 500 (its patch
	// handler passes that decoder error on unwrapped); it is the
	// client's mistake, answered as the missing kind is.
	err := runtime.NewMissingVersionErr("object has no apiVersion field")
	if obj.Kind == "" {
		err = runtime.NewMissingKindErr(value)
	}
	return api.NewInvalid(api.GroupKind{}, "", field.ErrorList{field.Invalid(field.NewPath("patch"), value, err.Error())})
}

// decodeErrorMessage is the message of a decode failure, without the
// Status wrapping a Decoder may have given it.
func decodeErrorMessage(err error) string {
	var se *api.StatusError
	if errors.As(err, &se) {
		return se.ErrStatus.Message
	}
	return err.Error()
}

// jsonPatchOp is one operation of a JSON patch as kube-apiserver's patch
// handler reads it to check the patch's fields (with fieldValidation
// Strict or Warn) before its JSON patch library decodes it.
type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	From  string `json:"from"`
	Value any    `json:"value"`
}

// applyJSONPatch applies p to doc, turning a panic of the library into an
// error: v4.13.0 dereferences nil on a replace of the whole document
// without a value (`[{"op":"replace","path":""}]`), which drops
// kube-apiserver 1.37.1's connection without an answer; miniapi answers
// it as any patch that cannot be applied.
func applyJSONPatch(p jsonpatch.Patch, doc []byte) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("the patch cannot be applied: %v", r)
		}
	}()
	return p.Apply(doc)
}

// patcher decodes a patch once and returns the function that applies it,
// refusing what kube-apiserver's patch handler refuses before applying:
// a body that is not JSON (400 "invalid JSON patch"), one whose shape its
// field check cannot read (400 "error decoding patch: ..."), a JSON patch
// its library cannot decode or of too many operations.
func (s *Store) patcher(patchType string, patch []byte, directive string) (func([]byte) ([]byte, error), error) {
	switch patchType {
	case PatchJSON, PatchMerge, PatchStrategicMerge:
		if !json.Valid(patch) {
			return nil, api.NewBadRequest("invalid JSON patch")
		}
	}
	checked := directive == FieldValidationStrict || directive == FieldValidationWarn
	switch patchType {
	case PatchJSON:
		if checked {
			var ops []jsonPatchOp
			if err := json.Unmarshal(patch, &ops); err != nil {
				return nil, api.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
			}
		}
		// An operation's op, path and value are only read when it is
		// applied: a bad one fails there, 422.
		p, err := jsonpatch.DecodePatch(patch)
		if err != nil {
			return nil, api.NewBadRequest(err.Error())
		}
		if len(p) > MaxJSONPatchOperations {
			return nil, api.FromKubeError(apierrors.NewRequestEntityTooLargeError(
				fmt.Sprintf("The allowed maximum operations in a JSON patch is %d, got %d", MaxJSONPatchOperations, len(p))))
		}
		limitJSONPatchCopies()
		return func(doc []byte) ([]byte, error) {
			out, err := applyJSONPatch(p, doc)
			if err != nil {
				// kube-apiserver answers every failure to apply a JSON
				// patch, the copy limit included, with this generic 422
				// (its server message is dropped for 422).
				return nil, api.FromKubeError(apierrors.NewGenericServerResponse(
					http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false))
			}
			return out, nil
		}, nil
	case PatchStrategicMerge:
		sm, ok := s.t.Strategy.(StrategicMerger)
		if !ok {
			return nil, api.NewUnsupportedMediaType([]string{PatchJSON, PatchMerge, PatchApply})
		}
		return func(doc []byte) ([]byte, error) { return sm.StrategicMerge(doc, patch) }, nil
	case PatchMerge:
		// Valid JSON that opens with "{" always decodes into a map: only
		// another shape is decoded, for the error kube's check gives it.
		if trimmed := bytes.TrimLeft(patch, " \t\r\n"); checked && (len(trimmed) == 0 || trimmed[0] != '{') {
			var m map[string]any
			if err := json.Unmarshal(patch, &m); err != nil {
				return nil, api.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
			}
		}
		return func(doc []byte) ([]byte, error) {
			out, err := jsonpatch.MergePatch(doc, patch)
			if err != nil {
				// The library's ErrBadJSONPatch (a patch that is null or
				// not an object or array), as kube-apiserver answers it;
				// the document is the server's own and well-formed.
				return nil, api.NewBadRequest(err.Error())
			}
			return out, nil
		}, nil
	case PatchApply:
		return nil, fmt.Errorf("registry: apply patches go through Store.Apply")
	default:
		return nil, api.NewUnsupportedMediaType([]string{PatchJSON, PatchMerge, PatchStrategicMerge, PatchApply})
	}
}

// StrategicMergeTyped applies a strategic merge patch to original (both
// JSON) with the patch strategies and merge keys of dataStruct, a Go
// value of the kind's type, as kube-apiserver's patch handler does: 400
// for a malformed patch, 422 for one that does not fit the object.
func StrategicMergeTyped(original, patch []byte, dataStruct any) ([]byte, error) {
	var orig, p map[string]any
	if err := json.Unmarshal(original, &orig); err != nil {
		return nil, err
	}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(patch, &p); err != nil {
		return nil, api.NewBadRequest(err.Error())
	}
	out, err := strategicpatch.StrategicMergeMapPatch(orig, p, dataStruct)
	if err != nil {
		return nil, strategicMergeError(err)
	}
	return json.Marshal(out)
}

// strategicMergeError words a strategic merge failure as kube-apiserver
// does: 400 for a malformed patch, 422 for one that does not fit the
// object. Where kube-apiserver answers any other failure 500 ("unknown
// patch type" for a bad $patch directive, a value of the wrong type for
// the kind's Go type), miniapi answers 400: the original object and the
// kind are the server's and well-formed, so it is the patch at fault.
func strategicMergeError(err error) error {
	switch {
	case errors.Is(err, mergepatch.ErrBadJSONDoc), errors.Is(err, mergepatch.ErrBadPatchFormatForPrimitiveList),
		errors.Is(err, mergepatch.ErrBadPatchFormatForRetainKeys), errors.Is(err, mergepatch.ErrBadPatchFormatForSetElementOrderList),
		errors.Is(err, mergepatch.ErrUnsupportedStrategicMergePatchFormat):
		return api.NewBadRequest(err.Error())
	case errors.Is(err, mergepatch.ErrNoListOfLists), errors.Is(err, mergepatch.ErrPatchContentNotMatchRetainKeys):
		return &api.StatusError{ErrStatus: api.Status{Status: api.StatusFailure, Code: http.StatusUnprocessableEntity, Reason: api.ReasonInvalid, Message: err.Error()}}
	}
	return api.NewBadRequest(err.Error())
}
