package apiextensions

import (
	"encoding/json"
	"fmt"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Group and version of the CustomResourceDefinition API.
const (
	Group      = "apiextensions.k8s.io"
	APIVersion = "v1"
	// Plural is the resource name CRDs are served under.
	Plural = "customresourcedefinitions"
	// Kind is the kind of a CRD object.
	Kind = "CustomResourceDefinition"
)

// Scopes a CRD may declare.
const (
	NamespaceScoped = "Namespaced"
	ClusterScoped   = "Cluster"
)

// Conversion strategies.
const (
	NoneConverter    = "None"
	WebhookConverter = "Webhook"
)

// CleanupFinalizer keeps a CRD being deleted until its objects are gone,
// as kube-apiserver's customresourcecleanup finalizer.
const CleanupFinalizer = "customresourcecleanup.apiextensions.k8s.io"

// Condition types, statuses and the reasons the controller sets.
const (
	Established   = "Established"
	NamesAccepted = "NamesAccepted"
	Terminating   = "Terminating"

	ConditionTrue    = "True"
	ConditionFalse   = "False"
	ConditionUnknown = "Unknown"
)

// CRD is a CustomResourceDefinition: its metadata and the spec and status
// decoded from the object's top-level fields.
type CRD struct {
	Metadata api.ObjectMeta
	Spec     Spec
	Status   Status
}

// Spec is a CRD's spec, apiextensions.k8s.io/v1 field for field.
type Spec struct {
	Group                 string      `json:"group"`
	Names                 Names       `json:"names"`
	Scope                 string      `json:"scope"`
	Versions              []Version   `json:"versions"`
	Conversion            *Conversion `json:"conversion,omitempty"`
	PreserveUnknownFields bool        `json:"preserveUnknownFields,omitempty"`
}

// Names are the names a CRD asks for (spec) or was given (status).
type Names struct {
	Plural     string   `json:"plural"`
	Singular   string   `json:"singular,omitempty"`
	ShortNames []string `json:"shortNames,omitempty"`
	Kind       string   `json:"kind"`
	ListKind   string   `json:"listKind,omitempty"`
	Categories []string `json:"categories,omitempty"`
}

// Version is one version of a CRD.
type Version struct {
	Name                     string                   `json:"name"`
	Served                   bool                     `json:"served"`
	Storage                  bool                     `json:"storage"`
	Deprecated               bool                     `json:"deprecated,omitempty"`
	DeprecationWarning       *string                  `json:"deprecationWarning,omitempty"`
	Schema                   *Validation              `json:"schema,omitempty"`
	Subresources             *Subresources            `json:"subresources,omitempty"`
	AdditionalPrinterColumns []registry.PrinterColumn `json:"additionalPrinterColumns,omitempty"`
	SelectableFields         []SelectableField        `json:"selectableFields,omitempty"`
}

// Validation holds a version's schema.
type Validation struct {
	OpenAPIV3Schema json.RawMessage `json:"openAPIV3Schema,omitempty"`
}

// Subresources are a version's status and scale subresources.
type Subresources struct {
	Status *json.RawMessage `json:"status,omitempty"`
	Scale  *Scale           `json:"scale,omitempty"`
}

// Scale is subresources.scale.
type Scale struct {
	SpecReplicasPath   string  `json:"specReplicasPath"`
	StatusReplicasPath string  `json:"statusReplicasPath"`
	LabelSelectorPath  *string `json:"labelSelectorPath,omitempty"`
}

// SelectableField is one of selectableFields.
type SelectableField struct {
	JSONPath string `json:"jsonPath"`
}

// Conversion is spec.conversion, as apiextensions.k8s.io/v1 defines it:
// kube's webhook converter reads its webhook (Converters).
type Conversion = apiextensionsv1.CustomResourceConversion

// Status is a CRD's status.
type Status struct {
	Conditions     []Condition `json:"conditions,omitempty"`
	AcceptedNames  Names       `json:"acceptedNames"`
	StoredVersions []string    `json:"storedVersions,omitempty"`
}

// Condition is one of status.conditions.
type Condition struct {
	Type               string `json:"type"`
	Status             string `json:"status"`
	LastTransitionTime string `json:"lastTransitionTime,omitempty"`
	Reason             string `json:"reason,omitempty"`
	Message            string `json:"message,omitempty"`
}

// Decode reads a CRD from an object. A spec or status of the wrong JSON
// shape is an error.
func Decode(obj *api.Object) (*CRD, error) {
	crd := &CRD{Metadata: obj.Metadata}
	if raw, ok := obj.Fields["spec"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &crd.Spec); err != nil {
			return nil, fmt.Errorf("spec: %w", err)
		}
	}
	if raw, ok := obj.Fields["status"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &crd.Status); err != nil {
			return nil, fmt.Errorf("status: %w", err)
		}
	}
	return crd, nil
}

// DecodeBytes reads a CRD from its stored JSON.
func DecodeBytes(data []byte) (*CRD, error) {
	var obj api.Object
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, err
	}
	return Decode(&obj)
}

// setStatus stores status into obj.
func setStatus(obj *api.Object, st *Status) error {
	return setField(obj, "status", st)
}

func setField(obj *api.Object, name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("apiextensions: encode %s: %w", name, err)
	}
	if obj.Fields == nil {
		obj.Fields = map[string]json.RawMessage{}
	}
	obj.Fields[name] = b
	return nil
}

// StorageVersion returns the name of the version marked storage, "" if
// none is.
func (s *Spec) StorageVersion() string {
	for _, v := range s.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return ""
}

// Condition returns the condition of type t, nil if absent.
func (s *Status) Condition(t string) *Condition {
	for i := range s.Conditions {
		if s.Conditions[i].Type == t {
			return &s.Conditions[i]
		}
	}
	return nil
}

// SetCondition sets c, keeping lastTransitionTime when the status does
// not change, as kube's SetCRDCondition does.
func (s *Status) SetCondition(c Condition) {
	if old := s.Condition(c.Type); old != nil {
		if old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		*old = c
		return
	}
	s.Conditions = append(s.Conditions, c)
}

// IsTrue reports whether condition t is True.
func (s *Status) IsTrue(t string) bool {
	c := s.Condition(t)
	return c != nil && c.Status == ConditionTrue
}
