package admission_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/miniapi/miniapi/miniapitest"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// A write through /scale is admitted as kube-apiserver admits it: as an
// UPDATE of deployments/scale carrying a Scale, which a policy on the
// subresource sees and one on the main resource does not.
func TestScaleIsAdmittedAsItsSubresource(t *testing.T) {
	env := miniapitest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs := kubernetes.NewForConfigOrDie(env.Config)

	policy := func(name, resource, expr string) {
		t.Helper()
		_, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				FailurePolicy: ptr.To(admissionregistrationv1.Fail),
				MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
						Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{resource}},
					},
				}}},
				Validations: []admissionregistrationv1.Validation{{Expression: expr, Message: name + " refused it"}},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = cs.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
				PolicyName: name, ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	// The Scale's replicas are at spec.replicas, as the Deployment's are:
	// only the kind tells which one the policy saw.
	policy("scale-kind", "deployments/scale", "object.kind == 'Scale' && object.spec.replicas <= 5")
	policy("main-kind", "deployments", "object.kind == 'Deployment'")

	labels := map[string]string{"app": "a"}
	_, err := cs.AppsV1().Deployments("default").Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "d"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	scale := func(n int32) error {
		_, err := cs.AppsV1().Deployments("default").UpdateScale(ctx, "d", &autoscalingv1.Scale{
			ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "default"},
			Spec:       autoscalingv1.ScaleSpec{Replicas: n},
		}, metav1.UpdateOptions{})
		return err
	}
	// The policies take effect once their informers and compilation
	// catch up: wait for the refusal, bounded by ctx.
	for {
		err = scale(10)
		if err != nil || ctx.Err() != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err == nil || !strings.Contains(err.Error(), "scale-kind refused it") {
		t.Fatalf("scale to 10: %v, want the subresource's policy to refuse it", err)
	}
	if err := scale(3); err != nil {
		t.Fatalf("scale to 3: %v; the main resource's policy must not see a Scale", err)
	}
	d, err := cs.AppsV1().Deployments("default").Get(ctx, "d", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *d.Spec.Replicas != 3 {
		t.Fatalf("replicas = %d, want 3", *d.Spec.Replicas)
	}
}
