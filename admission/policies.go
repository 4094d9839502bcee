package admission

import (
	"context"
	"slices"
	"sync/atomic"
	"time"

	"github.com/miniapi/miniapi/registry"
	mutatingpolicy "k8s.io/apiserver/pkg/admission/plugin/policy/mutating"
	validatingpolicy "k8s.io/apiserver/pkg/admission/plugin/policy/validating"
)

// Kube's policy plugins see a policy or binding written through their
// informers, and recompile what changed on a timer, every second, so in
// kube-apiserver a client that writes a policy and at once an object it
// refuses sees the object admitted. miniapi keeps kube's second (an
// earlier 10 ms timer woke each plugin 100 times a second, 1.6 % of a
// core on an idle server), and the writes admitted within policySettle
// of a policy write wait out the rest of that time: a second for the
// timer, and room for the informers to deliver the write and the plugins
// to compile it.
const policySettle = 1300 * time.Millisecond

// policyKinds are the resources whose writes change what the policy
// plugins enforce.
var policyKinds = []string{
	"validatingadmissionpolicies", "validatingadmissionpolicybindings",
	"mutatingadmissionpolicies", "mutatingadmissionpolicybindings",
}

// settle makes the writes that follow a policy write wait until it is in
// effect. The zero value is ready to use.
type settle struct {
	// until is the time (Unix nanoseconds) before which admissions wait.
	until atomic.Int64
}

// usesPolicies reports whether the plugins named include a policy plugin.
func usesPolicies(names []string) bool {
	return slices.Contains(names, validatingpolicy.PluginName) || slices.Contains(names, mutatingpolicy.PluginName)
}

// isPolicyWrite reports whether r writes a policy or a binding.
func isPolicyWrite(r *registry.AdmissionRequest) bool {
	return r.Type.Group == "admissionregistration.k8s.io" && r.Subresource == "" && slices.Contains(policyKinds, r.Type.Plural)
}

// wrote records that a policy write was admitted.
func (s *settle) wrote() { s.until.Store(time.Now().Add(policySettle).UnixNano()) }

// wait returns once the policy writes admitted so far may be in effect,
// or when ctx ends. Without a recent policy write it returns at once.
func (s *settle) wait(ctx context.Context) error {
	d := time.Until(time.Unix(0, s.until.Load()))
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
