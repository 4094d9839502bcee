package admission_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/miniapi/miniapi/miniapitest"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// restrictedPod passes PodSecurity's restricted level.
func restrictedPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			PriorityClassName: "high",
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{Name: "app", Image: "nginx", SecurityContext: &corev1.SecurityContext{
				AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}}},
		},
	}
}

// TestDefaultChain sends what kube-apiserver 1.37.1's default chain
// was seen to change or refuse, and expects its answers.
func TestDefaultChain(t *testing.T) {
	t.Parallel()
	// The binary's defaults: every controller (the default
	// ServiceAccount) but the quota controller, whose status the test
	// writes, and the whole chain, ServiceAccount included.
	env := miniapitest.Start(t, miniapitest.WithControllers("*", "-resourcequota-controller"), miniapitest.WithAdmissionPlugins(nil, nil))
	cs, _ := clientFor(t, env)
	ctx := t.Context()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "chain",
		Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}}}, metav1.CreateOptions{}))
	must(cs.SchedulingV1().PriorityClasses().Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000}, metav1.CreateOptions{}))
	must(cs.CoreV1().LimitRanges("chain").Create(ctx, &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "defaults"},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer,
			Default:        corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
			DefaultRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
		}}}}, metav1.CreateOptions{}))
	must(cs.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "standard",
		Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}}, Provisioner: "example.com/none"}, metav1.CreateOptions{}))
	must(cs.NetworkingV1().IngressClasses().Create(ctx, &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx",
		Annotations: map[string]string{"ingressclass.kubernetes.io/is-default-class": "true"}},
		Spec: networkingv1.IngressClassSpec{Controller: "example.com/ingress"}}, metav1.CreateOptions{}))

	// A privileged container is refused before admission, as by
	// kube-apiserver without --allow-privileged (its default; envtest
	// and the reference stack pass --allow-privileged=true).
	priv := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "priv"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "app", Image: "nginx", SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}}}}
	_, err := cs.CoreV1().Pods("chain").Create(ctx, priv, metav1.CreateOptions{})
	if want := "spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy"; !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
		t.Errorf("a privileged pod: got %v, want 422 %s", err, want)
	}
	// PodSecurity refuses a pod short of restricted where the namespace
	// enforces it.
	plain := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "plain"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "plain", Image: "nginx"}}}}
	_, err = cs.CoreV1().Pods("chain").Create(ctx, plain, metav1.CreateOptions{})
	const wantPSA = `pods "plain" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "plain" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "plain" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "plain" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "plain" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`
	if !apierrors.IsForbidden(err) || err.Error() != wantPSA {
		t.Errorf("a pod short of restricted: got %v, want 403 %s", err, wantPSA)
	}

	// The ServiceAccount plugin needs the namespace's default service
	// account, which kube's controller makes.
	var pod *corev1.Pod
	eventually(t, func() error {
		pod, err = cs.CoreV1().Pods("chain").Create(ctx, restrictedPod("app"), metav1.CreateOptions{})
		return err
	})
	s := pod.Spec
	if s.ServiceAccountName != "default" {
		t.Errorf("service account: %q", s.ServiceAccountName)
	}
	var projected bool
	for _, v := range s.Volumes {
		if strings.HasPrefix(v.Name, "kube-api-access-") && v.Projected != nil {
			projected = true
		}
	}
	if !projected || len(s.Containers[0].VolumeMounts) != 1 || s.Containers[0].VolumeMounts[0].MountPath != "/var/run/secrets/kubernetes.io/serviceaccount" {
		t.Errorf("token volume: volumes %+v, mounts %+v", s.Volumes, s.Containers[0].VolumeMounts)
	}
	if s.Priority == nil || *s.Priority != 1000 {
		t.Errorf("priority: %v", s.Priority)
	}
	if len(s.Tolerations) != 2 || s.Tolerations[0].Key != "node.kubernetes.io/not-ready" || s.Tolerations[1].Key != "node.kubernetes.io/unreachable" ||
		ptr.Deref(s.Tolerations[0].TolerationSeconds, 0) != 300 || ptr.Deref(s.Tolerations[1].TolerationSeconds, 0) != 300 ||
		s.Tolerations[0].Effect != corev1.TaintEffectNoExecute || s.Tolerations[0].Operator != corev1.TolerationOpExists {
		t.Errorf("DefaultTolerationSeconds' tolerations: %+v", s.Tolerations)
	}
	r := s.Containers[0].Resources
	if r.Requests.Cpu().String() != "100m" || r.Requests.Memory().String() != "64Mi" || r.Limits.Cpu().String() != "200m" || r.Limits.Memory().String() != "128Mi" {
		t.Errorf("LimitRanger's defaults: %+v", r)
	}
	if got, want := pod.Annotations["kubernetes.io/limit-ranger"], "LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app"; got != want {
		t.Errorf("LimitRanger's annotation: got %q, want %q", got, want)
	}

	// ResourceQuota refuses over quota, by the quota's status (no quota
	// controller runs: the test writes the status as it would).
	q, err := cs.CoreV1().ResourceQuotas("chain").Create(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "pods"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1")}}}, metav1.CreateOptions{})
	must(q, err)
	q.Status = corev1.ResourceQuotaStatus{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1")},
		Used: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1")}}
	must(cs.CoreV1().ResourceQuotas("chain").UpdateStatus(ctx, q, metav1.UpdateOptions{}))
	const wantQuota = `pods "app3" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=1, limited: pods=1`
	eventually(t, func() error {
		_, err := cs.CoreV1().Pods("chain").Create(ctx, restrictedPod("app3"), metav1.CreateOptions{})
		if !apierrors.IsForbidden(err) || err.Error() != wantQuota {
			return fmt.Errorf("over quota: got %v, want 403 %s", err, wantQuota)
		}
		return nil
	})

	// The default StorageClass and IngressClass.
	pvc, err := cs.CoreV1().PersistentVolumeClaims("default").Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}, metav1.CreateOptions{})
	must(pvc, err)
	if got := ptr.Deref(pvc.Spec.StorageClassName, ""); got != "standard" {
		t.Errorf("PVC's storage class: %q", got)
	}
	ing, err := cs.NetworkingV1().Ingresses("default").Create(ctx, &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: networkingv1.IngressSpec{DefaultBackend: &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
			Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}, metav1.CreateOptions{})
	must(ing, err)
	if got := ptr.Deref(ing.Spec.IngressClassName, ""); got != "nginx" {
		t.Errorf("Ingress's class: %q", got)
	}
}
