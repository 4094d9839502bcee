package server

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/auth"
	"github.com/miniapi/miniapi/registry"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/component-helpers/auth/rbac/reconciliation"
)

// bootstrapManager is the field manager of the bootstrap policy's
// objects, as kube-apiserver records its own writes.
const bootstrapManager = "kube-apiserver"

// policyClients reconcile the bootstrap policy through the registry's
// stores in process: the same strategies and storage as a request, without
// encoding each of the ~130 objects to protobuf and back through the
// handler chain (which doubled the cost of a first start).
func (s *Server) policyClients(ctx context.Context) auth.PolicyClients {
	// The writes are the server's own, as kube-apiserver's loopback
	// user: RBAC's escalation checks let system:masters through.
	ctx = request.WithUser(ctx, &user.DefaultInfo{Name: user.APIServerUser, Groups: []string{user.SystemPrivilegedGroup, user.AllAuthenticated}})
	r := rbacStores{ctx: ctx, reg: s.reg}
	return auth.PolicyClients{
		ClusterRoles:        clusterRoles{r},
		ClusterRoleBindings: clusterRoleBindings{r},
		Roles:               roles{r},
		RoleBindings:        roleBindings{r},
	}
}

// rbacStores reads and writes rbac.authorization.k8s.io/v1 objects in
// the registry as Go values.
type rbacStores struct {
	ctx context.Context
	reg *registry.Registry
}

func (r rbacStores) store(resource string) (*registry.Store, error) {
	res, ok := r.reg.Snapshot().Lookup(rbacv1.GroupName, "v1", resource)
	if !ok {
		return nil, errors.New("server: " + resource + " are not served")
	}
	return res.Store, nil
}

func (r rbacStores) get(resource, ns, name string, out any) error {
	st, err := r.store(resource)
	if err != nil {
		return err
	}
	obj, err := st.Get(r.ctx, ns, name, "")
	if err != nil {
		return api.ToKubeError(err)
	}
	return json.Unmarshal(obj.Data, out)
}

func (r rbacStores) create(resource, kind, ns string, in, out any) error {
	st, err := r.store(resource)
	if err != nil {
		return err
	}
	data, err := encodeRBAC(kind, in)
	if err != nil {
		return err
	}
	obj, err := st.Create(r.ctx, ns, data, registry.CreateOptions{FieldManager: bootstrapManager})
	if err != nil {
		return api.ToKubeError(err)
	}
	return json.Unmarshal(obj.Data, out)
}

func (r rbacStores) update(resource, kind, ns, name string, in, out any) error {
	st, err := r.store(resource)
	if err != nil {
		return err
	}
	data, err := encodeRBAC(kind, in)
	if err != nil {
		return err
	}
	obj, err := st.Update(r.ctx, ns, name, data, registry.UpdateOptions{FieldManager: bootstrapManager})
	if err != nil {
		return api.ToKubeError(err)
	}
	return json.Unmarshal(obj.Data, out)
}

func (r rbacStores) delete(resource, ns, name string, uid types.UID) error {
	st, err := r.store(resource)
	if err != nil {
		return err
	}
	u := string(uid)
	_, _, err = st.Delete(r.ctx, ns, name, registry.DeleteOptions{Preconditions: &api.Preconditions{UID: &u}})
	return api.ToKubeError(err)
}

// encodeRBAC encodes an rbac/v1 object with its apiVersion and kind.
func encodeRBAC(kind string, obj any) ([]byte, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	m["apiVersion"], m["kind"] = rbacv1.SchemeGroupVersion.String(), kind
	return json.Marshal(m)
}

type clusterRoles struct{ rbacStores }

func (c clusterRoles) Get(_, name string) (reconciliation.RuleOwner, error) {
	out := &rbacv1.ClusterRole{}
	return reconciliation.ClusterRoleRuleOwner{ClusterRole: out}, c.get("clusterroles", "", name, out)
}

func (c clusterRoles) Create(in reconciliation.RuleOwner) (reconciliation.RuleOwner, error) {
	out := &rbacv1.ClusterRole{}
	return reconciliation.ClusterRoleRuleOwner{ClusterRole: out}, c.create("clusterroles", "ClusterRole", "", in.GetObject(), out)
}

func (c clusterRoles) Update(in reconciliation.RuleOwner) (reconciliation.RuleOwner, error) {
	out := &rbacv1.ClusterRole{}
	return reconciliation.ClusterRoleRuleOwner{ClusterRole: out}, c.update("clusterroles", "ClusterRole", "", in.GetName(), in.GetObject(), out)
}

type roles struct{ rbacStores }

func (c roles) Get(ns, name string) (reconciliation.RuleOwner, error) {
	out := &rbacv1.Role{}
	return reconciliation.RoleRuleOwner{Role: out}, c.get("roles", ns, name, out)
}

func (c roles) Create(in reconciliation.RuleOwner) (reconciliation.RuleOwner, error) {
	out := &rbacv1.Role{}
	return reconciliation.RoleRuleOwner{Role: out}, c.create("roles", "Role", in.GetNamespace(), in.GetObject(), out)
}

func (c roles) Update(in reconciliation.RuleOwner) (reconciliation.RuleOwner, error) {
	out := &rbacv1.Role{}
	return reconciliation.RoleRuleOwner{Role: out}, c.update("roles", "Role", in.GetNamespace(), in.GetName(), in.GetObject(), out)
}

type clusterRoleBindings struct{ rbacStores }

func (c clusterRoleBindings) Get(_, name string) (reconciliation.RoleBinding, error) {
	out := &rbacv1.ClusterRoleBinding{}
	return reconciliation.ClusterRoleBindingAdapter{ClusterRoleBinding: out}, c.get("clusterrolebindings", "", name, out)
}

func (c clusterRoleBindings) Create(in reconciliation.RoleBinding) (reconciliation.RoleBinding, error) {
	out := &rbacv1.ClusterRoleBinding{}
	return reconciliation.ClusterRoleBindingAdapter{ClusterRoleBinding: out}, c.create("clusterrolebindings", "ClusterRoleBinding", "", in.GetObject(), out)
}

func (c clusterRoleBindings) Update(in reconciliation.RoleBinding) (reconciliation.RoleBinding, error) {
	out := &rbacv1.ClusterRoleBinding{}
	return reconciliation.ClusterRoleBindingAdapter{ClusterRoleBinding: out}, c.update("clusterrolebindings", "ClusterRoleBinding", "", in.GetName(), in.GetObject(), out)
}

func (c clusterRoleBindings) Delete(_, name string, uid types.UID) error {
	return c.delete("clusterrolebindings", "", name, uid)
}

type roleBindings struct{ rbacStores }

func (c roleBindings) Get(ns, name string) (reconciliation.RoleBinding, error) {
	out := &rbacv1.RoleBinding{}
	return reconciliation.RoleBindingAdapter{RoleBinding: out}, c.get("rolebindings", ns, name, out)
}

func (c roleBindings) Create(in reconciliation.RoleBinding) (reconciliation.RoleBinding, error) {
	out := &rbacv1.RoleBinding{}
	return reconciliation.RoleBindingAdapter{RoleBinding: out}, c.create("rolebindings", "RoleBinding", in.GetNamespace(), in.GetObject(), out)
}

func (c roleBindings) Update(in reconciliation.RoleBinding) (reconciliation.RoleBinding, error) {
	out := &rbacv1.RoleBinding{}
	return reconciliation.RoleBindingAdapter{RoleBinding: out}, c.update("rolebindings", "RoleBinding", in.GetNamespace(), in.GetName(), in.GetObject(), out)
}

func (c roleBindings) Delete(ns, name string, uid types.UID) error {
	return c.delete("rolebindings", ns, name, uid)
}
