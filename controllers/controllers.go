package controllers

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/miniapi/miniapi/registry"
	"k8s.io/kubernetes/cmd/kube-controller-manager/names"
)

// Names of the built-in controllers, as kube-controller-manager's
// --controllers flag names them.
const (
	// NamespaceControllerName is kube's own controller, run by the
	// server: it empties a namespace being deleted, then lets it go.
	NamespaceControllerName = names.NamespaceController
	GarbageCollectorName    = names.GarbageCollectorController
	// ServiceAccountControllerName is kube's own controller, run by the
	// server (it needs the server's client and informers): it keeps a
	// "default" ServiceAccount in every namespace, which the
	// ServiceAccount admission plugin gives pods.
	ServiceAccountControllerName = names.ServiceAccountController
	// ValidatingAdmissionPolicyStatusControllerName is kube's own
	// controller, run by the server: it type-checks each
	// ValidatingAdmissionPolicy's expressions against the kinds it
	// matches and records the warnings in its status.
	ValidatingAdmissionPolicyStatusControllerName = names.ValidatingAdmissionPolicyStatusController
)

// builtins are the built-in controllers, in the order they start, each
// with the aliases kube-controller-manager accepts for it. The garbage
// collector is miniapi's own (New builds it); the server runs the others,
// which are kube-controller-manager's, from k8s.io/kubernetes/pkg/controller.
var builtins = []struct {
	name    string
	aliases []string
}{
	{NamespaceControllerName, []string{"namespace"}},
	{GarbageCollectorName, []string{"garbagecollector"}},
	{ServiceAccountControllerName, []string{"serviceaccount"}},
	{names.RootCACertificatePublisherController, []string{"root-ca-cert-publisher"}},
	{names.DeploymentController, []string{"deployment"}},
	{names.ReplicaSetController, []string{"replicaset"}},
	{names.StatefulSetController, []string{"statefulset"}},
	{names.DaemonSetController, []string{"daemonset"}},
	{names.JobController, []string{"job"}},
	{names.CronJobController, []string{"cronjob"}},
	{names.TTLAfterFinishedController, []string{"ttl-after-finished"}},
	{names.ReplicationControllerController, []string{"replicationcontroller"}},
	{names.EndpointsController, []string{"endpoint"}},
	{names.EndpointSliceController, []string{"endpointslice"}},
	{names.EndpointSliceMirroringController, []string{"endpointslicemirroring"}},
	{names.DisruptionController, []string{"disruption"}},
	{names.ResourceQuotaController, []string{"resourcequota"}},
	{names.PodGarbageCollectorController, []string{"podgc"}},
	{ValidatingAdmissionPolicyStatusControllerName, []string{"validatingadmissionpolicy-status"}},
}

// Names lists every built-in controller; all are on by default.
func Names() []string {
	out := make([]string, len(builtins))
	for i, b := range builtins {
		out[i] = b.name
	}
	return out
}

// Controller is one control loop. Run works until ctx ends and returns
// only after every goroutine it started has exited.
type Controller interface {
	Run(ctx context.Context)
	// Idle reports whether the controller has caught up with the writes
	// made so far and has nothing ready to do (work delayed on purpose,
	// a retry's back-off, is not counted). Tests wait on it.
	Idle() bool
}

// Selection says which controllers run.
type Selection map[string]bool

// Select reads a list in kube-controller-manager's --controllers form:
// "*" turns on every controller that is on by default, "name" turns one
// on, "-name" turns it off; a name may be one of kube-controller-manager's
// aliases ("deployment" for "deployment-controller"). An empty list means
// "*".
func Select(list []string) (Selection, error) {
	if len(list) == 0 {
		list = []string{"*"}
	}
	known := knownNames()
	all := false
	on, off := map[string]bool{}, map[string]bool{}
	for _, item := range list {
		item = strings.TrimSpace(item)
		name, disable := strings.CutPrefix(item, "-")
		name, ok := known[name]
		switch {
		case item == "*":
			all = true
		case !ok:
			return nil, fmt.Errorf("controllers: unknown controller %q (known: *, %s)", item, strings.Join(Names(), ", "))
		case disable:
			off[name] = true
		default:
			on[name] = true
		}
	}
	sel := Selection{}
	for _, n := range Names() {
		sel[n] = !off[n] && (all || on[n])
	}
	return sel, nil
}

// knownNames maps each controller's name and aliases to its name.
func knownNames() map[string]string {
	known := map[string]string{}
	for _, b := range builtins {
		known[b.name] = b.name
		for _, a := range b.aliases {
			known[a] = b.name
		}
	}
	return known
}

// Named returns the controllers a list in Select's form turns on by
// name or alias, not through "*", by their names.
func Named(list []string) []string {
	known := knownNames()
	var out []string
	for _, item := range list {
		if name, ok := known[strings.TrimSpace(item)]; ok {
			out = append(out, name)
		}
	}
	return out
}

// Enabled reports whether controller name runs.
func (s Selection) Enabled(name string) bool { return s[name] }

// Config configures New.
type Config struct {
	// Registry is the live registry whose Stores the controllers read and
	// write in-process; required.
	Registry *registry.Registry
	// Selection says which controllers to build; nil builds them all.
	Selection Selection
	// Logger receives the controllers' logs; nil discards them.
	Logger *slog.Logger
}

// New returns the selected controllers, not yet running: the caller owns
// them, runs each with Run and cancels its context to stop it.
func New(cfg Config) []Controller {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	sel := cfg.Selection
	if sel == nil {
		sel, _ = Select(nil)
	}
	var out []Controller
	if sel.Enabled(GarbageCollectorName) {
		out = append(out, NewGarbageCollector(cfg.Registry, log))
	}
	return out
}
