package api

// Deletion propagation policies.
const (
	DeletePropagationOrphan     = "Orphan"
	DeletePropagationBackground = "Background"
	DeletePropagationForeground = "Foreground"
)

// DeleteOptions is the optional body of a DELETE.
type DeleteOptions struct {
	TypeMeta           `json:",inline"`
	GracePeriodSeconds *int64         `json:"gracePeriodSeconds,omitempty"`
	Preconditions      *Preconditions `json:"preconditions,omitempty"`
	OrphanDependents   *bool          `json:"orphanDependents,omitempty"`
	PropagationPolicy  *string        `json:"propagationPolicy,omitempty"`
	DryRun             []string       `json:"dryRun,omitempty"`
	// IgnoreStoreReadErrorWithClusterBreakingPotential asks to delete an
	// object storage cannot read; see registry.DeleteOptions.
	IgnoreStoreReadErrorWithClusterBreakingPotential *bool `json:"ignoreStoreReadErrorWithClusterBreakingPotential,omitempty"`
}

// Preconditions must hold for a delete (or update) to proceed.
type Preconditions struct {
	UID             *string `json:"uid,omitempty"`
	ResourceVersion *string `json:"resourceVersion,omitempty"`
}
