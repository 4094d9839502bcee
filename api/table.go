package api

import "encoding/json"

// MetaGroup is the API group of the server-side output kinds below
// (meta.k8s.io); clients ask for them with the as, g and v parameters of
// an Accept clause.
const MetaGroup = "meta.k8s.io"

// Table is server-side printed output: column definitions and one row of
// cells per object, as kubectl get asks for it. Metadata carries the
// list's resourceVersion and continue token (or, for one object, its
// resourceVersion).
type Table struct {
	TypeMeta `json:",inline"`
	Metadata ListMeta `json:"metadata"`
	// ColumnDefinitions is null in the second and later frames of a Table
	// watch: only the first frame carries them.
	ColumnDefinitions []TableColumnDefinition `json:"columnDefinitions"`
	Rows              []TableRow              `json:"rows"`
}

// TableColumnDefinition describes one column of a Table. Every field is
// always present on the wire, as in Kubernetes.
type TableColumnDefinition struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Format      string `json:"format"`
	Description string `json:"description"`
	// Priority 0 columns are always shown; higher ones only in wide output.
	Priority int32 `json:"priority"`
}

// TableRow is one object's cells plus, as includeObject asks, nothing
// (null), its PartialObjectMetadata, or the whole object.
type TableRow struct {
	Cells []any `json:"cells"`
	// Conditions describe the row, e.g. a Completed pod's, which
	// kubectl hides unless asked to show all.
	Conditions []TableRowCondition `json:"conditions,omitempty"`
	Object     json.RawMessage     `json:"object"`
}

// TableRowCondition is one condition of a Table row.
type TableRowCondition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// PartialObjectMetadata is an object reduced to its metadata, as the
// metadata client and metadata informers read objects. Metadata is the
// object's metadata exactly as stored.
type PartialObjectMetadata struct {
	TypeMeta `json:",inline"`
	Metadata json.RawMessage `json:"metadata"`
}

// PartialObjectMetadataList is a list of PartialObjectMetadata.
type PartialObjectMetadataList struct {
	TypeMeta `json:",inline"`
	Metadata ListMeta                `json:"metadata"`
	Items    []PartialObjectMetadata `json:"items"`
}
