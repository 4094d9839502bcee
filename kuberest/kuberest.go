// Package kuberest adapts a miniapi request to what Kubernetes' REST
// strategies (k8s.io/apiserver/pkg/registry/rest) read of one, for the
// packages that run kube's strategies: builtin (the built-in kinds),
// apiextensions (CRDs) and schema (custom resources).
package kuberest

import (
	"context"

	"github.com/miniapi/miniapi/api"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/warning"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Context is ctx as kube's strategies expect a request's: its namespace
// ("" for a cluster-scoped object), and a warning recorder that hands
// the warnings they record to the request's answer (api.AddWarning).
func Context(ctx context.Context, ns string) context.Context {
	return warning.WithWarningRecorder(genericapirequest.WithNamespace(ctx, ns), recorder{ctx})
}

// recorder forwards the warnings kube's code records to the request.
type recorder struct{ ctx context.Context }

// AddWarning records a warning for the request's answer.
func (r recorder) AddWarning(_, text string) { api.AddWarning(r.ctx, text) }

// ResetFields returns the fields a kube strategy resets, in the form
// kube-apiserver's handler installer hands its field manager; nil when
// the strategy declares none (or is nil).
func ResetFields(strategy any) map[fieldpath.APIVersion]fieldpath.Filter {
	switch s := strategy.(type) {
	case rest.ResetFieldsFilterStrategy:
		return s.GetResetFieldsFilter()
	case rest.ResetFieldsStrategy:
		return fieldpath.NewExcludeFilterSetMap(s.GetResetFields())
	}
	return nil
}
