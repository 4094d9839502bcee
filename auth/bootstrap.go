package auth

import (
	"context"
	"errors"
	"fmt"
	"sync"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	rbacinformers "k8s.io/client-go/informers/rbac/v1"
	rbacv1client "k8s.io/client-go/kubernetes/typed/rbac/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/component-helpers/auth/rbac/reconciliation"
	"k8s.io/kubernetes/pkg/controller/clusterroleaggregation"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac/bootstrappolicy"
)

// bootstrapWorkers is how many bootstrap objects are reconciled at once:
// one at a time, as kube-apiserver does, costs a round trip to etcd each
// (about 130 objects on a new data directory).
const bootstrapWorkers = 16

// PolicyClients read and write the objects of the bootstrap policy.
// kube's reconciliation package has implementations over a clientset
// (reconciliation.ClusterRoleModifier and the others).
type PolicyClients struct {
	ClusterRoles        reconciliation.RuleOwnerModifier
	ClusterRoleBindings reconciliation.RoleBindingModifier
	Roles               reconciliation.RuleOwnerModifier
	RoleBindings        reconciliation.RoleBindingModifier
}

// EnsureBootstrapPolicy creates or reconciles the roles and bindings
// kube-apiserver's rbac/bootstrap-roles post-start hook does, the same
// objects (kube's bootstrappolicy) through kube's reconciliation: missing
// ones are created, ones that lack a bootstrap rule or subject get it
// back unless annotated rbac.authorization.kubernetes.io/autoupdate:
// "false".
func EnsureBootstrapPolicy(ctx context.Context, c PolicyClients) error {
	var tasks []func() error
	for _, r := range append(bootstrappolicy.ClusterRoles(), bootstrappolicy.ControllerRoles()...) {
		tasks = append(tasks, func() error {
			o := &reconciliation.ReconcileRoleOptions{
				Role:    reconciliation.ClusterRoleRuleOwner{ClusterRole: &r},
				Client:  c.ClusterRoles,
				Confirm: true,
			}
			_, err := o.Run()
			return wrap(err, "clusterrole", "", r.Name)
		})
	}
	for _, b := range append(bootstrappolicy.ClusterRoleBindings(), bootstrappolicy.ControllerRoleBindings()...) {
		tasks = append(tasks, func() error {
			o := &reconciliation.ReconcileRoleBindingOptions{
				RoleBinding: reconciliation.ClusterRoleBindingAdapter{ClusterRoleBinding: &b},
				Client:      c.ClusterRoleBindings,
				Confirm:     true,
			}
			_, err := o.Run()
			return wrap(err, "clusterrolebinding", "", b.Name)
		})
	}
	for _, roles := range bootstrappolicy.NamespaceRoles() {
		for _, r := range roles {
			tasks = append(tasks, func() error {
				o := &reconciliation.ReconcileRoleOptions{
					Role:    reconciliation.RoleRuleOwner{Role: &r},
					Client:  c.Roles,
					Confirm: true,
				}
				_, err := o.Run()
				return wrap(err, "role", r.Namespace, r.Name)
			})
		}
	}
	for _, bindings := range bootstrappolicy.NamespaceRoleBindings() {
		for _, b := range bindings {
			tasks = append(tasks, func() error {
				o := &reconciliation.ReconcileRoleBindingOptions{
					RoleBinding: reconciliation.RoleBindingAdapter{RoleBinding: &b},
					Client:      c.RoleBindings,
					Confirm:     true,
				}
				_, err := o.Run()
				return wrap(err, "rolebinding", b.Namespace, b.Name)
			})
		}
	}
	return runAll(ctx, tasks)
}

// runAll runs tasks on bootstrapWorkers goroutines, each retried on a
// conflict as kube's hook retries, and returns every failure.
func runAll(ctx context.Context, tasks []func() error) error {
	work := make(chan func() error)
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for range min(bootstrapWorkers, len(tasks)) {
		wg.Go(func() {
			for t := range work {
				err := retry.OnError(retry.DefaultBackoff, func(err error) bool {
					return apierrors.IsConflict(err) || apierrors.IsServiceUnavailable(err)
				}, t)
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
feed:
	for _, t := range tasks {
		select {
		case work <- t:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		errs = append(errs, fmt.Errorf("auth: bootstrap policy: %w", err))
	}
	return errors.Join(errs...)
}

func wrap(err error, kind, ns, name string) error {
	if err == nil {
		return nil
	}
	if ns != "" {
		name = ns + "/" + name
	}
	return fmt.Errorf("auth: reconcile %s.%s %s: %w", kind, rbacv1.GroupName, name, err)
}

// NewClusterRoleAggregation returns kube-controller-manager's
// clusterrole-aggregation controller, which fills the rules of roles with
// an aggregationRule (admin, edit, view) from the roles it selects. Start
// the informers after calling it, then Run it.
func NewClusterRoleAggregation(clusterRoles rbacinformers.ClusterRoleInformer, client rbacv1client.ClusterRolesGetter) *clusterroleaggregation.ClusterRoleAggregationController {
	return clusterroleaggregation.NewClusterRoleAggregation(clusterRoles, client)
}
