package builtin

import (
	"k8s.io/kubernetes/pkg/registry/admissionregistration/mutatingadmissionpolicy"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/mutatingadmissionpolicybinding"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/mutatingwebhookconfiguration"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/validatingadmissionpolicy"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/validatingadmissionpolicybinding"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/validatingwebhookconfiguration"
)

// admissionResources are admissionregistration.k8s.io/v1's resources,
// stored and validated. Their strategies' checks that the writer may
// read a policy's parameters come with authorization (a nil authorizer
// skips them, as AlwaysAllow passes them).
func admissionResources() []*resource {
	adm := func(r resource) *resource {
		r.group, r.version, r.categories = "admissionregistration.k8s.io", "v1", []string{"api-extensions"}
		return &r
	}
	vap := validatingadmissionpolicy.NewStrategy(nil, nil)
	return []*resource{
		adm(resource{kind: "MutatingAdmissionPolicy", plural: "mutatingadmissionpolicies",
			strategy: mutatingadmissionpolicy.NewStrategy(nil, nil)}),
		adm(resource{kind: "MutatingAdmissionPolicyBinding", plural: "mutatingadmissionpolicybindings",
			strategy: mutatingadmissionpolicybinding.NewStrategy(nil, nil, nil)}),
		adm(resource{kind: "MutatingWebhookConfiguration", plural: "mutatingwebhookconfigurations",
			strategy: mutatingwebhookconfiguration.Strategy}),
		adm(resource{kind: "ValidatingAdmissionPolicy", plural: "validatingadmissionpolicies",
			strategy: vap, status: validatingadmissionpolicy.NewStatusStrategy(vap)}),
		adm(resource{kind: "ValidatingAdmissionPolicyBinding", plural: "validatingadmissionpolicybindings",
			strategy: validatingadmissionpolicybinding.NewStrategy(nil, nil, nil)}),
		adm(resource{kind: "ValidatingWebhookConfiguration", plural: "validatingwebhookconfigurations",
			strategy: validatingwebhookconfiguration.Strategy}),
	}
}
