package builtin

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/kubernetes/pkg/registry/autoscaling/horizontalpodautoscaler"
	"k8s.io/kubernetes/pkg/registry/batch/cronjob"
	"k8s.io/kubernetes/pkg/registry/batch/job"
	jobstorage "k8s.io/kubernetes/pkg/registry/batch/job/storage"
)

// batchResources are batch/v1's resources.
func batchResources() []*resource {
	return []*resource{
		{group: "batch", version: "v1", kind: "CronJob", plural: "cronjobs", shortNames: []string{"cj"}, categories: all, namespaced: true,
			strategy: cronjob.Strategy, status: cronjob.StatusStrategy},
		{group: "batch", version: "v1", kind: "Job", plural: "jobs", categories: all, namespaced: true,
			strategy: job.Strategy, status: job.StatusStrategy, attrs: job.GetAttrs, deleteWarnings: jobDeleteWarnings},
	}
}

// jobDeleteWarnings records the warning kube's Job storage gives a
// delete that leaves the propagation policy to the kind's default, which
// orphans the Job's pods. The rule and its text are the storage's own,
// in its Delete (its DeleteCollection has the same test): it is called
// with a store whose key function ends the delete before anything is
// read.
func jobDeleteWarnings(ctx context.Context, opts *metav1.DeleteOptions) {
	r := &jobstorage.REST{Store: &genericregistry.Store{KeyFunc: warningsOnly}}
	_, _, _ = r.Delete(ctx, "", nil, opts)
}

// errWarningsOnly ends a call into kube's storage made for its warnings.
var errWarningsOnly = errors.New("builtin: a call for warnings only")

// warningsOnly is a store key function that refuses every key.
func warningsOnly(context.Context, string) (string, error) { return "", errWarningsOnly }

// autoscalingResources are autoscaling's resources: HorizontalPodAutoscalers
// in v2 (the preferred version) and v1, one set of objects.
func autoscalingResources() []*resource {
	hpa := func(version string) *resource {
		return &resource{group: "autoscaling", version: version, kind: "HorizontalPodAutoscaler", plural: "horizontalpodautoscalers",
			shortNames: []string{"hpa"}, categories: all, namespaced: true,
			strategy: horizontalpodautoscaler.Strategy, status: horizontalpodautoscaler.StatusStrategy}
	}
	v1 := hpa("v1")
	v1.storageVersion = "v2" // kube stores HPAs as autoscaling/v2
	return []*resource{hpa("v2"), v1}
}
