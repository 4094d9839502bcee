package admission_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miniapi/miniapi/controllers"
	"github.com/miniapi/miniapi/miniapitest"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// warnings collects the Warning headers a client receives.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) HandleWarningHeader(code int, agent, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, text)
}

// take returns the warnings received so far and forgets them.
func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.msgs
	w.msgs = nil
	return out
}

// clientFor is a client of env with its defaults (protobuf for
// built-in kinds), its warnings collected.
func clientFor(t *testing.T, env *miniapitest.Env) (kubernetes.Interface, *warnings) {
	t.Helper()
	w := &warnings{}
	cfg := rest.CopyConfig(env.Config)
	cfg.WarningHandler = w
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs, w
}

func deployment(name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
			},
		},
	}
}

// maxReplicasPolicy refuses Deployments with more replicas than its
// parameter, a ConfigMap, allows.
func maxReplicasPolicy() *admissionregistrationv1.ValidatingAdmissionPolicy {
	return &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "max-replicas"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			ParamKind:     &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
						Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
					},
				}},
			},
			MatchConditions: []admissionregistrationv1.MatchCondition{{
				Name: "not-exempt", Expression: `!has(object.metadata.labels) || !('exempt' in object.metadata.labels)`,
			}},
			Variables: []admissionregistrationv1.Variable{{Name: "max", Expression: "int(params.data.maxReplicas)"}},
			Validations: []admissionregistrationv1.Validation{{
				Expression:        "object.spec.replicas <= variables.max",
				MessageExpression: "'replicas must be no greater than ' + string(variables.max)",
				Reason:            ptr.To(metav1.StatusReasonInvalid),
			}},
			AuditAnnotations: []admissionregistrationv1.AuditAnnotation{{
				Key: "replicas", ValueExpression: "string(object.spec.replicas)",
			}},
		},
	}
}

// binding binds max-replicas with actions in the namespaces labelled
// policy=<label>, its parameter the ConfigMap "limits" of the request's
// namespace.
func binding(name, label string, actions ...admissionregistrationv1.ValidationAction) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName: "max-replicas",
			ParamRef: &admissionregistrationv1.ParamRef{
				Name: "limits", ParameterNotFoundAction: ptr.To(admissionregistrationv1.DenyAction),
			},
			MatchResources: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"policy": label}},
			},
			ValidationActions: actions,
		},
	}
}

func TestValidatingAdmissionPolicy(t *testing.T) {
	t.Parallel()
	env := miniapitest.Start(t)
	cs, warns := clientFor(t, env)
	ctx := t.Context()
	for _, ns := range []string{"deny", "warn"} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name: ns, Labels: map[string]string{"policy": ns}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "limits"},
			Data: map[string]string{"maxReplicas": "3"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	vap := cs.AdmissionregistrationV1()
	if _, err := vap.ValidatingAdmissionPolicies().Create(ctx, maxReplicasPolicy(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, b := range []*admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		binding("max-replicas-deny", "deny", admissionregistrationv1.Deny),
		binding("max-replicas-warn", "warn", admissionregistrationv1.Warn, admissionregistrationv1.Audit),
	} {
		if _, err := vap.ValidatingAdmissionPolicyBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// The policy is in effect for the writes that follow it: they wait
	// for the plugin to have it (see policySettle), but only so long, so
	// a heavily loaded machine may admit one.
	const want = `deployments.apps "big" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-deny' denied request: replicas must be no greater than 3`
	var err error
	eventually(t, func() error {
		_, err = cs.AppsV1().Deployments("deny").Create(ctx, deployment("big", 5), metav1.CreateOptions{})
		if err == nil {
			_ = cs.AppsV1().Deployments("deny").Delete(ctx, "big", metav1.DeleteOptions{})
			return fmt.Errorf("a Deployment over the limit was admitted")
		}
		return nil
	})
	if !apierrors.IsInvalid(err) || err.Error() != want {
		t.Fatalf("a Deployment over the limit: got %v (%T), want 422 %s", err, err, want)
	}
	// kube-apiserver's Status carries the policy's message as a cause.
	st := err.(apierrors.APIStatus).Status()
	if d := st.Details; d == nil || d.Kind != "deployments" || d.Group != "apps" || len(d.Causes) != 1 ||
		d.Causes[0].Message != strings.TrimPrefix(want, `deployments.apps "big" is forbidden: `) {
		t.Errorf("details: got %+v", st.Details)
	}
	if _, err := cs.AppsV1().Deployments("deny").Create(ctx, deployment("small", 3), metav1.CreateOptions{}); err != nil {
		t.Fatalf("a Deployment within the limit: %v", err)
	}
	exempt := deployment("exempt", 5)
	exempt.Labels = map[string]string{"exempt": "yes"}
	if _, err := cs.AppsV1().Deployments("deny").Create(ctx, exempt, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a Deployment the match condition excludes: %v", err)
	}
	warns.take()
	if _, err := cs.AppsV1().Deployments("warn").Create(ctx, deployment("big", 5), metav1.CreateOptions{}); err != nil {
		t.Fatalf("a Deployment over the limit where the binding warns: %v", err)
	}
	wantWarn := "Validation failed for ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-warn': replicas must be no greater than 3"
	if got := warns.take(); !slices.Contains(got, wantWarn) {
		t.Errorf("warnings: got %q, want %q", got, wantWarn)
	}

	// A parameter's change takes effect once the plugin's informer has
	// it, as in kube-apiserver.
	if _, err := cs.CoreV1().ConfigMaps("deny").Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "limits"},
		Data: map[string]string{"maxReplicas": "10"}}, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() error {
		_, err := cs.AppsV1().Deployments("deny").Create(ctx, deployment("big-2", 5), metav1.CreateOptions{})
		return err
	})

	// Without its parameter, the binding denies (parameterNotFoundAction).
	if err := cs.CoreV1().ConfigMaps("deny").Delete(ctx, "limits", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() error {
		_, err := cs.AppsV1().Deployments("deny").Create(ctx, deployment("small-2", 1), metav1.CreateOptions{})
		if want := "failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"; err == nil || !strings.Contains(err.Error(), want) {
			return fmt.Errorf("got %v, want an error with %q", err, want)
		}
		return nil
	})
}

// eventually retries f until it succeeds, failing t after 10s.
func eventually(t *testing.T, f func() error) {
	t.Helper()
	// A bound for what must happen, not a measurement: kube's mutating
	// policy plugin rereads the served schemas every five seconds, and a
	// loaded CI machine under -race can miss two of those.
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestValidatingAdmissionPolicyTypeChecking: kube's status controller,
// run in process, records the type errors of a policy's expressions
// against the kinds it matches.
func TestValidatingAdmissionPolicyTypeChecking(t *testing.T) {
	t.Parallel()
	// kube-controller-manager's controller, which environments do not
	// run unless asked, as envtest runs none.
	env := miniapitest.Start(t, miniapitest.WithControllers(append(miniapitest.DefaultControllers, controllers.ValidatingAdmissionPolicyStatusControllerName)...))
	cs, _ := clientFor(t, env)
	ctx := t.Context()
	policy := maxReplicasPolicy()
	policy.Spec.Validations = append(policy.Spec.Validations, admissionregistrationv1.Validation{Expression: "object.spec.replicas > '1'"})
	if _, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() error {
		got, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, policy.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		st := got.Status
		if st.ObservedGeneration != got.Generation || st.TypeChecking == nil {
			return fmt.Errorf("status not yet reconciled: %+v", st)
		}
		w := st.TypeChecking.ExpressionWarnings
		if len(w) != 1 || w[0].FieldRef != "spec.validations[1].expression" ||
			!strings.Contains(w[0].Warning, "found no matching overload for '_>_' applied to '(int, string)'") {
			t.Fatalf("type checking: got %+v, want one warning on spec.validations[1].expression", w)
		}
		return nil
	})
}
