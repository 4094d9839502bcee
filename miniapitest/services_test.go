package miniapitest_test

import (
	"testing"

	"github.com/miniapi/miniapi/miniapitest"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// TestServiceToExternalName: a NodePort Service patched to ExternalName
// loses what its type no longer needs, as kube-apiserver 1.37.1 answers
// the same patch: its cluster IPs, IP families, node ports and traffic
// policies, internalTrafficPolicy included (which kube's service storage
// drops when it reads the Service back), in the answer, a get and a
// list.
func TestServiceToExternalName(t *testing.T) {
	t.Parallel()
	env := miniapitest.Start(t, miniapitest.WithNamespaces("svc"))
	cs := kubernetes.NewForConfigOrDie(env.Config)
	ctx := t.Context()
	svcs := cs.CoreV1().Services("svc")
	np := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "a"},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80}}},
	}
	created, err := svcs.Create(ctx, np, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.Spec.InternalTrafficPolicy == nil || created.Spec.ClusterIP == "" || created.Spec.Ports[0].NodePort == 0 {
		t.Fatalf("NodePort Service created as %+v", created.Spec)
	}
	patched, err := svcs.Patch(ctx, "a", types.MergePatchType, []byte(`{"spec":{"type":"ExternalName","externalName":"x.example.com"}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := svcs.Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	list, err := svcs.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Fatalf("%d services listed", len(list.Items))
	}
	for what, s := range map[string]*corev1.Service{"patch": patched, "get": got, "list": &list.Items[0]} {
		spec := s.Spec
		if spec.InternalTrafficPolicy != nil || spec.ExternalTrafficPolicy != "" || spec.ClusterIP != "" || len(spec.ClusterIPs) != 0 ||
			len(spec.IPFamilies) != 0 || spec.IPFamilyPolicy != nil || spec.Ports[0].NodePort != 0 {
			t.Errorf("%s: ExternalName Service kept %+v", what, spec)
		}
	}
}

// TestServiceCreatedByUpdate: client-go's Update of a Service that does
// not exist creates it, as kube-apiserver's service strategy allows,
// with a cluster IP allocated as for a create; a ConfigMap's is NotFound.
func TestServiceCreatedByUpdate(t *testing.T) {
	t.Parallel()
	env := miniapitest.Start(t, miniapitest.WithNamespaces("put"))
	cs := kubernetes.NewForConfigOrDie(env.Config)
	ctx := t.Context()
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	created, err := cs.CoreV1().Services("put").Update(ctx, svc, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.Spec.ClusterIP == "" || created.UID == "" {
		t.Errorf("Service created by an update: %+v", created)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}
	if _, err := cs.CoreV1().ConfigMaps("put").Update(ctx, cm, metav1.UpdateOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("update of a missing ConfigMap: %v, want NotFound", err)
	}
}
