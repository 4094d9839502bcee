package builtin

import (
	"context"

	"github.com/miniapi/miniapi/registry"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// Config is what some kinds' rules need from the running server.
type Config struct {
	// Namespaces reads namespaces, for the rules that look at a
	// namespace's labels (ResourceClaims asking for admin access).
	// Only Get is called.
	Namespaces corev1client.NamespaceInterface
	// EtcdHealth checks storage, for componentstatuses.
	EtcdHealth func(context.Context) error
	// Services allocates Services' ClusterIPs and NodePorts; without
	// it Services are stored with none (as a test of other kinds may
	// want).
	Services *Services
	// Auth serves the review resources (tokenreviews,
	// subjectaccessreviews...) and serviceaccounts/token; without it
	// they are not served.
	Auth *Auth
	// AdmissionPolicies reads admission policies and resolves kinds, for
	// the checks that whoever binds a policy to parameters may read them;
	// without it a binding with a paramRef is refused, as kube refuses
	// it without a resolver.
	AdmissionPolicies *AdmissionPolicies
}

// Types returns the registry Types of every resource kube-apiserver 1.37
// serves by default and miniapi serves as built-in, each with kube's own
// rules. Each call returns fresh values.
func Types(cfg Config) []registry.Type {
	var out []registry.Type
	for _, r := range resources(cfg) {
		out = append(out, r.typ())
	}
	return out
}

// resources lists every built-in resource, group by group.
func resources(cfg Config) []*resource {
	var all []*resource
	for _, group := range [][]*resource{
		coreResources(cfg.Services, cfg.Auth),
		reviewResources(cfg.Auth),
		virtualResources(cfg.EtcdHealth),
		admissionResources(cfg.Auth, cfg.AdmissionPolicies),
		apiextensionsResources(),
		apiregistrationResources(),
		appsResources(),
		autoscalingResources(),
		batchResources(),
		certificatesResources(),
		coordinationResources(),
		discoveryResources(),
		eventsResources(),
		flowcontrolResources(),
		networkingResources(),
		nodeResources(),
		policyResources(),
		rbacResources(cfg.Auth),
		resourceResources(cfg.Namespaces),
		schedulingResources(),
		storageResources(),
		storageMigrationResources(),
	} {
		all = append(all, group...)
	}
	return all
}
