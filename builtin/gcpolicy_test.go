package builtin

import (
	"context"
	"slices"
	"testing"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
)

// TestDefaultGarbageCollectionPolicy deletes objects with no propagation
// policy, as client-go's Delete with empty options does, and checks kube's
// strategies decide what their dependents get, as on kube-apiserver:
// batch/v1 Jobs and v1 ReplicationControllers are kept with the orphan
// finalizer (the garbage collector orphans their pods, then deletes
// them); a Deployment goes at once (its dependents in the background); an
// Event never takes a garbage collector finalizer, even asked for one.
// A Job's delete with no policy is answered kube's Job storage's
// warning; no other delete here is.
func TestDefaultGarbageCollectionPolicy(t *testing.T) {
	ctx := context.Background()
	reg := newRegistry(t)
	create(t, storeFor(t, reg, "", "v1", "namespaces"), "", `{"metadata":{"name":"ns"}}`)
	pod := `"template":{"metadata":{"labels":{"app":"a"}},"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}`

	cases := []struct {
		name                   string
		group, version, plural string
		body                   string
		policy                 string
		wantFinalizers         []string // nil: deleted at once
	}{
		{"job, no policy", "batch", "v1", "jobs", `{"metadata":{"name":"j1"},"spec":{` + pod + `}}`, "", []string{"orphan"}},
		{"job, background", "batch", "v1", "jobs", `{"metadata":{"name":"j2"},"spec":{` + pod + `}}`, api.DeletePropagationBackground, nil},
		{"job, foreground", "batch", "v1", "jobs", `{"metadata":{"name":"j3"},"spec":{` + pod + `}}`, api.DeletePropagationForeground, []string{"foregroundDeletion"}},
		{"job, no policy, own finalizer", "batch", "v1", "jobs", `{"metadata":{"name":"j4","finalizers":["example.com/keep"]},"spec":{` + pod + `}}`, "", []string{"example.com/keep", "orphan"}},
		{"replicationcontroller, no policy", "", "v1", "replicationcontrollers",
			`{"metadata":{"name":"rc"},"spec":{"replicas":0,"selector":{"app":"a"},"template":{"metadata":{"labels":{"app":"a"}},"spec":{"containers":[{"name":"c","image":"busybox"}]}}}}`, "", []string{"orphan"}},
		{"deployment, no policy", "apps", "v1", "deployments",
			`{"metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"app":"a"}},"template":{"metadata":{"labels":{"app":"a"}},"spec":{"containers":[{"name":"c","image":"busybox"}]}}}}`, "", nil},
		{"event, orphan asked", "", "v1", "events",
			`{"metadata":{"name":"e"},"involvedObject":{"kind":"Pod","name":"p","namespace":"ns"},"reason":"R","message":"m","type":"Normal","firstTimestamp":"2026-01-01T00:00:00Z","lastTimestamp":"2026-01-01T00:00:00Z","count":1,"source":{"component":"test"}}`,
			api.DeletePropagationOrphan, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := storeFor(t, reg, c.group, c.version, c.plural)
			obj := create(t, s, "ns", c.body)
			wctx, warnings := api.WithWarnings(ctx)
			out, deleted, err := s.Delete(wctx, "ns", obj.Metadata.Name, registry.DeleteOptions{PropagationPolicy: c.policy})
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			if c.plural == "jobs" && c.policy == "" {
				want = []string{jobDeleteWarning}
			}
			if got := warnings.Messages(); !slices.Equal(got, want) {
				t.Errorf("warnings %q, want %q", got, want)
			}
			if c.wantFinalizers == nil {
				if !deleted {
					t.Fatalf("kept with finalizers %v, want deleted at once", decodeObject(t, out).Metadata.Finalizers)
				}
				return
			}
			got := decodeObject(t, out)
			if deleted || got.Metadata.DeletionTimestamp == nil || !slices.Equal(got.Metadata.Finalizers, c.wantFinalizers) {
				t.Fatalf("deleted %v, deletionTimestamp %v, finalizers %v; want marked with %v", deleted, got.Metadata.DeletionTimestamp, got.Metadata.Finalizers, c.wantFinalizers)
			}
		})
	}
}

// jobDeleteWarning is the warning kube's Job storage
// (pkg/registry/batch/job/storage) gives a delete with no propagation
// policy.
const jobDeleteWarning = "child pods are preserved by default when jobs are deleted; " +
	"set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning"

// TestJobDeleteWarningBeforeTheDelete checks the Job storage's warning
// comes as kube's does: before the delete is tried, so a delete of a
// Job that does not exist is warned too, and once for a collection,
// even an empty one; an explicit policy is not warned.
func TestJobDeleteWarningBeforeTheDelete(t *testing.T) {
	ctx := context.Background()
	reg := newRegistry(t)
	create(t, storeFor(t, reg, "", "v1", "namespaces"), "", `{"metadata":{"name":"ns"}}`)
	jobs := storeFor(t, reg, "batch", "v1", "jobs")

	wctx, warnings := api.WithWarnings(ctx)
	if _, _, err := jobs.Delete(wctx, "ns", "missing", registry.DeleteOptions{}); !api.IsNotFound(err) {
		t.Fatalf("delete of a missing Job: %v, want NotFound", err)
	}
	if got := warnings.Messages(); !slices.Equal(got, []string{jobDeleteWarning}) {
		t.Errorf("delete of a missing Job: warnings %q, want kube's", got)
	}

	wctx, warnings = api.WithWarnings(ctx)
	if _, err := jobs.DeleteCollection(wctx, "ns", registry.ListOptions{}, registry.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := warnings.Messages(); !slices.Equal(got, []string{jobDeleteWarning}) {
		t.Errorf("collection delete: warnings %q, want kube's", got)
	}

	wctx, warnings = api.WithWarnings(ctx)
	if _, err := jobs.DeleteCollection(wctx, "ns", registry.ListOptions{}, registry.DeleteOptions{PropagationPolicy: api.DeletePropagationBackground}); err != nil {
		t.Fatal(err)
	}
	if got := warnings.Messages(); len(got) != 0 {
		t.Errorf("collection delete, Background: warnings %q, want none", got)
	}
}
