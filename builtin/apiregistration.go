package builtin

import (
	"k8s.io/kube-aggregator/pkg/registry/apiservice"
	apiserviceetcd "k8s.io/kube-aggregator/pkg/registry/apiservice/etcd"
)

// apiregistrationResources are apiregistration.k8s.io/v1's resources,
// which kube-apiserver serves from its embedded kube-aggregator, with the
// aggregator's strategies: a new APIService served locally (no
// spec.service) is Available from the start, with reason Local.
func apiregistrationResources() []*resource {
	return []*resource{{
		group: "apiregistration.k8s.io", version: "v1", kind: "APIService", plural: "apiservices",
		categories: []string{"api-extensions"},
		strategy:   apiservice.NewStrategy(scheme).(strategy),
		status:     apiservice.NewStatusStrategy(scheme),
		attrs:      apiservice.GetAttrs,
		// The aggregator's storage prints the columns (Service,
		// Available); it needs no store to print.
		printer: &apiserviceetcd.REST{},
	}}
}
