package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/fieldmanager"
	"github.com/miniapi/miniapi/storage"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// SubresourceScale is the scale subresource of types with a Type.Scale.
const SubresourceScale = "scale"

// The apiVersion and kind of the object /scale answers.
const (
	ScaleAPIVersion = "autoscaling/v1"
	ScaleKind       = "Scale"
)

// Scale is an autoscaling/v1 Scale: the desired and observed replica
// counts of an object whose type has a scale subresource, with the
// object's identity in its metadata. Its JSON is autoscaling/v1's.
type Scale struct {
	APIVersion string         `json:"apiVersion,omitempty"`
	Kind       string         `json:"kind,omitempty"`
	Metadata   api.ObjectMeta `json:"metadata"`
	Spec       ScaleSpec      `json:"spec"`
	Status     ScaleStatus    `json:"status"`
}

// ScaleSpec is the desired replica count.
type ScaleSpec struct {
	Replicas int32 `json:"replicas,omitempty"`
}

// ScaleStatus is the observed replica count and the label selector, in
// its string form, of the pods (or other objects) counted.
type ScaleStatus struct {
	Replicas int32  `json:"replicas"`
	Selector string `json:"selector,omitempty"`
}

// scaleFieldSchema is the fields a Scale has, for fieldValidation.
var scaleFieldSchema = schemaOfGoType(reflect.TypeFor[Scale]())

// ScaleRules is implemented by strategies of built-in kinds with a scale
// subresource, whose Scale kube-apiserver computes and validates with
// code of its own rather than by paths.
type ScaleRules interface {
	// ScaleSelector returns the label selector, in its string form, of
	// the objects obj's replicas count.
	ScaleSelector(obj *api.Object) (string, error)
	// ValidateScale validates a Scale written to the object named in
	// its metadata (422 Invalid, as kube-apiserver words it).
	ValidateScale(sc *Scale) error
	// CheckScale refuses a Scale sent by a client (JSON) that
	// kube-apiserver's decoder would not read as an autoscaling/v1
	// Scale: another kind or version, or not an object, in its words.
	CheckScale(body []byte) error
	// PatchedScaleError is kube-apiserver's decoder's error for a
	// patched Scale (JSON) it would not read as an autoscaling/v1 Scale
	// (a patch that changed its kind or apiVersion), or nil.
	PatchedScaleError(patched []byte) error
}

// CheckScaleBody refuses a Scale sent by a client for the type that
// kube-apiserver would not decode, before its fields are checked: a
// built-in kind's in the words of kube's decoder. A custom resource's
// is left to DecodeScale and the type checks after it (kube answers
// every such body of a custom resource with one unhelpful message, "no
// kind is registered for the type v1.Scale").
func (s *Store) CheckScaleBody(body []byte) error {
	if sr, ok := s.t.Strategy.(ScaleRules); ok {
		return sr.CheckScale(body)
	}
	return nil
}

// HasScale reports whether t has a /scale subresource.
func HasScale(t *Type) bool { return t.Scale != nil }

// GetScale returns the Scale of the named object, read from the paths of
// the type's scale subresource as kube-apiserver reads a custom
// resource's: a missing status replicas or selector is 0 or "", but a
// missing spec replicas is an internal error, and so is a value of the
// wrong type. resourceVersion is as for Get.
func (s *Store) GetScale(ctx context.Context, ns, name, resourceVersion string) (*Scale, error) {
	if s.t.Scale == nil {
		return nil, api.NewNotFound(s.t.GroupResource(), name)
	}
	out, err := s.Get(ctx, ns, name, resourceVersion)
	if err != nil {
		return nil, err
	}
	obj, err := decodeWithRV(out)
	if err != nil {
		return nil, err
	}
	sc, found, err := s.scaleOf(obj)
	if err != nil {
		return nil, api.NewInternalError(err)
	}
	if !found {
		return nil, api.NewInternalError(fmt.Errorf("the spec replicas field %q does not exist", s.t.Scale.SpecReplicasPath))
	}
	return sc, nil
}

// UpdateScale replaces the Scale of the named object: it writes
// sc.Spec.Replicas at the spec replicas path, through the main
// resource's update pipeline (so generation moves and the strategy
// validates, as for a write of the object), and answers the new Scale.
// A resourceVersion in sc makes the write conditional on it. opts'
// FieldValidation is left to the caller, who has the body as sent
// (CheckScaleFields).
func (s *Store) UpdateScale(ctx context.Context, ns, name string, sc *Scale, opts UpdateOptions) (*Scale, error) {
	if err := checkScaleTypeMeta(sc); err != nil {
		return nil, err
	}
	return s.writeScale(ctx, ns, name, opts, false, func(*Scale) (*Scale, error) {
		return sc, nil
	})
}

// PatchScale applies a patch (JSON, merge, or strategic merge for types
// that take those) to the Scale of the named object and writes the
// patched replicas as UpdateScale does. As in kube-apiserver, a patch
// that leaves unset a spec replicas the object does not have is 400.
func (s *Store) PatchScale(ctx context.Context, ns, name, patchType string, patch []byte, opts UpdateOptions) (*Scale, error) {
	apply, err := s.patcher(patchType, patch, opts.FieldValidation)
	if err != nil {
		return nil, err
	}
	return s.writeScale(ctx, ns, name, opts, false, func(cur *Scale) (*Scale, error) {
		curJSON, err := json.Marshal(cur)
		if err != nil {
			return nil, err
		}
		patched, err := apply(curJSON)
		if err != nil {
			return nil, err
		}
		if sr, ok := s.t.Strategy.(ScaleRules); ok && patchType != PatchStrategicMerge {
			// kube's patch handler names a JSON or merge patched Scale
			// in a 422; a strategic merge patch it converts field by
			// field, keeping the Scale's kind.
			if err := sr.PatchedScaleError(patched); err != nil {
				return nil, api.NewInvalid(api.GroupKind{}, "", field.ErrorList{field.Invalid(field.NewPath("patch"), string(patched), err.Error())})
			}
		}
		if err := checkScaleFields(ctx, patched, opts.FieldValidation, true); err != nil {
			return nil, err
		}
		var next Scale
		if err := json.Unmarshal(patched, &next); err != nil {
			return nil, scaleDecodeError(err)
		}
		if patchType == PatchStrategicMerge {
			// kube converts a strategic merge patched Scale field by
			// field into its Go type: what it says of its kind is lost.
			next.APIVersion, next.Kind = ScaleAPIVersion, ScaleKind
		}
		if err := checkScaleTypeMeta(&next); err != nil {
			return nil, err
		}
		return &next, nil
	})
}

// CheckScaleFields applies a fieldValidation directive to the JSON of a
// Scale sent in an update: unknown and duplicate fields are 400 with
// Strict, warnings with Warn (or ""), ignored with Ignore.
func CheckScaleFields(ctx context.Context, data []byte, directive string) error {
	return checkScaleFields(ctx, data, directive, false)
}

// checkScaleFields is CheckScaleFields; patched words a refusal as
// kube-apiserver words it for a patch, a 422 on the patch.
func checkScaleFields(ctx context.Context, data []byte, directive string, patched bool) error {
	if directive == FieldValidationIgnore {
		return nil
	}
	r, err := scanFields(data, scaleFieldSchema, true)
	if err != nil {
		_, derr := DecodeScale(data)
		return unscannable(data, err, derr, scaleDecodeError(errors.New("null is not an object")))
	}
	if len(r.errs) == 0 {
		return nil
	}
	switch {
	case directive != FieldValidationStrict:
		warnAll(ctx, r.errs)
		return nil
	case patched:
		return api.NewInvalid(api.GroupKind{}, "", field.ErrorList{
			field.Invalid(field.NewPath("patch"), string(data), strictDecodingError(r.errs)),
		})
	}
	return api.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %s",
		ScaleKind, "v1", ScaleKind, strictDecodingError(r.errs)))
}

// DecodeScale decodes the JSON of a Scale sent by a client, worded as
// kube-apiserver's decoder words a body it cannot read.
func DecodeScale(data []byte) (*Scale, error) {
	var sc Scale
	if err := json.Unmarshal(data, &sc); err != nil {
		return nil, scaleDecodeError(err)
	}
	return &sc, nil
}

func scaleDecodeError(err error) error {
	return api.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %s", ScaleKind, "v1", ScaleKind, err))
}

// checkScaleTypeMeta accepts a Scale that says it is an autoscaling/v1
// Scale, or says nothing.
func checkScaleTypeMeta(sc *Scale) error {
	if sc.APIVersion != "" && sc.APIVersion != ScaleAPIVersion {
		return api.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", sc.APIVersion, ScaleAPIVersion))
	}
	if sc.Kind != "" && sc.Kind != ScaleKind {
		return api.NewBadRequest(fmt.Sprintf("the kind in the data (%s) does not match the expected kind (%s)", sc.Kind, ScaleKind))
	}
	return nil
}

// writeScale is one guaranteed update of the object behind a Scale: next
// turns the current Scale into the desired one, whose replicas are then
// written into a copy of the current object. The main resource's update
// runs on that copy, as kube-apiserver's ScaleREST updates through the
// custom resource's own store. The current Scale carries the managedFields
// of the object's replicas, translated; next's Scale carries them
// updated when applied is set, and otherwise the write is recorded as an
// Update by opts.FieldManager. They are translated back onto the object.
func (s *Store) writeScale(ctx context.Context, ns, name string, opts UpdateOptions, applied bool, next func(cur *Scale) (*Scale, error)) (*Scale, error) {
	if s.t.Scale == nil {
		return nil, api.NewNotFound(s.t.GroupResource(), name)
	}
	ns = s.namespaceOf(ns)
	specPath := s.t.Scale.SpecReplicasPath
	opts.Subresource = ""      // the object's own update rules apply
	opts.fieldsRecorded = true // managedFields come from the Scale's
	opts.scaleAdmitted = true
	gv := schema.GroupVersion{Group: s.t.Group, Version: s.t.Version}
	out, err := s.update(ctx, ns, name, opts, func(obj *api.Object) (*api.Object, error) {
		cur, found, err := s.scaleOf(obj)
		if err != nil {
			return nil, err
		}
		if !found {
			// Marks "not set" for a patch that leaves replicas alone.
			cur.Spec.Replicas = math.MinInt32
		}
		if cur.Metadata.ManagedFields, err = fieldmanager.ScaleEntries(obj.Metadata.ManagedFields, gv, specPath); err != nil {
			return nil, err
		}
		sc, err := next(cur)
		if err != nil {
			return nil, err
		}
		if !applied {
			if sc, err = s.recordScaleUpdate(cur, sc, opts.FieldManager); err != nil {
				return nil, err
			}
		}
		if sc.Metadata.Name != "" && sc.Metadata.Name != name {
			return nil, api.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", sc.Metadata.Name, name))
		}
		if sc.Metadata.Namespace != "" && s.t.Namespaced && sc.Metadata.Namespace != ns {
			return nil, api.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
		}
		if sc.Spec.Replicas == math.MinInt32 {
			return nil, api.NewBadRequest(fmt.Sprintf("the spec replicas field %q cannot be empty", specPath))
		}
		// As kube-apiserver's scale handler: mutating admission sees
		// the Scale the client sent, and may change its replicas.
		if sc, err = s.admitScaleMutation(ctx, ns, name, sc, cur, opts); err != nil {
			return nil, err
		}
		if sr, ok := s.t.Strategy.(ScaleRules); ok {
			if err := sr.ValidateScale(sc); err != nil {
				return nil, err
			}
		}
		if err := setPath(obj, specPath, sc.Spec.Replicas); err != nil {
			return nil, err
		}
		if _, kind := s.t.Strategy.(ScaleRules); !kind {
			if errs := ValidateScale(s.t, obj); len(errs) > 0 {
				return nil, api.NewInvalid(s.t.GroupKind(), name, errs)
			}
		}
		if sc.Metadata.ResourceVersion != "" {
			// The client's precondition; update answers 409 if stale.
			obj.Metadata.ResourceVersion = sc.Metadata.ResourceVersion
		}
		if obj.Metadata.ManagedFields, err = fieldmanager.ParentEntries(obj.Metadata.ManagedFields, sc.Metadata.ManagedFields, gv, specPath); err != nil {
			return nil, err
		}
		return obj, nil
	})
	if err != nil {
		return nil, err
	}
	obj, err := decodeWithRV(out)
	if err != nil {
		return nil, err
	}
	sc, _, err := s.scaleOf(obj)
	if err != nil {
		return nil, api.NewBadRequest(err.Error())
	}
	return sc, nil
}

// ValidateScale checks the values at a type's scale paths in obj as
// kube-apiserver's custom resource validator does on every write of a
// custom resource with a scale subresource: the replica counts, when
// present, are integers from 0 to 2147483647 and the selector is a
// string. Field paths are the scale paths as declared (".spec.replicas").
// It returns nil for types without a scale subresource.
func ValidateScale(t *Type, obj *api.Object) field.ErrorList {
	sub := t.Scale
	if sub == nil {
		return nil
	}
	var errs field.ErrorList
	for _, path := range []string{sub.SpecReplicasPath, sub.StatusReplicasPath} {
		n, _, err := readInt64Path(obj, path)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(field.NewPath(path), n, err.Error()))
		case n < 0:
			errs = append(errs, field.Invalid(field.NewPath(path), n, "should be a non-negative integer"))
		case n > math.MaxInt32:
			errs = append(errs, field.Invalid(field.NewPath(path), n, fmt.Sprintf("should be less than or equal to %v", math.MaxInt32)))
		}
	}
	if path := sub.LabelSelectorPath; path != "" {
		raw, ok, err := lookupPath(obj, path)
		var sel string
		if err == nil && ok && json.Unmarshal(raw, &sel) != nil {
			err = accessorError(path, raw, "string")
		}
		if err != nil {
			errs = append(errs, field.Invalid(field.NewPath(path), sel, err.Error()))
		}
	}
	return errs
}

// decodeWithRV decodes a stored object and sets its resourceVersion from
// the revision it was read or written at.
func decodeWithRV(out *storage.Object) (*api.Object, error) {
	obj, err := decode(out.Data)
	if err != nil {
		return nil, err
	}
	obj.Metadata.ResourceVersion = storage.FormatResourceVersion(out.Revision)
	return obj, nil
}

// scaleOf builds the Scale of obj and reports whether obj has a spec
// replicas value. A value of the wrong type is an error, worded as
// apimachinery's unstructured accessors word it.
func (s *Store) scaleOf(obj *api.Object) (*Scale, bool, error) {
	sub := s.t.Scale
	m := obj.Metadata
	sc := &Scale{
		APIVersion: ScaleAPIVersion,
		Kind:       ScaleKind,
		Metadata: api.ObjectMeta{
			Name: m.Name, Namespace: m.Namespace, UID: m.UID,
			ResourceVersion: m.ResourceVersion, CreationTimestamp: m.CreationTimestamp,
		},
	}
	spec, found, err := readInt64Path(obj, sub.SpecReplicasPath)
	if err != nil {
		return nil, false, err
	}
	status, _, err := readInt64Path(obj, sub.StatusReplicasPath)
	if err != nil {
		return nil, false, err
	}
	// As kube-apiserver, the counts are truncated to int32; validation
	// keeps written values in range.
	sc.Spec.Replicas, sc.Status.Replicas = int32(spec), int32(status)
	if sr, ok := s.t.Strategy.(ScaleRules); ok {
		if sc.Status.Selector, err = sr.ScaleSelector(obj); err != nil {
			return nil, false, err
		}
	} else if sub.LabelSelectorPath != "" {
		raw, ok, err := lookupPath(obj, sub.LabelSelectorPath)
		if err != nil {
			return nil, false, err
		}
		if ok {
			if err := json.Unmarshal(raw, &sc.Status.Selector); err != nil {
				return nil, false, accessorError(sub.LabelSelectorPath, raw, "string")
			}
		}
	}
	return sc, found, nil
}

// readInt64Path reads the integer at a JSON path such as ".spec.replicas".
func readInt64Path(obj *api.Object, path string) (int64, bool, error) {
	raw, ok, err := lookupPath(obj, path)
	if err != nil || !ok {
		return 0, false, err
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return 0, false, accessorError(path, raw, "int64")
	}
	return n, true, nil
}

// lookupPath returns the raw JSON at a path, and false if some step of
// it is missing. A step that is not an object is an error.
func lookupPath(obj *api.Object, path string) (json.RawMessage, bool, error) {
	segs := splitScalePath(path)
	raw, ok := obj.Fields[segs[0]]
	for i, seg := range segs[1:] {
		if !ok {
			return nil, false, nil
		}
		var m map[string]json.RawMessage
		if !isJSONObject(raw) || json.Unmarshal(raw, &m) != nil {
			return nil, false, accessorError("."+strings.Join(segs[:i+1], "."), raw, "map[string]interface{}")
		}
		raw, ok = m[seg]
	}
	return raw, ok, nil
}

// setPath sets the integer at a JSON path, creating missing objects on
// the way, as unstructured.SetNestedField does.
func setPath(obj *api.Object, path string, n int32) error {
	segs := splitScalePath(path)
	val := json.RawMessage(strconv.FormatInt(int64(n), 10))
	// Walk down, keeping each level to re-encode on the way up.
	levels := make([]map[string]json.RawMessage, len(segs)-1)
	raw := obj.Fields[segs[0]]
	for i := range levels {
		m := map[string]json.RawMessage{}
		if len(bytes.TrimSpace(raw)) > 0 && string(raw) != "null" {
			if !isJSONObject(raw) || json.Unmarshal(raw, &m) != nil {
				return api.NewBadRequest(fmt.Sprintf("value cannot be set because %s is not a map", "."+strings.Join(segs[:i+1], ".")))
			}
		}
		levels[i] = m
		raw = m[segs[i+1]]
	}
	for i := len(levels) - 1; i >= 0; i-- {
		levels[i][segs[i+1]] = val
		enc, err := json.Marshal(levels[i])
		if err != nil {
			return err
		}
		val = enc
	}
	if obj.Fields == nil {
		obj.Fields = map[string]json.RawMessage{}
	}
	obj.Fields[segs[0]] = val
	return nil
}

// splitScalePath splits ".spec.replicas" into its steps.
func splitScalePath(path string) []string {
	return strings.Split(strings.TrimPrefix(path, "."), ".")
}

func isJSONObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

// accessorError words a value of the wrong type as apimachinery's
// unstructured.Nested* accessors do.
func accessorError(path string, raw json.RawMessage, want string) error {
	var v any
	_ = json.Unmarshal(raw, &v)
	return fmt.Errorf("%s accessor error: %v is of the type %T, expected %s", path, v, v, want)
}

// validateScaleSubresource checks the paths of a scale subresource as
// kube-apiserver checks a CRD's: JSON paths under .spec for the desired
// replicas, under .status for the observed ones, under either for the
// selector.
func validateScaleSubresource(sc *ScaleSubresource, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	check := func(name, path string, required bool, under ...string) {
		p := fld.Child(name)
		switch {
		case path == "" && required:
			errs = append(errs, field.Required(p, ""))
		case path == "":
		case !validJSONPath(path):
			errs = append(errs, field.Invalid(p, path, "must be a valid JSON path with a leading dot, e.g. .spec.replicas"))
		case !slices.ContainsFunc(under, func(u string) bool { return strings.HasPrefix(path, u+".") }):
			errs = append(errs, field.Invalid(p, path, "should be a json path under "+either(under)))
		}
	}
	check("specReplicasPath", sc.SpecReplicasPath, true, ".spec")
	check("statusReplicasPath", sc.StatusReplicasPath, true, ".status")
	check("labelSelectorPath", sc.LabelSelectorPath, false, ".spec", ".status")
	return errs
}

// either words one path prefix or two as kube-apiserver's messages do.
func either(under []string) string {
	if len(under) == 1 {
		return under[0]
	}
	return "either " + strings.Join(under, " or ")
}

// validJSONPath accepts the simple dotted paths scale subresources use.
func validJSONPath(path string) bool {
	if !strings.HasPrefix(path, ".") {
		return false
	}
	for _, seg := range splitScalePath(path) {
		if seg == "" || strings.ContainsAny(seg, "[]*\"' ") {
			return false
		}
	}
	return true
}

// recordScaleUpdate records next's managedFields as an Update of the
// Scale by manager, from cur.
func (s *Store) recordScaleUpdate(cur, next *Scale, manager string) (*Scale, error) {
	fm, err := s.scaleFieldManager()
	if err != nil {
		return next, nil // as for objects: the write goes on untracked
	}
	if manager == "" {
		manager = DefaultFieldManager
	}
	curObj, err := scaleObject(cur)
	if err != nil {
		return nil, err
	}
	// A Scale sent without apiVersion and kind is one all the same, as
	// kube-apiserver's decoder defaults them from the URL.
	typed := *next
	typed.APIVersion, typed.Kind = ScaleAPIVersion, ScaleKind
	nextObj, err := scaleObject(&typed)
	if err != nil {
		return nil, err
	}
	out, err := fm.Update(curObj, nextObj, manager, fieldmanager.SubresourceScale)
	if err != nil {
		return nil, err
	}
	return objectScale(out)
}

// ApplyScale merges a server-side apply patch of a Scale into the Scale
// of the named object, as Apply does for objects; the applier then owns
// the object's spec replicas through /scale.
func (s *Store) ApplyScale(ctx context.Context, ns, name string, patch []byte, opts ApplyOptions) (*Scale, error) {
	fm, err := s.scaleFieldManager()
	if err != nil {
		return nil, fmt.Errorf("registry: apply to %s/scale: %w", s.t.GroupResource(), err)
	}
	patchObj, err := decodeApplyPatch(ctx, patch, opts.FieldValidation)
	if err != nil {
		return nil, err
	}
	uopts := UpdateOptions{DryRun: opts.DryRun, FieldManager: opts.FieldManager}
	return s.writeScale(ctx, ns, name, uopts, true, func(cur *Scale) (*Scale, error) {
		live, err := scaleObject(cur)
		if err != nil {
			return nil, err
		}
		merged, err := fm.Apply(live, runtime.DeepCopyJSON(patchObj), opts.FieldManager, fieldmanager.SubresourceScale, opts.Force)
		if err != nil {
			return nil, err
		}
		sc, err := objectScale(merged)
		if err != nil {
			return nil, err
		}
		if err := checkScaleTypeMeta(sc); err != nil {
			return nil, err
		}
		return sc, nil
	})
}

// scaleObject and objectScale move a Scale in and out of the generic
// object form the field manager takes.
func scaleObject(sc *Scale) (*api.Object, error) {
	var obj api.Object
	if err := convertJSON(sc, &obj); err != nil {
		return nil, err
	}
	return &obj, nil
}

func objectScale(obj *api.Object) (*Scale, error) {
	var sc Scale
	if err := convertJSON(obj, &sc); err != nil {
		return nil, scaleDecodeError(err)
	}
	return &sc, nil
}

// convertJSON moves a value between two types with the same JSON form.
func convertJSON(in, out any) error {
	data, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("registry: encode: %w", err)
	}
	return json.Unmarshal(data, out)
}

// admitScaleMutation runs mutating admission on a write of /scale, with
// the Scale sent and the current one, and returns the Scale as admitted.
func (s *Store) admitScaleMutation(ctx context.Context, ns, name string, sc, cur *Scale, opts UpdateOptions) (*Scale, error) {
	if s.reg.Admission() == nil {
		return sc, nil
	}
	obj, err := admissionScale(sc)
	if err != nil {
		return nil, err
	}
	old, err := admissionScale(cur)
	if err != nil {
		return nil, err
	}
	r := &AdmissionRequest{
		Operation: OpUpdate, Subresource: SubresourceScale, Namespace: ns, Name: name,
		Object: obj, OldObject: old, DryRun: opts.DryRun,
		FieldManager: opts.FieldManager, FieldValidation: opts.FieldValidation,
	}
	if err := s.admitMutate(ctx, r); err != nil {
		return nil, err
	}
	return objectScale(r.Object)
}

// scaleAdmission is the validating admission request of a write through
// /scale: the Scales of the object as written and as it was.
func (s *Store) scaleAdmission(obj, old *api.Object, opts UpdateOptions) (*AdmissionRequest, error) {
	sc, _, err := s.scaleOf(obj)
	if err != nil {
		return nil, err
	}
	oldSc, _, err := s.scaleOf(old)
	if err != nil {
		return nil, err
	}
	o, err := admissionScale(sc)
	if err != nil {
		return nil, err
	}
	oo, err := admissionScale(oldSc)
	if err != nil {
		return nil, err
	}
	return &AdmissionRequest{
		Operation: OpUpdate, Subresource: SubresourceScale, Namespace: obj.Metadata.Namespace, Name: obj.Metadata.Name,
		Object: o, OldObject: oo, DryRun: opts.DryRun,
		FieldManager: opts.FieldManager, FieldValidation: opts.FieldValidation,
	}, nil
}

// admissionScale is a Scale as admission sees it: a whole object, with
// its apiVersion and kind.
func admissionScale(sc *Scale) (*api.Object, error) {
	c := *sc
	c.APIVersion, c.Kind = ScaleAPIVersion, ScaleKind
	return scaleObject(&c)
}
