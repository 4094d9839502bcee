package registry

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/miniapi/miniapi/api"
)

func TestNamespaceWrites(t *testing.T) {
	runWriteCases(t, "Namespace", []writeCase{
		{
			name:   "defaults on create",
			body:   `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"dev"}}`,
			fields: map[string]string{"spec": `{"finalizers":["kubernetes"]}`, "status": `{"phase":"Active"}`},
		},
		{
			name:   "kubernetes finalizer appended to others",
			body:   `{"metadata":{"name":"dev"},"spec":{"finalizers":["example.com/cleanup"]},"status":{}}`,
			fields: map[string]string{"spec": `{"finalizers":["example.com/cleanup","kubernetes"]}`, "status": `{"phase":"Active"}`},
		},
		{
			name:   "kubernetes finalizer kept once",
			body:   `{"metadata":{"name":"dev"},"spec":{"finalizers":["kubernetes"]},"status":{"phase":"Active"}}`,
			fields: map[string]string{"spec": `{"finalizers":["kubernetes"]}`},
		},
		{
			name:   "unknown top-level fields dropped",
			body:   `{"metadata":{"name":"dev"},"data":{"a":"b"}}`,
			fields: map[string]string{"data": ""},
		},
		{
			name:    "name must be a DNS label",
			body:    `{"metadata":{"name":"team.dev"}}`,
			invalid: []string{`metadata.name: Invalid value: "team.dev": must not contain dots`},
		},
		{
			name:    "namespace on a namespace",
			body:    `{"metadata":{"name":"dev","namespace":"default"}}`,
			invalid: []string{`metadata.namespace: Forbidden: not allowed on this type`},
		},
		{
			name:    "finalizer neither standard nor qualified",
			body:    `{"metadata":{"name":"dev"},"spec":{"finalizers":["cleanup"]}}`,
			invalid: []string{`spec.finalizers: Invalid value: "cleanup": name is neither a standard finalizer name nor is it fully qualified`},
		},
		{
			name: "standard finalizer names",
			body: `{"metadata":{"name":"dev"},"spec":{"finalizers":["orphan","foregroundDeletion"]}}`,
		},
		{
			name:    "unsupported phase",
			body:    `{"metadata":{"name":"dev"},"status":{"phase":"Sleeping"}}`,
			invalid: []string{`status.phase: Unsupported value: "Sleeping": supported values: "Active", "Terminating"`},
		},
		{
			name:       "spec not an object",
			body:       `{"metadata":{"name":"dev"},"spec":"x"}`,
			badRequest: `Namespace in version "v1" cannot be handled as a Namespace: json: cannot unmarshal string into Go struct field Namespace.spec of type v1.NamespaceSpec`,
		},
		{
			name:       "finalizers not strings",
			body:       `{"metadata":{"name":"dev"},"spec":{"finalizers":[1]}}`,
			badRequest: `Namespace in version "v1" cannot be handled as a Namespace: json: cannot unmarshal number into Go struct field NamespaceSpec.spec.finalizers of type string`,
		},
		{
			name:       "condition time malformed",
			body:       `{"metadata":{"name":"dev"},"status":{"conditions":[{"type":"X","lastTransitionTime":"yesterday"}]}}`,
			badRequest: `Namespace in version "v1" cannot be handled as a Namespace: parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"`,
		},
		{
			name: "update of labels",
			old:  `{"metadata":{"name":"dev"}}`,
			body: `{"metadata":{"name":"dev","labels":{"team":"a"}},"spec":{"finalizers":["kubernetes"]},"status":{"phase":"Active"}}`,
		},
		{
			name:    "phase may only be Terminating while deleting",
			old:     `{"metadata":{"name":"dev"}}`,
			body:    `{"metadata":{"name":"dev"},"status":{"phase":"Terminating"}}`,
			invalid: []string{"status.Phase: Invalid value: \"Terminating\": may only be 'Active' if `deletionTimestamp` is empty"},
		},
	})
}

func TestNamespaceDeletingPhase(t *testing.T) {
	s := namespaceStrategy{}
	old := mustObject(t, `{"metadata":{"name":"dev","deletionTimestamp":"2024-01-01T00:00:00Z"},"status":{"phase":"Active"}}`)
	cases := []struct {
		name, status string
		want         []string
	}{
		{"unchanged phase passes", `{"phase":"Active"}`, nil},
		{"to Terminating", `{"phase":"Terminating"}`, nil},
		{"to empty", `{}`, []string{"status.Phase: Invalid value: \"\": may only be 'Terminating' if `deletionTimestamp` is not empty"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := old.DeepCopy()
			obj.Fields["status"] = []byte(tc.status)
			assertErrors(t, s.ValidateUpdate(obj, old), tc.want)
		})
	}
}

func TestNamespacePrepareForUpdate(t *testing.T) {
	old := mustObject(t, `{"metadata":{"name":"dev"},"spec":{"finalizers":["kubernetes"]}}`)
	obj := mustObject(t, `{"metadata":{"name":"dev"},"spec":{"finalizers":[]}}`)
	namespaceStrategy{}.PrepareForUpdate(obj, old)
	if got := string(obj.Fields["spec"]); got != `{"finalizers":["kubernetes"]}` {
		t.Errorf("spec = %s", got)
	}
}

func TestNamespacePhaseSelector(t *testing.T) {
	typ := builtin(t, "Namespace")
	obj := mustObject(t, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"dev","creationTimestamp":"2024-01-01T00:00:00Z"}}`)
	obj.Metadata.CreationTimestamp = api.Time{Time: time.Now()}
	if errs, err := applyWrite(typ, obj, nil); err != nil || len(errs) > 0 {
		t.Fatal(err, errs)
	}
	data, err := obj.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	a, err := AttrFunc(&typ)(data)
	if err != nil {
		t.Fatal(err)
	}
	if a.Fields["status.phase"] != "Active" || a.Fields["metadata.name"] != "dev" {
		t.Errorf("fields = %v", a.Fields)
	}
}

func TestNamespaceNameLabel(t *testing.T) {
	reg := newEtcdRegistry(t, Config{})
	nss := storeOf(t, reg, "namespaces")
	named := mustCreate(t, nss, "", `{"metadata":{"name":"team-a","labels":{"kubernetes.io/metadata.name":"other"}}}`)
	if got := named.Metadata.Labels["kubernetes.io/metadata.name"]; got != "team-a" {
		t.Errorf("label %q, want the name", got)
	}
	// The creator owns the label, as kube-apiserver records it.
	if len(named.Metadata.ManagedFields) != 1 || !strings.Contains(string(named.Metadata.ManagedFields[0].FieldsV1), `"f:kubernetes.io/metadata.name"`) {
		t.Errorf("managedFields %+v", named.Metadata.ManagedFields)
	}
	// kubectl sends an empty spec and status; as in kube-apiserver, where
	// the empty namespace compared with has them too, they are not owned.
	kubectl := mustCreate(t, nss, "", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"k","creationTimestamp":null},"spec":{},"status":{}}`)
	if got := string(kubectl.Metadata.ManagedFields[0].FieldsV1); got != `{"f:metadata":{"f:labels":{".":{},"f:kubernetes.io/metadata.name":{}}}}` {
		t.Errorf("kubectl-style create owns %s", got)
	}
	generated := mustCreate(t, nss, "", `{"metadata":{"generateName":"gen-"}}`)
	if got := generated.Metadata.Labels["kubernetes.io/metadata.name"]; got != generated.Metadata.Name || got == "" {
		t.Errorf("generated namespace %q labelled %q", generated.Metadata.Name, got)
	}
	// An update cannot take the label away.
	named.Metadata.Labels = map[string]string{"x": "y"}
	out, err := nss.Update(context.Background(), "", "team-a", named, UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := mustDecode(t, out).Metadata.Labels; got["kubernetes.io/metadata.name"] != "team-a" || got["x"] != "y" {
		t.Errorf("labels after update %v", got)
	}
}
