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
	policyv1 "k8s.io/api/policy/v1"
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

	// The Scale's replicas are at spec.replicas, as the Deployment's are:
	// only the kind tells which one the policy saw.
	policy(t, ctx, cs, "scale-kind", admissionregistrationv1.Update, "deployments/scale", "object.kind == 'Scale' && object.spec.replicas <= 5")
	policy(t, ctx, cs, "main-kind", admissionregistrationv1.Update, "deployments", "object.kind == 'Deployment'")

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
	refusedEventually(t, ctx, "scale-kind refused it", func() error { return scale(10) })
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

// policy writes a ValidatingAdmissionPolicy named name, bound with Deny,
// that checks expr on op of apps, core or policy resource (resource may
// name a subresource, "pods/exec").
func policy(t *testing.T, ctx context.Context, cs kubernetes.Interface, name string, op admissionregistrationv1.OperationType, resource, expr string) {
	t.Helper()
	_, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{op},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{"", "apps", "policy"}, APIVersions: []string{"v1"}, Resources: []string{resource}},
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

// refusedEventually retries do until it fails with want in its error
// (a policy compiles within a second of being written), failing t if ctx
// ends first.
func refusedEventually(t *testing.T, ctx context.Context, want string, do func() error) {
	t.Helper()
	for {
		err := do()
		if err != nil && strings.Contains(err.Error(), want) {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("last answer %v; want a refusal with %q", err, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A pod's exec is admitted as a CONNECT of pods/exec carrying its
// PodExecOptions, and an eviction as a CREATE of pods/eviction carrying
// the Eviction, as kube-apiserver admits them.
func TestConnectAndEvictionAreAdmitted(t *testing.T) {
	env := miniapitest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs := kubernetes.NewForConfigOrDie(env.Config)
	policy(t, ctx, cs, "no-exec", admissionregistrationv1.Connect, "pods/exec",
		"object.kind == 'PodExecOptions' && object.container != 'c'")
	policy(t, ctx, cs, "no-eviction", admissionregistrationv1.Create, "pods/eviction",
		"object.kind == 'Eviction' && object.metadata.name != 'p'")
	_, err := cs.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	refusedEventually(t, ctx, "no-exec refused it", func() error {
		return cs.CoreV1().RESTClient().Post().Namespace("default").Resource("pods").Name("p").SubResource("exec").
			Param("container", "c").Param("command", "ls").Param("stdout", "true").Do(ctx).Error()
	})
	refusedEventually(t, ctx, "no-eviction refused it", func() error {
		return cs.CoreV1().Pods("default").EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}})
	})
	if _, err := cs.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{}); err != nil {
		t.Fatalf("the refused eviction removed the pod: %v", err)
	}
}
