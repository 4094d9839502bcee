package admission

import (
	"context"

	"github.com/miniapi/miniapi/api"
	"k8s.io/apiserver/pkg/warning"
)

// withWarnings lets the plugins' warnings (a policy binding's Warn
// action, a webhook's warnings) reach the client: kube's plugins record
// them on kube's recorder, which here passes them to the request's own.
func withWarnings(ctx context.Context) context.Context {
	return warning.WithWarningRecorder(ctx, warningRecorder{ctx})
}

// warningRecorder is kube's warning.Recorder over api.AddWarning.
type warningRecorder struct{ ctx context.Context }

// AddWarning records text for the response's Warning headers; the agent
// is always "-", as kube-apiserver's.
func (r warningRecorder) AddWarning(_, text string) { api.AddWarning(r.ctx, text) }
