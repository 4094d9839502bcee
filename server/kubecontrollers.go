package server

import (
	"context"
	"fmt"

	"github.com/miniapi/miniapi/admission"
	"github.com/miniapi/miniapi/controllers"
	apiextensionsscheme "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/scheme"
	validatingpolicy "k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	k8sscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller/serviceaccount"
	"k8s.io/kubernetes/pkg/controller/validatingadmissionpolicystatus"
	"k8s.io/kubernetes/pkg/generated/openapi"
)

// startKubeControllers runs, until ctx ends, the controllers of
// kube-controller-manager that miniapi takes as they are, over the
// server's loopback client and shared informers (started after).
func (s *Server) startKubeControllers(ctx context.Context, sel controllers.Selection) error {
	if sel.Enabled(controllers.ServiceAccountControllerName) {
		core := s.informers.Core().V1()
		sa, err := serviceaccount.NewServiceAccountsController(klog.Background(), core.ServiceAccounts(), core.Namespaces(),
			s.sec.client, serviceaccount.DefaultServiceAccountsControllerOptions())
		if err != nil {
			return fmt.Errorf("server: %s: %w", controllers.ServiceAccountControllerName, err)
		}
		s.background.Go(func() { sa.Run(ctx, 1) })
	}
	if sel.Enabled(controllers.ValidatingAdmissionPolicyStatusControllerName) {
		c, err := s.newPolicyStatusController()
		if err != nil {
			return fmt.Errorf("server: %s: %w", controllers.ValidatingAdmissionPolicyStatusControllerName, err)
		}
		s.background.Go(func() { c.Run(ctx, policyStatusWorkers) })
	}
	return nil
}

// policyStatusWorkers is kube-controller-manager's default
// --concurrent-validating-admission-policy-status-syncs.
const policyStatusWorkers = 5

// newPolicyStatusController builds kube's ValidatingAdmissionPolicy
// status controller as kube-controller-manager does: its type checker
// resolves the built-in kinds' schemas from kube's generated OpenAPI and
// the others' (custom resources) from the server's OpenAPI, and maps
// kinds by the live registry.
func (s *Server) newPolicyStatusController() (*validatingadmissionpolicystatus.Controller, error) {
	schemas := resolver.NewDefinitionsSchemaResolver(openapi.GetOpenAPIDefinitions, k8sscheme.Scheme, apiextensionsscheme.Scheme).
		Combine(&resolver.ClientDiscoveryResolver{Discovery: s.sec.client.Discovery()})
	checker := &validatingpolicy.TypeChecker{SchemaResolver: schemas, RestMapper: admission.NewRESTMapper(s.reg)}
	return validatingadmissionpolicystatus.NewController(
		s.informers.Admissionregistration().V1().ValidatingAdmissionPolicies(),
		s.sec.client.AdmissionregistrationV1().ValidatingAdmissionPolicies(),
		checker,
	)
}
