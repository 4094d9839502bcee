package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/miniapi/miniapi/api"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/kubernetes/pkg/apis/admissionregistration"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/mutatingadmissionpolicy"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/mutatingadmissionpolicybinding"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/mutatingwebhookconfiguration"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/resolver"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/validatingadmissionpolicy"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/validatingadmissionpolicybinding"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/validatingwebhookconfiguration"
)

// AdmissionPolicies is what the admission policy kinds' rules read from
// the running server: kube checks that whoever writes a policy with a
// paramKind, or binds one to a parameter, may read the parameters, and
// for that reads the bound policy and resolves its paramKind to a
// resource.
type AdmissionPolicies struct {
	// Get reads one stored object of admissionregistration.k8s.io/v1's
	// resource plural, as JSON, or returns a StatusError such as
	// NotFound.
	Get func(ctx context.Context, plural, name string) ([]byte, error)
	// Resources resolves a kind to the resource that serves it.
	Resources resolver.ResourceResolver
}

// admissionResources are admissionregistration.k8s.io/v1's resources,
// stored and validated. The policy kinds' checks that the writer may
// read a policy's parameters use a's authorizer (none skips them, as
// AlwaysAllow passes them) and p.
func admissionResources(a *Auth, p *AdmissionPolicies) []*resource {
	adm := func(r resource) *resource {
		r.group, r.version, r.categories = "admissionregistration.k8s.io", "v1", []string{"api-extensions"}
		return &r
	}
	var (
		authz     = authorizerOf(a)
		resources resolver.ResourceResolver
		vapGetter validatingadmissionpolicybinding.PolicyGetter
		mapGetter mutatingadmissionpolicybinding.PolicyGetter
	)
	if p != nil {
		resources = p.Resources
		vapGetter = policyGetter{p.Get}
		mapGetter = policyGetter{p.Get}
	}
	vap := validatingadmissionpolicy.NewStrategy(authz, resources)
	return []*resource{
		adm(resource{kind: "MutatingAdmissionPolicy", plural: "mutatingadmissionpolicies",
			strategy: mutatingadmissionpolicy.NewStrategy(authz, resources)}),
		adm(resource{kind: "MutatingAdmissionPolicyBinding", plural: "mutatingadmissionpolicybindings",
			strategy: mutatingadmissionpolicybinding.NewStrategy(authz, mapGetter, resources)}),
		adm(resource{kind: "MutatingWebhookConfiguration", plural: "mutatingwebhookconfigurations",
			strategy: mutatingwebhookconfiguration.Strategy}),
		adm(resource{kind: "ValidatingAdmissionPolicy", plural: "validatingadmissionpolicies",
			strategy: vap, status: validatingadmissionpolicy.NewStatusStrategy(vap)}),
		adm(resource{kind: "ValidatingAdmissionPolicyBinding", plural: "validatingadmissionpolicybindings",
			strategy: validatingadmissionpolicybinding.NewStrategy(authz, vapGetter, resources)}),
		adm(resource{kind: "ValidatingWebhookConfiguration", plural: "validatingwebhookconfigurations",
			strategy: validatingwebhookconfiguration.Strategy}),
	}
}

// policyGetter reads the policy a binding names, in kube's internal
// form, as kube's binding strategies want it.
type policyGetter struct {
	get func(ctx context.Context, plural, name string) ([]byte, error)
}

var (
	_ validatingadmissionpolicybinding.PolicyGetter = policyGetter{}
	_ mutatingadmissionpolicybinding.PolicyGetter   = policyGetter{}
)

// GetValidatingAdmissionPolicy reads a ValidatingAdmissionPolicy.
func (g policyGetter) GetValidatingAdmissionPolicy(ctx context.Context, name string) (*admissionregistration.ValidatingAdmissionPolicy, error) {
	var v1 admissionregistrationv1.ValidatingAdmissionPolicy
	out := &admissionregistration.ValidatingAdmissionPolicy{}
	return out, g.read(ctx, "validatingadmissionpolicies", name, &v1, out)
}

// GetMutatingAdmissionPolicy reads a MutatingAdmissionPolicy.
func (g policyGetter) GetMutatingAdmissionPolicy(ctx context.Context, name string) (*admissionregistration.MutatingAdmissionPolicy, error) {
	var v1 admissionregistrationv1.MutatingAdmissionPolicy
	out := &admissionregistration.MutatingAdmissionPolicy{}
	return out, g.read(ctx, "mutatingadmissionpolicies", name, &v1, out)
}

// read decodes the stored object into v1 and converts it to internal.
func (g policyGetter) read(ctx context.Context, plural, name string, v1, internal any) error {
	data, err := g.get(ctx, plural, name)
	if err != nil {
		var se *api.StatusError
		if errors.As(err, &se) && se.ErrStatus.Reason == api.ReasonNotFound {
			return apierrors.NewNotFound(schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: plural}, name)
		}
		return err
	}
	if err := json.Unmarshal(data, v1); err != nil {
		return fmt.Errorf("builtin: decode %s %q: %w", plural, name, err)
	}
	return scheme.Convert(v1, internal, nil)
}

// authorizerOf is a's authorizer, or nil (not a nil pointer in an
// interface) without one, as kube's strategies test for.
func authorizerOf(a *Auth) authorizer.UnconditionalAuthorizer {
	if a == nil || a.Authorizer == nil {
		return nil
	}
	return a.Authorizer
}
