package miniapitest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/miniapi/miniapi/miniapitest"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// appCRD is a namespaced example.com/v1 App whose spec sizes a workload.
const appCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: apps.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: apps, singular: app, kind: App, listKind: AppList}
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
              size: {type: integer, minimum: 0}
`

// newApp is an empty App for the client to fill.
func newApp() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "App"})
	return u
}

// appReconciler is the shape of most operators: for every App, a
// ServiceAccount, a Deployment running as it and a Service in front of
// the Deployment, all owned by the App, the Deployment's replicas
// following spec.size.
type appReconciler struct {
	client client.Client
	scheme *runtime.Scheme
}

func (r *appReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	w := newApp()
	if err := r.client.Get(ctx, req.NamespacedName, w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	size, _, _ := unstructured.NestedInt64(w.Object, "spec", "size")
	name, ns := w.GetName(), w.GetNamespace()
	labels := map[string]string{"app": name}
	own := func(obj client.Object) error { return controllerutil.SetControllerReference(w, obj, r.scheme) }

	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.client, sa, func() error { return own(sa) }); err != nil {
		return ctrl.Result{}, err
	}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.client, dep, func() error {
		replicas := int32(size)
		dep.Spec.Replicas = &replicas
		dep.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
		dep.Spec.Template.Labels = labels
		dep.Spec.Template.Spec.ServiceAccountName = name
		if len(dep.Spec.Template.Spec.Containers) == 0 {
			dep.Spec.Template.Spec.Containers = []corev1.Container{{Name: "app", Image: "nginx:1.27"}}
		}
		return own(dep)
	}); err != nil {
		return ctrl.Result{}, err
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.client, svc, func() error {
		svc.Spec.Selector = labels
		svc.Spec.Ports = []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}
		return own(svc)
	}); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

// TestControllerRuntimeBuiltinKinds runs a manager whose reconciler turns
// a custom resource into a ServiceAccount, a Deployment and a Service,
// through controller-runtime's client (protobuf for the built-in kinds)
// and its cache, and checks what kube's rules made of them: defaults, an
// allocated ClusterIP, owner references, generation moving with the spec.
func TestControllerRuntimeBuiltinKinds(t *testing.T) {
	t.Parallel()
	env := miniapitest.Start(t, miniapitest.WithCRDObjects(appCRD), miniapitest.WithNamespaces("apps"))

	mgr, scheme := newManager(t, env)
	r := &appReconciler{client: mgr.GetClient(), scheme: scheme}
	if err := ctrl.NewControllerManagedBy(mgr).For(newApp()).
		Owns(&appsv1.Deployment{}).Owns(&corev1.Service{}).Owns(&corev1.ServiceAccount{}).
		Named("app").Complete(r); err != nil {
		t.Fatal(err)
	}
	ctx := startManager(t, mgr)

	c := mgr.GetClient()
	w := newApp()
	w.SetName("shop")
	w.SetNamespace("apps")
	w.Object["spec"] = map[string]any{"size": int64(2)}
	if err := c.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKey{Namespace: "apps", Name: "shop"}
	eventually(t, "the Deployment, Service and ServiceAccount exist as kube's rules made them", func() error {
		var dep appsv1.Deployment
		if err := c.Get(ctx, key, &dep); err != nil {
			return err
		}
		switch {
		case dep.Spec.Replicas == nil || *dep.Spec.Replicas != 2:
			return fmt.Errorf("replicas %v", dep.Spec.Replicas)
		case dep.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || dep.Spec.RevisionHistoryLimit == nil || *dep.Spec.RevisionHistoryLimit != 10:
			return fmt.Errorf("deployment not defaulted: %+v", dep.Spec)
		case dep.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways || dep.Spec.Template.Spec.Containers[0].ImagePullPolicy != corev1.PullIfNotPresent:
			return fmt.Errorf("pod template not defaulted: %+v", dep.Spec.Template.Spec)
		case metav1.GetControllerOf(&dep) == nil || metav1.GetControllerOf(&dep).Name != "shop":
			return fmt.Errorf("deployment owner %+v", dep.OwnerReferences)
		}
		var svc corev1.Service
		if err := c.Get(ctx, key, &svc); err != nil {
			return err
		}
		if svc.Spec.ClusterIP == "" || svc.Spec.Type != corev1.ServiceTypeClusterIP || svc.Spec.Ports[0].Protocol != corev1.ProtocolTCP {
			return fmt.Errorf("service not allocated or defaulted: %+v", svc.Spec)
		}
		var sa corev1.ServiceAccount
		return c.Get(ctx, key, &sa)
	})

	if err := retryOnConflict(func() error {
		if err := c.Get(ctx, key, w); err != nil {
			return err
		}
		w.Object["spec"] = map[string]any{"size": int64(5)}
		return c.Update(ctx, w)
	}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Deployment follows the new size, its generation with it", func() error {
		var dep appsv1.Deployment
		if err := c.Get(ctx, key, &dep); err != nil {
			return err
		}
		if *dep.Spec.Replicas != 5 || dep.Generation != 2 {
			return fmt.Errorf("replicas %d, generation %d", *dep.Spec.Replicas, dep.Generation)
		}
		return nil
	})
}
