package builtin

import (
	"k8s.io/kubernetes/pkg/registry/storage/csidriver"
	"k8s.io/kubernetes/pkg/registry/storage/csinode"
	"k8s.io/kubernetes/pkg/registry/storage/csistoragecapacity"
	"k8s.io/kubernetes/pkg/registry/storage/storageclass"
	"k8s.io/kubernetes/pkg/registry/storage/volumeattachment"
	"k8s.io/kubernetes/pkg/registry/storage/volumeattributesclass"
	"k8s.io/kubernetes/pkg/registry/storagemigration/storagemigration"
)

// storageResources are storage.k8s.io/v1's resources.
func storageResources() []*resource {
	st := func(r resource) *resource {
		r.group, r.version = "storage.k8s.io", "v1"
		return &r
	}
	return []*resource{
		st(resource{kind: "CSIDriver", plural: "csidrivers", strategy: csidriver.Strategy}),
		st(resource{kind: "CSINode", plural: "csinodes", strategy: csinode.Strategy, status: csinode.StatusStrategy}),
		st(resource{kind: "CSIStorageCapacity", plural: "csistoragecapacities", namespaced: true, strategy: csistoragecapacity.Strategy, defaultTable: true}),
		st(resource{kind: "StorageClass", plural: "storageclasses", shortNames: []string{"sc"}, strategy: storageclass.Strategy}),
		st(resource{kind: "VolumeAttachment", plural: "volumeattachments", strategy: volumeattachment.Strategy, status: volumeattachment.StatusStrategy}),
		st(resource{kind: "VolumeAttributesClass", plural: "volumeattributesclasses", shortNames: []string{"vac"}, strategy: volumeattributesclass.Strategy}),
	}
}

// storageMigrationResources are storagemigration.k8s.io/v1's resources.
func storageMigrationResources() []*resource {
	return []*resource{
		{group: "storagemigration.k8s.io", version: "v1", kind: "StorageVersionMigration", plural: "storageversionmigrations",
			strategy: storagemigration.Strategy, status: storagemigration.StatusStrategy},
	}
}
