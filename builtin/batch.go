package builtin

import (
	"k8s.io/kubernetes/pkg/registry/autoscaling/horizontalpodautoscaler"
	"k8s.io/kubernetes/pkg/registry/batch/cronjob"
	"k8s.io/kubernetes/pkg/registry/batch/job"
)

// batchResources are batch/v1's resources.
func batchResources() []*resource {
	return []*resource{
		{group: "batch", version: "v1", kind: "CronJob", plural: "cronjobs", shortNames: []string{"cj"}, categories: all, namespaced: true,
			strategy: cronjob.Strategy, status: cronjob.StatusStrategy},
		{group: "batch", version: "v1", kind: "Job", plural: "jobs", categories: all, namespaced: true,
			strategy: job.Strategy, status: job.StatusStrategy, attrs: job.GetAttrs},
	}
}

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
