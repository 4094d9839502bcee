package registry

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/miniapi/miniapi/api"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Type describes one resource type: its names, its scope and its
// behaviour. Types are plain data; Registry.Add makes one served.
type Type struct {
	// Group is the API group, "" for the core group.
	Group string
	// Version is the served version, e.g. "v1".
	Version string
	// StorageVersion is set for a CRD's versions: the version objects
	// are stored in (the CRD's storage version, possibly Version itself).
	// Storage rewrites apiVersion between the two, so every version of
	// one resource shares its objects, and applies the schema's defaults
	// to what it reads. For a built-in kind served in a version other
	// than kube's storage version (autoscaling/v1
	// HorizontalPodAutoscalers, stored as v2) the strategy converts
	// (VersionConverter).
	StorageVersion string
	// StorageGroup, when set, is the group objects are stored under,
	// for a built-in kind whose objects kube stores with another group's
	// (events.k8s.io Events are core Events; CoreGroup names the core
	// group): keys, and StorageVersion, are that group's.
	StorageGroup string
	// Kind is the object kind, e.g. "ConfigMap"; ListKind defaults to
	// Kind+"List".
	Kind     string
	ListKind string
	// Plural is the resource name in URLs, e.g. "configmaps"; Singular
	// defaults to the lower-cased Kind.
	Plural   string
	Singular string
	// ShortNames and Categories are advertised in discovery.
	ShortNames []string
	Categories []string
	// Namespaced is true for namespaced types, false for cluster-scoped.
	Namespaced bool
	// ReturnDeletedObject makes a delete that removes an object answer
	// with the object, as kube-apiserver's store does for the kinds that
	// set its flag of that name (Pods, Services, Namespaces...); a delete
	// of any other kind answers a Status Success naming what went. An
	// object finalizers keep is answered as it stands either way.
	ReturnDeletedObject bool
	// SelectableFields are the field paths (beyond metadata.name and
	// metadata.namespace) that field selectors may use, e.g.
	// "spec.nodeName". Values are read from the object by path.
	SelectableFields []string
	// PrinterColumns are shown in table output after Name.
	PrinterColumns []PrinterColumn
	// Schema is the OpenAPI v3 schema of a whole object of this type (a
	// JSON document, as a CRD's openAPIV3Schema), used for OpenAPI
	// documents and field validation. Empty means none: the object is
	// described as preserving unknown fields.
	Schema json.RawMessage
	// Conversion is set for the versions of a CRD whose
	// spec.conversion.strategy is Webhook: that spec.conversion, as JSON.
	// Storage then converts objects between versions through the
	// webhook instead of rewriting apiVersion (the server's storage
	// factory builds the converter from it), and a change to it gives
	// the type new storage.
	Conversion json.RawMessage
	// VersionSchemas are the Schemas of every version of the resource,
	// this one included, when it has several (a CRD's versions): the
	// managedFields of an object may have been recorded through any of
	// them, and each merges by its own version's schema.
	VersionSchemas map[string]json.RawMessage
	// Description says what the type is for, in discovery and OpenAPI.
	Description string
	// Scale, when set, gives the type a /scale subresource reading and
	// writing replicas at these paths, as a CRD's subresources.scale.
	Scale *ScaleSubresource
	// CreatesRefused makes creates answer 405 while the type is being
	// taken down: a CRD being deleted serves its objects until they are
	// gone, but accepts no new ones, as kube-apiserver.
	CreatesRefused bool
	// DeprecationWarning, when set, is sent as a Warning header with every
	// request for this type, as kube-apiserver does for a CRD version
	// marked deprecated.
	DeprecationWarning string
	// Strategy customises defaulting, validation and subresources; it may
	// implement any of the capability interfaces in strategy.go. nil is a
	// strategy with no extra behaviour.
	Strategy Strategy
	// NameValidation says which rule object names follow; the zero value
	// is DNS-1123 subdomain, as most Kubernetes types use.
	NameValidation NameRule
}

// PrinterColumn is one extra column of table output, read from the object
// by a JSONPath, as a CRD's additionalPrinterColumns.
type PrinterColumn struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Format      string `json:"format,omitempty"`
	Description string `json:"description,omitempty"`
	Priority    int32  `json:"priority,omitempty"`
	JSONPath    string `json:"jsonPath"`
}

// DefaultPrinterColumns are the columns of a type that declares none:
// Age, described as kube-apiserver describes it for a CRD without
// additionalPrinterColumns (ObjectMeta's creationTimestamp). A column a
// type declares without a description gets kube's generic one instead.
func DefaultPrinterColumns() []PrinterColumn {
	return []PrinterColumn{{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp",
		Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]}}
}

// ScaleSubresource maps an object onto an autoscaling/v1 Scale, as a
// CRD's subresources.scale does: JSON paths (".spec.replicas") to the
// desired and observed replica counts and, optionally, a label selector.
type ScaleSubresource struct {
	SpecReplicasPath   string `json:"specReplicasPath"`
	StatusReplicasPath string `json:"statusReplicasPath"`
	LabelSelectorPath  string `json:"labelSelectorPath,omitempty"`
}

// NameRule is a rule for valid object names.
type NameRule int

// Name rules Kubernetes uses.
const (
	// NameSubdomain: a DNS-1123 subdomain (most types).
	NameSubdomain NameRule = iota
	// NameLabel: a DNS-1123 label (e.g. Namespace).
	NameLabel
	// NamePathSegment: anything usable as a URL path segment.
	NamePathSegment
)

// APIVersion is the apiVersion objects of this type carry: "v1" for the
// core group, "group/version" otherwise.
func (t *Type) APIVersion() string {
	if t.Group == "" {
		return t.Version
	}
	return t.Group + "/" + t.Version
}

// CoreGroup names the core group, whose name is empty, in StorageGroup.
const CoreGroup = "core"

// StorageAPIVersion is the apiVersion objects of this type are stored
// with, "" when they are stored as served.
func (t *Type) StorageAPIVersion() string {
	if t.StorageVersion == "" {
		return ""
	}
	stored := Type{Group: t.storageGroup(), Version: t.StorageVersion}
	return stored.APIVersion()
}

// storageGroup is the group of the type's keys.
func (t *Type) storageGroup() string {
	switch t.StorageGroup {
	case "":
		return t.Group
	case CoreGroup:
		return ""
	}
	return t.StorageGroup
}

// GroupResource names the type's resource for messages and errors.
func (t *Type) GroupResource() api.GroupResource {
	return api.GroupResource{Group: t.Group, Resource: t.Plural}
}

// StorageResource names the resource whose stored objects the type
// serves: one for every version of a CRD, and one for a kind served by
// two groups (core and events.k8s.io Events). Types with one are
// equivalent, as kube's admission matches them (matchPolicy Equivalent).
func (t *Type) StorageResource() api.GroupResource {
	return api.GroupResource{Group: t.storageGroup(), Resource: t.Plural}
}

// GroupKind names the type's kind for messages and errors.
func (t *Type) GroupKind() api.GroupKind {
	return api.GroupKind{Group: t.Group, Kind: t.Kind}
}

// GVR identifies a served resource.
type GVR struct {
	Group, Version, Resource string
}

// String is "group/version/resource", with "core" for the core group.
func (g GVR) String() string {
	grp := g.Group
	if grp == "" {
		grp = "core"
	}
	return grp + "/" + g.Version + "/" + g.Resource
}

// GVR returns the type's group, version and plural.
func (t *Type) GVR() GVR { return GVR{t.Group, t.Version, t.Plural} }

// withDefaults fills the derived names and checks the type is well formed.
func (t Type) withDefaults() (Type, error) {
	if t.ListKind == "" {
		t.ListKind = t.Kind + "List"
	}
	if t.Singular == "" {
		t.Singular = strings.ToLower(t.Kind)
	}
	var errs field.ErrorList
	if t.Version == "" {
		errs = append(errs, field.Required(field.NewPath("version"), ""))
	}
	if t.Kind == "" {
		errs = append(errs, field.Required(field.NewPath("kind"), ""))
	}
	if t.Plural == "" || strings.ContainsAny(t.Plural, "/ ") || t.Plural != strings.ToLower(t.Plural) {
		errs = append(errs, field.Invalid(field.NewPath("plural"), t.Plural, "must be a non-empty lower-case name"))
	}
	for _, f := range t.SelectableFields {
		if f == "" || strings.HasPrefix(f, ".") || strings.HasSuffix(f, ".") {
			errs = append(errs, field.Invalid(field.NewPath("selectableFields"), f, "must be a dotted field path"))
		}
	}
	if len(errs) > 0 {
		return t, fmt.Errorf("registry: type %s is not valid: %w", t.GVR(), errs.ToAggregate())
	}
	return t, nil
}

// subresourceVerbs are the verbs of a subresource that views its parent
// (status, scale): kube-apiserver serves get, patch and update on them.
var subresourceVerbs = []string{"get", "patch", "update"}

// Subresources returns every subresource t serves, in name order: status
// and scale when it has them, and those its strategy lists.
func Subresources(t *Type) []Subresource {
	var out []Subresource
	if HasStatus(t) {
		out = append(out, Subresource{Name: SubresourceStatus, Verbs: subresourceVerbs, Serve: ServeUpdate})
	}
	if HasScale(t) {
		out = append(out, Subresource{Name: SubresourceScale, Verbs: subresourceVerbs, Group: "autoscaling", Version: "v1", Kind: ScaleKind})
	}
	if l, ok := t.Strategy.(SubresourceLister); ok {
		for _, sr := range l.Subresources() {
			if !slices.ContainsFunc(out, func(o Subresource) bool { return o.Name == sr.Name }) {
				out = append(out, sr)
			}
		}
	}
	slices.SortFunc(out, func(a, b Subresource) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// FindSubresource returns the subresource of t named name.
func FindSubresource(t *Type, name string) (Subresource, bool) {
	for _, sr := range Subresources(t) {
		if sr.Name == name {
			return sr, true
		}
	}
	return Subresource{}, false
}
