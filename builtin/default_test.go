package builtin

import (
	"testing"
)

// kube-apiserver applies a kind's defaults to what it reads from storage,
// so its answer to a create has the defaults of what the strategy
// changed: a Job's labels copied from the template labels its selector
// generation set, a new PersistentVolumeClaim's Pending phase.
func TestCreateAnswersStoredDefaults(t *testing.T) {
	reg := newRegistry(t)
	create(t, storeFor(t, reg, "", "v1", "namespaces"), "", `{"metadata":{"name":"default"}}`)

	job := create(t, storeFor(t, reg, "batch", "v1", "jobs"), "default",
		`{"metadata":{"name":"j"},"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"x"}]}}}}`)
	uid := job.Metadata.UID
	for k, want := range map[string]string{
		"batch.kubernetes.io/controller-uid": uid, "controller-uid": uid,
		"batch.kubernetes.io/job-name": "j", "job-name": "j",
	} {
		if got := job.Metadata.Labels[k]; got != want {
			t.Errorf("job label %s = %q, want %q (labels %v)", k, got, want, job.Metadata.Labels)
		}
	}

	pvc := create(t, storeFor(t, reg, "", "v1", "persistentvolumeclaims"), "default",
		`{"metadata":{"name":"c"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}`)
	if got := topField(pvc, "status"); got != `{"phase":"Pending"}` {
		t.Errorf("claim status %s, want phase Pending", got)
	}
}
