package builtin

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"time"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/probe"
	"k8s.io/kubernetes/pkg/registry/core/componentstatus"
)

// The core group's two resources kube-apiserver serves without storing
// them: bindings (the older way to bind a pod to a node) and
// componentstatuses (the health of the control plane's components).

// virtualResources are those two, given what componentstatuses probe.
func virtualResources(etcdHealth func(context.Context) error) []*resource {
	return []*resource{
		{version: "v1", kind: "Binding", plural: "bindings", namespaced: true, virtual: virtualBindings},
		{version: "v1", kind: "ComponentStatus", plural: "componentstatuses", shortNames: []string{"cs"}, virtual: virtualComponentStatuses,
			componentStatus: componentstatus.NewStorage(controlPlane(etcdHealth))},
	}
}

// Which virtual resource a resource is.
const (
	virtualBindings = iota + 1
	virtualComponentStatuses
	virtualReview
)

// bindingsKind serves POST /api/v1/namespaces/<ns>/bindings: a Binding
// that binds the pod it names, as pods/<name>/binding does.
type bindingsKind struct{ *kind }

var (
	_ registry.Virtual        = bindingsKind{}
	_ registry.VirtualCreater = bindingsKind{}
)

// Verbs lists create alone, as kube-apiserver serves bindings.
func (bindingsKind) Verbs() []string { return []string{"create"} }

// CreateVirtual binds the pod the Binding names.
func (bindingsKind) CreateVirtual(ctx context.Context, reg *registry.Registry, ns string, body []byte, opts registry.CreateOptions) ([]byte, error) {
	res, ok := reg.Snapshot().Lookup("", "v1", "pods")
	if !ok {
		return nil, api.NewGenericNotFound()
	}
	return bind(ctx, res.Store, ns, "", body, opts.DryRun)
}

// componentStatusKind serves get and list of componentstatuses with
// kube's own componentstatus storage: it probes the control plane's
// components and reports each one's health.
type componentStatusKind struct {
	*kind
	rest *componentstatus.REST
}

var (
	_ registry.Virtual       = componentStatusKind{}
	_ registry.VirtualReader = componentStatusKind{}
)

// Verbs lists get and list, as kube-apiserver serves componentstatuses.
func (componentStatusKind) Verbs() []string { return []string{"get", "list"} }

// GetVirtual probes one component.
func (k componentStatusKind) GetVirtual(ctx context.Context, name string) ([]byte, error) {
	obj, err := k.rest.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, statusError(err)
	}
	return k.encodeInternal(obj)
}

// ListVirtual probes every component.
func (k componentStatusKind) ListVirtual(ctx context.Context) ([][]byte, error) {
	obj, err := k.rest.List(ctx, &metainternalversion.ListOptions{})
	if err != nil {
		return nil, statusError(err)
	}
	list := obj.(*core.ComponentStatusList)
	out := make([][]byte, 0, len(list.Items))
	for i := range list.Items {
		data, err := k.encodeInternal(&list.Items[i])
		if err != nil {
			return nil, err
		}
		out = append(out, data)
	}
	return out, nil
}

// encodeInternal encodes an internal object in the served version.
func (k *kind) encodeInternal(in runtime.Object) ([]byte, error) {
	obj, err := k.fromInternal(in)
	if err != nil {
		return nil, err
	}
	return json.Marshal(obj)
}

// controlPlane lists the components kube-apiserver probes, as it does:
// the controller manager and the scheduler on their default secure ports
// on loopback, and etcd. miniapi's own controllers run in process and
// answer no probe, so the first two report as they do for a
// kube-apiserver that runs without them.
func controlPlane(etcdHealth func(context.Context) error) func() map[string]componentstatus.Server {
	return func() map[string]componentstatus.Server {
		return map[string]componentstatus.Server{
			"controller-manager": &componentstatus.HttpServer{EnableHTTPS: true, TLSConfig: &tls.Config{InsecureSkipVerify: true},
				Addr: "127.0.0.1", Port: kubeControllerManagerPort, Path: "/healthz"},
			"scheduler": &componentstatus.HttpServer{EnableHTTPS: true, TLSConfig: &tls.Config{InsecureSkipVerify: true},
				Addr: "127.0.0.1", Port: kubeSchedulerPort, Path: "/healthz"},
			"etcd-0": etcdServer{etcdHealth},
		}
	}
}

// The default secure ports of kube-controller-manager and kube-scheduler
// (k8s.io/kubernetes/pkg/cluster/ports.KubeControllerManagerPort and the
// scheduler config's DefaultKubeSchedulerPort), which kube-apiserver
// probes. Importing those packages would link kube's whole generic
// apiserver and scheduler configuration for two numbers.
const (
	kubeControllerManagerPort = 10257
	kubeSchedulerPort         = 10259
)

// etcdServer probes miniapi's etcd, embedded or not.
type etcdServer struct {
	health func(context.Context) error
}

// DoServerCheck reports etcd's health as kube's etcd probe does.
func (e etcdServer) DoServerCheck() (probe.Result, string, error) {
	if e.health == nil {
		return probe.Unknown, "", fmt.Errorf("no etcd health check configured")
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	if err := e.health(ctx); err != nil {
		return probe.Failure, "", err
	}
	return probe.Success, "ok", nil
}

// probeTimeout bounds one probe, as kube's componentstatus probes are.
const probeTimeout = 20 * time.Second
