package builtin

import (
	"context"

	"github.com/miniapi/miniapi/api"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kapihelper "k8s.io/kubernetes/pkg/apis/core/helper"
	rbacinternal "k8s.io/kubernetes/pkg/apis/rbac"
	rbacv1helpers "k8s.io/kubernetes/pkg/apis/rbac/v1"
	rbacregistry "k8s.io/kubernetes/pkg/registry/rbac"
	"k8s.io/kubernetes/pkg/registry/rbac/clusterrole"
	"k8s.io/kubernetes/pkg/registry/rbac/clusterrolebinding"
	"k8s.io/kubernetes/pkg/registry/rbac/role"
	"k8s.io/kubernetes/pkg/registry/rbac/rolebinding"
	rbacregistryvalidation "k8s.io/kubernetes/pkg/registry/rbac/validation"
)

// rbacResources are rbac.authorization.k8s.io/v1's resources, with
// kube's escalation checks when auth has a rule resolver: a user may
// write a role only with rules they hold (or the escalate verb), and a
// binding only to a role whose rules they hold (or the bind verb).
func rbacResources(auth *Auth) []*resource {
	rbac := func(r resource) *resource {
		r.group, r.version, r.auth = "rbac.authorization.k8s.io", "v1", auth
		return &r
	}
	return []*resource{
		rbac(resource{kind: "ClusterRoleBinding", plural: "clusterrolebindings", strategy: clusterrolebinding.Strategy}),
		rbac(resource{kind: "ClusterRole", plural: "clusterroles", strategy: clusterrole.Strategy, defaultTable: true}),
		rbac(resource{kind: "RoleBinding", plural: "rolebindings", namespaced: true, strategy: rolebinding.Strategy}),
		rbac(resource{kind: "Role", plural: "roles", namespaced: true, strategy: role.Strategy, defaultTable: true}),
	}
}

// rbacKind is an RBAC kind whose writes pass kube's escalation checks
// first, as kube's policybased storages (pkg/registry/rbac/*/policybased)
// check them before the strategy runs.
type rbacKind struct {
	*kind
	auth *Auth
}

// BeforeCreate checks the new object for escalation, then runs the kind.
func (k rbacKind) BeforeCreate(ctx context.Context, obj *api.Object) error {
	if err := k.checkEscalation(ctx, obj, nil); err != nil {
		return err
	}
	return k.kind.BeforeCreate(ctx, obj)
}

// BeforeUpdate checks the updated object for escalation, unless only
// the fields the garbage collector changes changed, then runs the kind.
func (k rbacKind) BeforeUpdate(ctx context.Context, obj, old *api.Object, subresource string) error {
	if err := k.checkEscalation(ctx, obj, old); err != nil {
		return err
	}
	return k.kind.BeforeUpdate(ctx, obj, old, subresource)
}

// checkEscalation applies kube's rules to a write of obj (an update when
// old is set) by the user in ctx.
func (k rbacKind) checkEscalation(ctx context.Context, obj, old *api.Object) error {
	verb := "create"
	if old != nil {
		verb = "update"
	}
	kctx := k.requestContext(ctx, verb, obj.Metadata.Namespace, obj.Metadata.Name, "")
	if rbacregistry.EscalationAllowed(kctx) {
		return nil
	}
	in, err := k.toInternal(obj)
	if err != nil {
		return err
	}
	if old != nil {
		prev, err := k.toInternal(old)
		if err != nil {
			return err
		}
		if rbacregistry.IsOnlyMutatingGCFields(in, prev, kapihelper.Semantic) {
			return nil
		}
	}
	a, resolver := k.auth.Authorizer, k.auth.RuleResolverRBAC
	gr := schema.GroupResource{Group: rbacv1.GroupName, Resource: k.r.plural}
	forbidden := func(err error) error { return statusError(apierrors.NewForbidden(gr, obj.Metadata.Name, err)) }
	switch o := in.(type) {
	case *rbacinternal.Role:
		if rbacregistry.RoleEscalationAuthorized(kctx, a) {
			return nil
		}
		if err := rbacregistryvalidation.ConfirmNoEscalationInternal(kctx, resolver, o.Rules); err != nil {
			return forbidden(err)
		}
	case *rbacinternal.ClusterRole:
		if rbacregistry.RoleEscalationAuthorized(kctx, a) {
			return nil
		}
		if err := rbacregistryvalidation.ConfirmNoEscalationInternal(kctx, resolver, o.Rules); err != nil {
			return forbidden(err)
		}
	case *rbacinternal.RoleBinding:
		return k.checkBinding(kctx, o.RoleRef, obj.Metadata.Namespace, forbidden)
	case *rbacinternal.ClusterRoleBinding:
		return k.checkBinding(kctx, o.RoleRef, "", forbidden)
	}
	return nil
}

// checkBinding lets a binding to ref through when the user may bind it
// or holds every rule of the role it names.
func (k rbacKind) checkBinding(ctx context.Context, ref rbacinternal.RoleRef, ns string, forbidden func(error) error) error {
	if rbacregistry.BindingAuthorized(ctx, ref, ns, k.auth.Authorizer) {
		return nil
	}
	var v1Ref rbacv1.RoleRef
	if err := rbacv1helpers.Convert_rbac_RoleRef_To_v1_RoleRef(&ref, &v1Ref, nil); err != nil {
		return err
	}
	rules, err := k.auth.RuleResolverRBAC.GetRoleReferenceRules(ctx, v1Ref, ns)
	if err != nil {
		return statusError(err)
	}
	if err := rbacregistryvalidation.ConfirmNoEscalation(ctx, k.auth.RuleResolverRBAC, rules); err != nil {
		return forbidden(err)
	}
	return nil
}
