package fieldmanager

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/miniapi/miniapi/api"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Operations recorded in managedFields entries.
const (
	OperationApply  = "Apply"
	OperationUpdate = "Update"
)

// SubresourceStatus is the subresource whose writes own only .status.
const SubresourceStatus = "status"

// Config describes the type a Manager serves.
type Config struct {
	// Kind is the group, version and kind of the objects, as served.
	Kind schema.GroupVersionKind
	// TypeConverter is the objects' merge schema (Builtin or ForSchema).
	TypeConverter TypeConverter
	// HasStatus is set for types with a /status subresource: as in
	// kube-apiserver, writes to the main resource then own no status
	// fields and writes to /status own nothing but status.
	HasStatus bool
	// CustomResource selects kube-apiserver's variant for custom
	// resources, which tolerates managedFields recorded against versions
	// the schema does not know.
	CustomResource bool
	// Subresource is the subresource that serves these objects ("" for
	// the main resource; SubresourceScale for a Scale), recorded in
	// the entries of non-status writes.
	Subresource string
	// Finalize is set for types with a /finalize subresource (namespaces):
	// its writes are recorded with subresource "finalize".
	Finalize bool
	// Subresources are the type's other subresources written as views
	// of the object (a pod's ephemeralcontainers and resize, a
	// certificate signing request's approval): as in kube-apiserver,
	// each write is recorded with the subresource's name, and owns what
	// ResetFields leaves it (the main resource's without ResetFields).
	Subresources []string
	// ResetFields, when set, returns the fields that writes of a
	// subresource ("" for the main resource) reset, so that no manager
	// owns them: what a built-in kind's strategy for that subresource
	// declares (kube's rest.ResetFieldsStrategy), nil for none. Unset,
	// the rules of kube's strategies for custom resources apply: the
	// main resource and /finalize reset status when the type has
	// /status, and /status resets spec and metadata.
	ResetFields func(subresource string) map[fieldpath.APIVersion]fieldpath.Filter
	// Convert, when set, converts an encoded object between versions of
	// the kind that differ in more than apiVersion (a built-in kind's
	// autoscaling/v1 and v2, with Kubernetes' own conversions), as
	// kube's field manager converts the live object to the version of
	// each managedFields entry. Unset, a version change only rewrites
	// apiVersion (CRD versions, conversion None).
	Convert func(data []byte, from, to schema.GroupVersionKind) ([]byte, error)
}

// SubresourceFinalize is a namespace's subresource for spec.finalizers.
const SubresourceFinalize = "finalize"

// TypeConverter turns objects into typed values of a merge schema and back.
type TypeConverter = managedfields.TypeConverter

// Manager records field ownership and merges apply patches for one type.
type Manager struct {
	kind        schema.GroupVersionKind
	tc          TypeConverter
	subresource string // Config.Subresource: what main serves
	main        *managedfields.FieldManager
	status      *managedfields.FieldManager // nil without a status subresource
	finalize    *managedfields.FieldManager // nil without a finalize subresource
	others      map[string]*managedfields.FieldManager
}

// New builds the Manager for a type.
func New(cfg Config) (*Manager, error) {
	if cfg.TypeConverter == nil {
		return nil, errors.New("fieldmanager: no type converter")
	}
	m := &Manager{kind: cfg.Kind, tc: cfg.TypeConverter, subresource: cfg.Subresource}
	gv := fieldpath.APIVersion(cfg.Kind.GroupVersion().String())
	var mainReset map[fieldpath.APIVersion]fieldpath.Filter
	if cfg.HasStatus {
		mainReset = map[fieldpath.APIVersion]fieldpath.Filter{
			gv: fieldpath.NewExcludeSetFilter(fieldpath.NewSet(fieldpath.MakePathOrDie("status"))),
		}
	}
	// As kube-apiserver's status strategies for custom resources:
	// /status writes may not own spec or metadata.
	statusReset := map[fieldpath.APIVersion]fieldpath.Filter{
		gv: fieldpath.NewExcludeSetFilter(fieldpath.NewSet(
			fieldpath.MakePathOrDie("spec"), fieldpath.MakePathOrDie("metadata"))),
	}
	// What /finalize may change (spec.finalizers) the store decides;
	// like the main resource, it owns no status.
	finalizeReset := mainReset
	if cfg.ResetFields != nil {
		mainReset = cfg.ResetFields(cfg.Subresource)
		statusReset = cfg.ResetFields(SubresourceStatus)
		finalizeReset = cfg.ResetFields(SubresourceFinalize)
	}
	var err error
	if m.main, err = m.newFieldManager(cfg, cfg.Subresource, mainReset); err != nil {
		return nil, err
	}
	if cfg.HasStatus {
		if m.status, err = m.newFieldManager(cfg, SubresourceStatus, statusReset); err != nil {
			return nil, err
		}
	}
	if cfg.Finalize {
		if m.finalize, err = m.newFieldManager(cfg, SubresourceFinalize, finalizeReset); err != nil {
			return nil, err
		}
	}
	for _, sub := range cfg.Subresources {
		reset := mainReset
		if cfg.ResetFields != nil {
			reset = cfg.ResetFields(sub)
		}
		fm, err := m.newFieldManager(cfg, sub, reset)
		if err != nil {
			return nil, err
		}
		if m.others == nil {
			m.others = map[string]*managedfields.FieldManager{}
		}
		m.others[sub] = fm
	}
	return m, nil
}

func (m *Manager) newFieldManager(cfg Config, subresource string, reset map[fieldpath.APIVersion]fieldpath.Filter) (*managedfields.FieldManager, error) {
	// The hub is the served version itself: miniapi has no internal
	// version, and versions of one CRD differ only in apiVersion.
	hub := cfg.Kind.GroupVersion()
	newFM := managedfields.NewDefaultFieldManager
	if cfg.CustomResource {
		newFM = managedfields.NewDefaultCRDFieldManager
	}
	fm, err := newFM(cfg.TypeConverter, unstructuredConverter{convert: cfg.Convert}, noDefaults{}, emptyCreater{cfg.TypeConverter}, cfg.Kind, hub, subresource, reset)
	if err != nil {
		return nil, fmt.Errorf("fieldmanager: %s: %w", cfg.Kind, err)
	}
	return fm, nil
}

// forSubresource returns the field manager of a subresource ("" for the
// main resource), or nil when the type does not track it.
func (m *Manager) forSubresource(subresource string) *managedfields.FieldManager {
	switch subresource {
	case m.subresource:
		return m.main
	case SubresourceStatus:
		return m.status
	case SubresourceFinalize:
		return m.finalize
	}
	return m.others[subresource]
}

// Update records, in obj's managedFields, that manager set the fields obj
// changes relative to live (nil for a create). Managed fields obj carries
// replace live's, as kube-apiserver lets clients reset or rewrite them;
// on a subresource they are ignored. As kube-apiserver, a failure to
// compute ownership never fails the write: obj keeps live's entries.
func (m *Manager) Update(live, obj *api.Object, manager, subresource string) (*api.Object, error) {
	fm := m.forSubresource(subresource)
	if fm == nil {
		return obj, nil
	}
	liveU, err := m.liveOrEmpty(live)
	if err != nil {
		return nil, err
	}
	objU, err := toUnstructured(obj)
	if err != nil {
		return nil, err
	}
	// An update changes nothing but managedFields: take those alone
	// rather than decoding the whole object back.
	res, ok := fm.UpdateNoErrors(liveU, objU, manager).(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("fieldmanager: unexpected update result")
	}
	entries, err := entriesOf(res)
	if err != nil {
		return nil, err
	}
	out := *obj
	out.Metadata.ManagedFields = entries
	return &out, nil
}

// entriesOf reads the managedFields the field manager wrote into u's
// metadata (in their unstructured form) directly: apimachinery's generic
// accessor converts them by reflection, which costs more than the
// ownership computation itself.
func entriesOf(u *unstructured.Unstructured) ([]api.ManagedFieldsEntry, error) {
	meta, _ := u.Object["metadata"].(map[string]any)
	list, ok := meta["managedFields"].([]any)
	if !ok {
		return nil, nil
	}
	out := make([]api.ManagedFieldsEntry, 0, len(list))
	for _, item := range list {
		e, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("fieldmanager: managedFields entry is %T", item)
		}
		str := func(k string) string { s, _ := e[k].(string); return s }
		entry := api.ManagedFieldsEntry{
			Manager: str("manager"), Operation: str("operation"), APIVersion: str("apiVersion"),
			FieldsType: str("fieldsType"), Subresource: str("subresource"),
		}
		if ts := str("time"); ts != "" {
			t, err := time.Parse(time.RFC3339, ts)
			if err != nil {
				return nil, fmt.Errorf("fieldmanager: managedFields time %q: %w", ts, err)
			}
			entry.Time = &api.Time{Time: t}
		}
		if f, ok := e["fieldsV1"]; ok {
			raw, err := json.Marshal(f) // map keys sorted, as the field set serializes them
			if err != nil {
				return nil, fmt.Errorf("fieldmanager: encode fieldsV1: %w", err)
			}
			entry.FieldsV1 = raw
		}
		out = append(out, entry)
	}
	return out, nil
}

// Apply merges an apply patch (the decoded YAML or JSON of an object) into
// live (nil when the object does not exist yet) on behalf of manager, as
// kube-apiserver's server-side apply: a field another manager owns with
// a different value is a conflict (409 with one cause per field) unless
// force is set, and fields manager no longer applies are removed when no
// one else owns them.
func (m *Manager) Apply(live *api.Object, patch map[string]any, manager, subresource string, force bool) (*api.Object, error) {
	fm := m.forSubresource(subresource)
	if fm == nil {
		return nil, fmt.Errorf("fieldmanager: %s has no subresource %q", m.kind, subresource)
	}
	liveU, err := m.liveOrEmpty(live)
	if err != nil {
		return nil, err
	}
	patchU := &unstructured.Unstructured{Object: patch}
	out, err := fm.Apply(liveU, patchU, manager, force)
	var se apierrors.APIStatus
	if err != nil && !errors.As(err, &se) {
		// A patch that does not fit the schema is the client's mistake,
		// which kube-apiserver reports with this wording (as a 500; the
		// fix to make it a 400 is kubernetes/kubernetes#139255). Checked
		// only here, so a good patch is converted once.
		if _, terr := m.tc.ObjectToTyped(patchU); terr != nil {
			return nil, api.NewBadRequest(fmt.Sprintf("failed to create typed patch object (%s/%s; %s): %v",
				patchU.GetNamespace(), patchU.GetName(), m.kind, terr))
		}
	}
	if err != nil {
		return nil, statusError(err)
	}
	return fromUnstructured(out)
}

// liveOrEmpty is live in unstructured form, or an empty object of the
// type when there is none (a create).
func (m *Manager) liveOrEmpty(live *api.Object) (*unstructured.Unstructured, error) {
	if live != nil {
		return toUnstructured(live)
	}
	return newEmpty(m.tc, m.kind)
}

// newEmpty is an empty object of a kind, as kube-apiserver creates one
// to compare a create with (and to find which fields of an object that
// predates managedFields nobody has written).
func newEmpty(tc TypeConverter, gvk schema.GroupVersionKind) (*unstructured.Unstructured, error) {
	if e, ok := tc.(emptyObjecter); ok {
		obj, err := e.emptyObject(gvk)
		if err != nil {
			return nil, err
		}
		return &unstructured.Unstructured{Object: obj}, nil
	}
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// emptyObjecter is implemented by type converters that know what an
// empty object of their kinds looks like to kube-apiserver.
type emptyObjecter interface {
	emptyObject(schema.GroupVersionKind) (map[string]any, error)
}

// toUnstructured converts obj to the map form the field manager works on,
// with whole numbers as int64 as structured-merge-diff expects. Each part
// is decoded from the bytes obj already holds rather than re-encoding
// the whole object first: this runs on every write.
func toUnstructured(obj *api.Object) (*unstructured.Unstructured, error) {
	m := make(map[string]any, len(obj.Fields)+3)
	if obj.APIVersion != "" {
		m["apiVersion"] = obj.APIVersion
	}
	if obj.Kind != "" {
		m["kind"] = obj.Kind
	}
	meta, err := json.Marshal(&obj.Metadata)
	if err != nil {
		return nil, fmt.Errorf("fieldmanager: encode metadata: %w", err)
	}
	var mm map[string]any
	if err := utiljson.Unmarshal(meta, &mm); err != nil {
		return nil, fmt.Errorf("fieldmanager: decode metadata: %w", err)
	}
	if obj.Metadata.ManagedFields != nil && len(obj.Metadata.ManagedFields) == 0 {
		// An empty list (which the JSON form omits) is how a client
		// asks for managedFields to be reset.
		mm["managedFields"] = []any{}
	}
	m["metadata"] = mm
	for k, raw := range obj.Fields {
		if len(raw) == 0 {
			continue
		}
		var v any
		if err := utiljson.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("fieldmanager: decode %s: %w", k, err)
		}
		m[k] = v
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// fromUnstructured converts the field manager's result back.
func fromUnstructured(o runtime.Object) (*api.Object, error) {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("fieldmanager: unexpected object type %T", o)
	}
	data, err := json.Marshal(u.Object)
	if err != nil {
		return nil, fmt.Errorf("fieldmanager: encode result: %w", err)
	}
	var out api.Object
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("fieldmanager: decode result: %w", err)
	}
	return &out, nil
}

// statusError turns an apimachinery status error (a conflict, a bad
// request) into miniapi's; anything else is returned as is.
var statusError = api.FromKubeError

// unstructuredConverter converts between versions with convert (a
// built-in kind's conversions) or, without it, by rewriting apiVersion,
// which is all a version change means for a CRD's versions (conversion
// None).
type unstructuredConverter struct {
	convert func(data []byte, from, to schema.GroupVersionKind) ([]byte, error)
}

func (unstructuredConverter) Convert(in, out, context any) error {
	return errors.New("fieldmanager: Convert is not supported")
}

func (c unstructuredConverter) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	u, ok := in.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("fieldmanager: cannot convert %T", in)
	}
	gvk := u.GroupVersionKind()
	want, ok := target.KindForGroupVersionKinds([]schema.GroupVersionKind{gvk})
	if !ok {
		// Another group's (an events.k8s.io/v1 Event's entry recorded
		// through core v1): kube's scheme has no such conversion, and
		// its field manager drops an entry it cannot convert to.
		return nil, runtime.NewNotRegisteredGVKErrForTarget("fieldmanager", gvk, target)
	}
	if want == gvk {
		return u, nil
	}
	if c.convert != nil {
		data, err := u.MarshalJSON()
		if err != nil {
			return nil, err
		}
		if data, err = c.convert(data, gvk, want); err != nil {
			return nil, err
		}
		out := &unstructured.Unstructured{}
		if err := out.UnmarshalJSON(data); err != nil {
			return nil, err
		}
		return out, nil
	}
	out := u.DeepCopy()
	out.SetGroupVersionKind(want)
	return out, nil
}

func (unstructuredConverter) ConvertFieldLabel(gvk schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

// noDefaults leaves defaulting to the store, which defaults every object
// it writes after the field manager has run.
type noDefaults struct{}

func (noDefaults) Default(runtime.Object) {}

// emptyCreater makes empty objects of a kind for kube's field manager,
// the same newEmpty gives a create.
type emptyCreater struct{ tc TypeConverter }

func (c emptyCreater) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	return newEmpty(c.tc, gvk)
}

// maxManagerLength is the longest field manager name kube-apiserver
// accepts.
const maxManagerLength = 128

// ManagerName is the manager kube-apiserver records for a write that is
// not an apply: the fieldManager parameter when set, otherwise the user
// agent up to its first "/" ("kubectl" for "kubectl/v1.37.2 (linux/amd64)"),
// without unprintable characters and cut to the longest allowed name.
func ManagerName(fieldManager, userAgent string) string {
	if fieldManager != "" {
		return fieldManager
	}
	prefix, _, _ := strings.Cut(userAgent, "/")
	var b strings.Builder
	for _, r := range prefix {
		if !unicode.IsPrint(r) {
			continue
		}
		if b.Len()+utf8.RuneLen(r) > maxManagerLength {
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}
