package admission_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/miniapi/miniapi/miniapitest"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"
)

// teamCRD is a cluster-scoped example.com/v1 Team, the parameter of the
// mutating policy below.
const teamCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: teams.example.com
spec:
  group: example.com
  scope: Cluster
  names: {plural: teams, singular: team, kind: Team, listKind: TeamList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              name: {type: string}
`

// TestMutatingAdmissionPolicy labels Deployments with the team a custom
// resource names, and annotates them by JSON patch.
func TestMutatingAdmissionPolicy(t *testing.T) {
	t.Parallel()
	env := miniapitest.Start(t, miniapitest.WithCRDObjects(teamCRD), miniapitest.WithNamespaces("apps"))
	cs, _ := clientFor(t, env)
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	team := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Team",
		"metadata": map[string]any{"name": "owners"},
		"spec":     map[string]any{"name": "payments"},
	}}
	if _, err := dyn.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "teams"}).
		Create(ctx, team, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	policy := &admissionregistrationv1.MutatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "team-label"},
		Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
			ParamKind: &admissionregistrationv1.ParamKind{APIVersion: "example.com/v1", Kind: "Team"},
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
						Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
					},
				}},
			},
			FailurePolicy:      ptr.To(admissionregistrationv1.Fail),
			ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy,
			Mutations: []admissionregistrationv1.Mutation{{
				PatchType: admissionregistrationv1.PatchTypeApplyConfiguration,
				ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{
					Expression: `Object{metadata: Object.metadata{labels: {"example.com/team": params.spec.name}}}`,
				},
			}, {
				PatchType: admissionregistrationv1.PatchTypeJSONPatch,
				JSONPatch: &admissionregistrationv1.JSONPatch{
					Expression: `[JSONPatch{op: "add", path: "/metadata/annotations", value: {"example.com/mutated-by": "team-label"}}]`,
				},
			}},
		},
	}
	adm := cs.AdmissionregistrationV1()
	if _, err := adm.MutatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &admissionregistrationv1.MutatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "team-label"},
		Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{
			PolicyName: "team-label",
			ParamRef:   &admissionregistrationv1.ParamRef{Name: "owners", ParameterNotFoundAction: ptr.To(admissionregistrationv1.DenyAction)},
		},
	}
	if _, err := adm.MutatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The policy and binding are in effect for the next write, but kube's
	// plugin patches by the schemas of the served kinds, which it reads
	// from the server's OpenAPI as it starts and every five seconds
	// after; until it has read the kind's it refuses, with 503 or, once
	// it has the index but not yet the group's document, with its
	// "Resource kind ... not found" (both kube's, both passing).
	first := true
	eventually(t, func() error {
		d, err := cs.AppsV1().Deployments("apps").Create(ctx, deployment("probe", 1), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			if !apierrors.IsServiceUnavailable(err) && !strings.Contains(err.Error(), "There can be a delay") {
				t.Fatalf("before the plugin has the schemas: got %v, want 503 or kube's schema-not-found", err)
			}
			first = false
			return err
		}
		if d.Labels["example.com/team"] != "payments" {
			return fmt.Errorf("not yet mutated (first try %v): labels %v", first, d.Labels)
		}
		return nil
	})
	got, err := cs.AppsV1().Deployments("apps").Create(ctx, deployment("web", 1), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v := got.Labels["example.com/team"]; v != "payments" {
		t.Errorf("label example.com/team: got %q in %v, want payments", v, got.Labels)
	}
	if v := got.Annotations["example.com/mutated-by"]; v != "team-label" {
		t.Errorf("annotation example.com/mutated-by: got %q in %v, want team-label", v, got.Annotations)
	}
	// What the policy set is stored, not only answered.
	stored, err := cs.AppsV1().Deployments("apps").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if stored.Labels["example.com/team"] != "payments" {
		t.Errorf("stored labels: %v", stored.Labels)
	}
}
