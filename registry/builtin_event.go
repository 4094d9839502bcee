package registry

import (
	"fmt"

	"github.com/miniapi/miniapi/api"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Length limits kube-apiserver puts on events that carry eventTime.
const (
	eventReportingInstanceLimit = 128
	eventActionLimit            = 128
	eventReasonLimit            = 128
	eventNoteLimit              = 1024
)

func eventType() Type {
	return Type{
		Version:    "v1",
		Kind:       "Event",
		Plural:     "events",
		Singular:   "event",
		ShortNames: []string{"ev"},
		Namespaced: true,
		// core/v1 events only get kube-apiserver's generic name check;
		// generated names such as "web.17a2b3c4d5e6f7a8" are typical.
		NameValidation: NamePathSegment,
		// The field selectors kube-apiserver accepts for core/v1 events.
		SelectableFields: []string{
			"involvedObject.kind",
			"involvedObject.namespace",
			"involvedObject.name",
			"involvedObject.uid",
			"involvedObject.apiVersion",
			"involvedObject.resourceVersion",
			"involvedObject.fieldPath",
			"reason",
			"reportingComponent",
			"source",
			"type",
		},
		PrinterColumns: []PrinterColumn{
			{Name: "Last Seen", Type: "date", JSONPath: ".lastTimestamp"},
			{Name: "Type", Type: "string", JSONPath: ".type"},
			{Name: "Reason", Type: "string", JSONPath: ".reason"},
			{Name: "Object", Type: "string", JSONPath: ".involvedObject.name"},
			{Name: "Message", Type: "string", JSONPath: ".message"},
		},
		Schema:      eventSchema(),
		Description: eventDescription,
		Strategy:    eventStrategy{},
	}
}

// eventFields is the part of a core/v1 Event beyond metadata.
type eventFields struct {
	InvolvedObject     objectReferenceFields  `json:"involvedObject"`
	Reason             string                 `json:"reason"`
	Message            string                 `json:"message"`
	Source             eventSourceFields      `json:"source"`
	FirstTimestamp     wireTime               `json:"firstTimestamp"`
	LastTimestamp      wireTime               `json:"lastTimestamp"`
	Count              int32                  `json:"count"`
	Type               string                 `json:"type"`
	EventTime          microTime              `json:"eventTime"`
	Series             *eventSeriesFields     `json:"series"`
	Action             string                 `json:"action"`
	Related            *objectReferenceFields `json:"related"`
	ReportingComponent string                 `json:"reportingComponent"`
	ReportingInstance  string                 `json:"reportingInstance"`
}

// eventTopFields are the top-level fields of a core/v1 Event.
var eventTopFields = []string{
	"involvedObject", "reason", "message", "source", "firstTimestamp", "lastTimestamp", "count",
	"type", "eventTime", "series", "action", "related", "reportingComponent", "reportingInstance",
}

type objectReferenceFields struct {
	Kind            string `json:"kind"`
	Namespace       string `json:"namespace"`
	Name            string `json:"name"`
	UID             string `json:"uid"`
	APIVersion      string `json:"apiVersion"`
	ResourceVersion string `json:"resourceVersion"`
	FieldPath       string `json:"fieldPath"`
}

type eventSourceFields struct {
	Component string `json:"component"`
	Host      string `json:"host"`
}

type eventSeriesFields struct {
	Count            int32     `json:"count"`
	LastObservedTime microTime `json:"lastObservedTime"`
}

// eventStrategy applies the rules kube-apiserver applies to core/v1
// events, which are looser than events.k8s.io/v1's: only the namespace
// agreement, plus the reporting fields when eventTime is set.
type eventStrategy struct{}

// Normalize refuses a body kube-apiserver could not decode (a string
// count, a malformed timestamp) with its 400 and drops unknown top-level
// fields.
func (eventStrategy) Normalize(obj *api.Object) error {
	var f eventFields
	if err := decodeBuiltin(obj, "Event", "v1", &f); err != nil {
		return err
	}
	keepFields(obj, eventTopFields...)
	return nil
}

// ValidateCreate applies kube-apiserver's core/v1 event rules.
func (eventStrategy) ValidateCreate(obj *api.Object) field.ErrorList {
	return validateEvent(obj)
}

// ValidateUpdate applies the same rules as create: core/v1 events may be
// rewritten freely (recorders bump count and lastTimestamp).
func (eventStrategy) ValidateUpdate(obj, _ *api.Object) field.ErrorList {
	return validateEvent(obj)
}

// SelectableFieldValue computes "source", which kube-apiserver takes
// from source.component, or from reportingComponent when that is empty
// (events written through events.k8s.io carry only the latter).
func (eventStrategy) SelectableFieldValue(obj *api.Object, path string) (string, bool) {
	if path != "source" {
		return "", false
	}
	if c, ok := ReadFieldPath(obj, "source.component"); ok && c != "" {
		return c, true
	}
	c, _ := ReadFieldPath(obj, "reportingComponent")
	return c, true
}

func validateEvent(obj *api.Object) field.ErrorList {
	var f eventFields
	if errs := decodeForValidation(obj, &f); errs != nil {
		return errs
	}
	var errs field.ErrorList
	ns := obj.Metadata.Namespace
	involvedNS := field.NewPath("involvedObject", "namespace")
	if f.EventTime.IsZero() {
		// An event without eventTime is an old-style one: its namespace
		// must agree with the involved object's, where "default" stands
		// for cluster-scoped objects.
		if f.InvolvedObject.Namespace == "" {
			if ns != "" && ns != "default" {
				errs = append(errs, field.Invalid(involvedNS, f.InvolvedObject.Namespace, "does not match event.namespace"))
			}
		} else if ns != f.InvolvedObject.Namespace {
			errs = append(errs, field.Invalid(involvedNS, f.InvolvedObject.Namespace, "does not match event.namespace"))
		}
		return errs
	}
	if f.InvolvedObject.Namespace == "" && ns != "default" && ns != "kube-system" {
		errs = append(errs, field.Invalid(involvedNS, f.InvolvedObject.Namespace, "does not match event.namespace"))
	}
	// core/v1 calls it reportingComponent; kube-apiserver reports the
	// internal name, reportingController.
	controller := field.NewPath("reportingController")
	if f.ReportingComponent == "" {
		errs = append(errs, field.Required(controller, ""))
	}
	for _, msg := range validation.IsQualifiedName(f.ReportingComponent) {
		errs = append(errs, field.Invalid(controller, f.ReportingComponent, msg))
	}
	errs = append(errs, requiredWithLimit(field.NewPath("reportingInstance"), f.ReportingInstance, eventReportingInstanceLimit)...)
	errs = append(errs, requiredWithLimit(field.NewPath("action"), f.Action, eventActionLimit)...)
	errs = append(errs, requiredWithLimit(field.NewPath("reason"), f.Reason, eventReasonLimit)...)
	if len(f.Message) > eventNoteLimit {
		errs = append(errs, tooManyChars(field.NewPath("message"), eventNoteLimit))
	}
	return errs
}

// requiredWithLimit is kube-apiserver's pair of checks on a reporting
// field: present, and at most limit bytes.
func requiredWithLimit(p *field.Path, v string, limit int) field.ErrorList {
	var errs field.ErrorList
	if v == "" {
		errs = append(errs, field.Required(p, ""))
	}
	if len(v) > limit {
		errs = append(errs, tooManyChars(p, limit))
	}
	return errs
}

// tooManyChars words a length error as kube-apiserver does for events,
// which omits the value.
func tooManyChars(p *field.Path, limit int) *field.Error {
	return field.Invalid(p, "", fmt.Sprintf("can have at most %d characters", limit))
}
