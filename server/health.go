package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/miniapi/miniapi/endpoints"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/server/healthz"
)

// postStartHook is one of kube-apiserver's post-start hooks whose work
// miniapi does after it has begun serving: its health check fails as
// kube's does until the work is done, so /readyz does not answer 200
// before the bootstrap policy, flow control's configuration or the
// Service IP allocator are in place.
type postStartHook struct {
	name string
	once sync.Once
	done chan struct{}
	err  error // set before done closes
}

func newPostStartHook(name string) *postStartHook {
	return &postStartHook{name: name, done: make(chan struct{})}
}

// errHookNotFinished is kube's answer for a hook still running.
var errHookNotFinished = errors.New("not finished")

// Name is the check's name, as kube-apiserver's.
func (h *postStartHook) Name() string { return "poststarthook/" + h.name }

// Check fails until finish has been called.
func (h *postStartHook) Check(*http.Request) error {
	select {
	case <-h.done:
		return h.err
	default:
		return errHookNotFinished
	}
}

// finish marks the hook's work done; nil-safe, for hooks a
// configuration leaves out.
func (h *postStartHook) finish() { h.fail(nil) }

// fail marks the hook's work failed for good with err (done, if nil).
func (h *postStartHook) fail(err error) {
	if h != nil {
		h.once.Do(func() {
			h.err = err
			close(h.done)
		})
	}
}

// postStartHooks are the hooks of the work Start leaves running once
// the server serves, in kube-apiserver's order; nil where the
// configuration does not do that work.
type postStartHooks struct {
	serviceIPRepair, bootstrapRoles, flowControl, serviceController, serviceCIDR *postStartHook
}

// all are the hooks the configuration has, in kube-apiserver's order.
func (h *postStartHooks) all() []*postStartHook {
	var out []*postStartHook
	for _, hook := range []*postStartHook{h.serviceIPRepair, h.bootstrapRoles, h.flowControl, h.serviceController, h.serviceCIDR} {
		if hook != nil {
			out = append(out, hook)
		}
	}
	return out
}

// newPostStartHooks names the hooks of what s will do after it serves.
func (s *Server) newPostStartHooks() {
	h := &s.hooks
	h.serviceIPRepair = newPostStartHook("start-service-ip-repair-controllers")
	if s.sec.rbac != nil {
		h.bootstrapRoles = newPostStartHook("rbac/bootstrap-roles")
	}
	if s.flowControl != nil {
		h.flowControl = newPostStartHook("priority-and-fairness-config-producer")
	}
	h.serviceController = newPostStartHook("bootstrap-controller")
	h.serviceCIDR = newPostStartHook("start-kubernetes-service-cidr-controller")
}

// healthChecks are the server's own checks: the admission plugins'
// informers synced (readiness only, as kube's informer-sync), the
// post-start hooks, and shutdown not begun (readiness only).
func (s *Server) healthChecks() endpoints.HealthChecks {
	var c endpoints.HealthChecks
	c.ReadyFirst = []healthz.HealthChecker{healthz.NewInformerSyncHealthz(s.informers)}
	for _, hook := range s.hooks.all() {
		c.PostStart = append(c.PostStart, hook)
	}
	c.ReadyLast = []healthz.HealthChecker{healthz.NewShutdownHealthz(s.stopWatches)}
	return c
}

// WaitReady returns once the post-start work /readyz waits for is done
// (Start returns before the Service controllers' part of it), with the
// error of a part that failed, or with ctx's.
func (s *Server) WaitReady(ctx context.Context) error {
	for _, hook := range s.hooks.all() {
		select {
		case <-hook.done:
			if hook.err != nil {
				return fmt.Errorf("server: %s failed: %w", hook.Name(), hook.err)
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// bootstrapWait bounds how long the first logical cluster of a
// configuration waits for its bootstrap objects before giving up making
// them the template of the next (which then bootstrap themselves).
const bootstrapWait = 10 * time.Second

// awaitBootstrap reports, once they are, whether the objects the server
// writes of itself at start are all written: the post-start work done
// (the default ServiceCIDR among it) and the kubernetes Service, which
// its controller creates once /readyz answers ok, in place. A template
// taken before would leave every cluster started from it to create
// them again, a 100 ms poll of kube's ServiceCIDR controller each.
func (s *Server) awaitBootstrap(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, bootstrapWait)
	defer cancel()
	if s.WaitReady(ctx) != nil {
		return false
	}
	services := s.informers.Core().V1().Services().Lister().Services(metav1.NamespaceDefault)
	for {
		if _, err := services.Get("kubernetes"); err == nil {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(time.Millisecond):
		}
	}
}
