package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"reflect"
	"strings"
	"syscall"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/kubelet/client"
	noderest "k8s.io/kubernetes/pkg/registry/core/node/rest"
	podrest "k8s.io/kubernetes/pkg/registry/core/pod/rest"
	servicerest "k8s.io/kubernetes/pkg/registry/core/service"
	servicestore "k8s.io/kubernetes/pkg/registry/core/service/storage"
)

// The streaming subresources (a pod's log, exec, attach, portforward and
// proxy, a node's and a Service's proxy) are served by kube's own REST
// code for them: it decodes and validates the options, finds the pod, its
// container and its node, the kubelet's address or the Service's
// endpoint, and refuses what kube-apiserver refuses, in its words. Where
// kube-apiserver then connects to a kubelet or an endpoint, miniapi, which
// runs neither, connects to nothing: the transport kube's code gets
// (unreachable) refuses every connection, so the answer is
// kube-apiserver's when nothing listens at the address ("dial tcp
// 10.0.0.7:10250: connect: connection refused"), at once, and no traffic
// leaves miniapi.

var (
	_ registry.Connecter = podKind{}
	_ registry.Connecter = nodeKind{}
	_ registry.Connecter = serviceProxy{}

	_ registry.ConnectDescriber = podKind{}
	_ registry.ConnectDescriber = nodeKind{}
	_ registry.ConnectDescriber = serviceProxy{}
)

// DescribeConnect describes a pod's log, exec, attach, portforward and
// proxy as kube's REST objects for them do.
func (podKind) DescribeConnect(subresource string) (registry.ConnectDescription, bool) {
	switch subresource {
	case "log":
		// kube serves the log as a getter with options, not a
		// connecter: a read whose answer is a stream.
		r := &podrest.LogREST{}
		opts, _, _ := r.NewGetOptions()
		return registry.ConnectDescription{Methods: []string{http.MethodGet}, Options: kindName(opts), Produces: r.ProducesMIMETypes(http.MethodGet)}, true
	case "exec":
		return describeConnecter(&podrest.ExecREST{}), true
	case "attach":
		return describeConnecter(&podrest.AttachREST{}), true
	case "portforward":
		return describeConnecter(&podrest.PortForwardREST{}), true
	case "proxy":
		return describeConnecter(&podrest.ProxyREST{}), true
	}
	return registry.ConnectDescription{}, false
}

// DescribeConnect describes a node's proxy.
func (nodeKind) DescribeConnect(subresource string) (registry.ConnectDescription, bool) {
	if subresource != "proxy" {
		return registry.ConnectDescription{}, false
	}
	return describeConnecter(&noderest.ProxyREST{}), true
}

// DescribeConnect describes a Service's proxy.
func (serviceProxy) DescribeConnect(subresource string) (registry.ConnectDescription, bool) {
	if subresource != "proxy" {
		return registry.ConnectDescription{}, false
	}
	return describeConnecter(&servicerest.ProxyREST{}), true
}

// describeConnecter reads a connecter's methods, options and subpath off
// it, as kube-apiserver's installer does; neither needs its fields.
func describeConnecter(c rest.Connecter) registry.ConnectDescription {
	opts, subpath, _ := c.NewConnectOptions()
	return registry.ConnectDescription{Methods: c.ConnectMethods(), Options: kindName(opts), Path: subpath}
}

// kindName is the kind of obj, its Go type's name (kube's options types
// are named as their kinds, internal and versioned alike).
func kindName(obj runtime.Object) string {
	return reflect.Indirect(reflect.ValueOf(obj)).Type().Name()
}

// Connect serves a pod's log, exec, attach, portforward and proxy.
func (k podKind) Connect(ctx context.Context, store *registry.Store, req registry.ConnectRequest) (http.Handler, error) {
	kctx := k.requestContext(ctx, req.Verb, req.Namespace, req.Name, req.Subresource)
	reg := store.Registry()
	pods, err := kubeStore(reg, "pods")
	if err != nil {
		return nil, err
	}
	if req.Subresource == "proxy" {
		return connect(kctx, store, &podrest.ProxyREST{Store: pods, ProxyTransport: unreachable}, req)
	}
	kubelets, err := kubeletsOf(reg)
	if err != nil {
		return nil, err
	}
	switch req.Subresource {
	case "log":
		return podLog(kctx, &podrest.LogREST{KubeletConn: kubelets, Store: pods}, req)
	case "exec":
		return connect(kctx, store, &podrest.ExecREST{Store: pods, KubeletConn: kubelets, Authorizer: allowAll{}}, req)
	case "attach":
		return connect(kctx, store, &podrest.AttachREST{Store: pods, KubeletConn: kubelets, Authorizer: allowAll{}}, req)
	case "portforward":
		return connect(kctx, store, &podrest.PortForwardREST{Store: pods, KubeletConn: kubelets, Authorizer: allowAll{}}, req)
	}
	return nil, api.NewGenericNotFound()
}

// nodeKind is the Node kind: a kind plus its proxy subresource.
type nodeKind struct{ *kind }

// Connect serves a node's proxy.
func (k nodeKind) Connect(ctx context.Context, store *registry.Store, req registry.ConnectRequest) (http.Handler, error) {
	if req.Subresource != "proxy" {
		return nil, api.NewGenericNotFound()
	}
	kctx := k.requestContext(ctx, req.Verb, req.Namespace, req.Name, req.Subresource)
	kubelets, err := kubeletsOf(store.Registry())
	if err != nil {
		return nil, err
	}
	// kube's node proxy finds the node through its kubelet connection
	// alone; the store it is given goes unused.
	return connect(kctx, store, &noderest.ProxyREST{Connection: kubelets, ProxyTransport: unreachable}, req)
}

// serviceProxy is the Service kind with its proxy subresource; svcs, when
// set, says the cluster's primary IP family, which endpoints are
// preferred in.
type serviceProxy struct {
	*kind
	svcs *Services
}

// Connect serves a Service's proxy through kube's Service storage, which
// picks one of the Service's endpoints from its EndpointSlices.
func (k serviceProxy) Connect(ctx context.Context, store *registry.Store, req registry.ConnectRequest) (http.Handler, error) {
	if req.Subresource != "proxy" {
		return nil, api.NewGenericNotFound()
	}
	kctx := k.requestContext(ctx, req.Verb, req.Namespace, req.Name, req.Subresource)
	reg := store.Registry()
	pods, err := kubeStore(reg, "pods")
	if err != nil {
		return nil, err
	}
	_, _, proxy, err := servicestore.NewREST(readerOptions{store, k.kind}, k.svcs.primaryFamily(), nil, nil,
		endpointSlices{kctx, reg}, pods, unreachable)
	if err != nil {
		return nil, err
	}
	return connect(kctx, store, proxy, req)
}

// connect serves req through one of kube's connecters as kube-apiserver's
// connect handler does: no dry run, the options decoded from the query
// (with a proxy's path), then the connecter's handler.
func connect(ctx context.Context, store *registry.Store, c rest.Connecter, req registry.ConnectRequest) (http.Handler, error) {
	if len(req.Query["dryRun"]) != 0 {
		return nil, api.NewBadRequest("dryRun is not supported")
	}
	opts, subpath, key := c.NewConnectOptions()
	query := req.Query
	if subpath {
		query = maps.Clone(query)
		query[key] = []string{req.Path}
	}
	if err := legacyscheme.ParameterCodec.DecodeParameters(query, corev1.SchemeGroupVersion, opts); err != nil {
		return nil, api.NewBadRequest(err.Error())
	}
	if err := admitConnect(ctx, store, req, opts); err != nil {
		return nil, err
	}
	h, err := c.Connect(ctx, req.Name, opts, responder{req.Fail})
	if err != nil {
		return nil, kubeError(err)
	}
	return h, nil
}

// podLog serves a pod's log through kube's log REST: its options decoded
// and validated, the log's location on the kubelet found, and the log
// read from there, which for a pod on no node is no log at all (204).
func podLog(ctx context.Context, r *podrest.LogREST, req registry.ConnectRequest) (http.Handler, error) {
	opts, _, _ := r.NewGetOptions()
	if err := legacyscheme.ParameterCodec.DecodeParameters(req.Query, corev1.SchemeGroupVersion, opts); err != nil {
		return nil, api.NewBadRequest(err.Error())
	}
	obj, err := r.Get(ctx, req.Name, opts)
	if err != nil {
		return nil, kubeError(err)
	}
	out, flush, contentType, err := obj.(rest.ResourceStreamer).InputStream(ctx, corev1.SchemeGroupVersion.String(), "")
	if err != nil {
		return nil, kubeError(err)
	}
	return logStream{out: out, flush: flush, contentType: contentType}, nil
}

// logStream writes an opened log as kube-apiserver's stream writer does.
type logStream struct {
	out         io.ReadCloser
	flush       bool
	contentType string
}

func (s logStream) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	if s.out == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	defer s.out.Close()
	w.Header().Set("Content-Type", s.contentType)
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	buf := make([]byte, 32<<10)
	for {
		n, err := s.out.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			if s.flush {
				_ = rc.Flush()
			}
		}
		if err != nil {
			return
		}
	}
}

// unreachable is the transport kube's code gets for kubelets and
// endpoints: every connection it opens is refused (RefuseDial).
var unreachable = &http.Transport{DialContext: RefuseDial}

// RefuseDial is how miniapi connects to kubelets, Service endpoints and
// aggregated API servers, none of which it runs or proxies to: it
// refuses every connection, as a host where nothing listens does, so
// that kube's code answers as kube-apiserver does then ("dial tcp
// 10.0.0.7:10250: connect: connection refused"), without a packet sent.
func RefuseDial(_ context.Context, network, addr string) (net.Conn, error) {
	return nil, &net.OpError{Op: "dial", Net: network, Addr: dialAddr(addr), Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
}

// dialAddr is the address a refused dial names.
type dialAddr string

func (a dialAddr) Network() string { return "tcp" }
func (a dialAddr) String() string  { return string(a) }

// kubeletConfig is kube-apiserver's kubelet client configuration by
// default: its --kubelet-port and --kubelet-preferred-address-types.
var kubeletConfig = client.KubeletClientConfig{
	Port: 10250,
	PreferredAddressTypes: []string{
		string(core.NodeHostName),
		string(core.NodeInternalDNS), string(core.NodeInternalIP),
		string(core.NodeExternalDNS), string(core.NodeExternalIP),
	},
}

// kubeletsOf returns kube's kubelet connection info over the registry's
// nodes, with the unreachable transport.
func kubeletsOf(reg *registry.Registry) (client.ConnectionInfoGetter, error) {
	nodes, err := kubeStore(reg, "nodes")
	if err != nil {
		return nil, err
	}
	// As kube-apiserver's node storage: a node read through the node
	// store, in the context of the request (a pod's log on a missing
	// node answers `pods "<node>" not found`).
	getter := client.NodeGetterFunc(func(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Node, error) {
		obj, err := nodes.Get(ctx, name, &opts)
		if err != nil {
			return nil, err
		}
		node := &corev1.Node{}
		if err := scheme.Convert(obj, node, nil); err != nil {
			return nil, err
		}
		return node, nil
	})
	info, err := client.NewNodeConnectionInfoGetter(getter, kubeletConfig)
	if err != nil {
		return nil, err
	}
	return unreachableKubelets{info}, nil
}

// unreachableKubelets gives the kubelets kube finds the unreachable
// transport.
type unreachableKubelets struct{ client.ConnectionInfoGetter }

func (u unreachableKubelets) GetConnectionInfo(ctx context.Context, node types.NodeName) (*client.ConnectionInfo, error) {
	info, err := u.ConnectionInfoGetter.GetConnectionInfo(ctx, node)
	if err != nil {
		return nil, err
	}
	info.Transport, info.InsecureSkipTLSVerifyTransport = unreachable, unreachable
	return info, nil
}

// endpointSlices reads a Service's EndpointSlices from the registry, as
// kube's EndpointSlice getter reads them from its informer: by the
// kubernetes.io/service-name label, within the request's ctx.
type endpointSlices struct {
	ctx context.Context
	reg *registry.Registry
}

// GetEndpointSlices returns the EndpointSlices of the Service ns/service.
func (e endpointSlices) GetEndpointSlices(ns, service string) ([]*discoveryv1.EndpointSlice, error) {
	res, ok := e.reg.Snapshot().Lookup(discoveryv1.GroupName, "v1", "endpointslices")
	if !ok {
		return nil, nil
	}
	sel := labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: service})
	list, err := res.Store.List(e.ctx, ns, registry.ListOptions{Label: sel})
	if err != nil {
		return nil, err
	}
	out := make([]*discoveryv1.EndpointSlice, 0, len(list.Items))
	for _, item := range list.Items {
		s := &discoveryv1.EndpointSlice{}
		if err := json.Unmarshal(item.Data, s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// allowAll authorizes everything: miniapi serves every request, and kube's
// exec, attach and portforward ask again for the create verb when the
// request came as a get (a WebSocket upgrade).
type allowAll struct{}

func (allowAll) Authorize(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	return authorizer.DecisionAllow, "", nil
}

// responder writes what kube's connecters answer once they have the
// request: errors, as Statuses.
type responder struct{ fail func(error) }

// Error answers err.
func (r responder) Error(err error) { r.fail(kubeError(err)) }

// Object is how a connecter would answer an object of its own; none of
// the ones served here does.
func (r responder) Object(code int, obj runtime.Object) {
	r.fail(api.NewInternalError(fmt.Errorf("builtin: unexpected %d answer %T from a connecter", code, obj)))
}

// kubeError is what kube-apiserver answers for an error of kube's code: a
// Status error as it is, anything else (a refused connection) as a 500
// with the error's text.
func kubeError(err error) error {
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		return statusError(err)
	}
	return &api.StatusError{ErrStatus: api.FromMetaStatus(*responsewriters.ErrorToAPIStatus(err))}
}

// readerOptions builds kube generic registry stores whose storage is one
// of the registry's stores, for Get only (storeReader).
type readerOptions struct {
	store *registry.Store
	k     *kind
}

// kubeStore returns a kube generic registry store reading the registry's
// core v1 resource plural, for kube code that reads objects through one.
func kubeStore(reg *registry.Registry, plural string) (*genericregistry.Store, error) {
	res, ok := reg.Snapshot().Lookup("", "v1", plural)
	if !ok {
		return nil, api.NewInternalError(fmt.Errorf("builtin: %s are not served", plural))
	}
	b, ok := res.Type.Strategy.(interface{ builtin() *kind })
	if !ok {
		return nil, api.NewInternalError(fmt.Errorf("builtin: %s are not a built-in kind", plural))
	}
	k := b.builtin()
	list, err := scheme.New(k.internal.GroupVersion().WithKind(k.r.kind + "List"))
	if err != nil {
		return nil, err
	}
	s := &genericregistry.Store{
		NewFunc:                   k.newInternal,
		NewListFunc:               func() runtime.Object { return list.DeepCopyObject() },
		DefaultQualifiedResource:  k.gr,
		SingularQualifiedResource: schema.GroupResource{Group: k.gr.Group, Resource: strings.ToLower(k.r.kind)},
		CreateStrategy:            k.r.strategy,
		UpdateStrategy:            k.r.strategy,
		DeleteStrategy:            k.r.strategy,
		TableConvertor:            rest.NewDefaultTableConvertor(k.gr),
	}
	if err := s.CompleteWithOptions(&generic.StoreOptions{RESTOptions: readerOptions{res.Store, k}}); err != nil {
		return nil, err
	}
	return s, nil
}

// admitConnect admits a connection as kube-apiserver's connect handler
// does: a CONNECT of the subresource whose object is the request's
// options (a PodExecOptions), which admission may not change.
func admitConnect(ctx context.Context, store *registry.Store, req registry.ConnectRequest, opts runtime.Object) error {
	if store.Registry().Admission() == nil {
		return nil
	}
	v, err := legacyscheme.Scheme.ConvertToVersion(opts, corev1.SchemeGroupVersion)
	if err != nil {
		return fmt.Errorf("builtin: convert %T: %w", opts, err)
	}
	obj, err := objectOf(v)
	if err != nil {
		return err
	}
	return store.Admit(ctx, &registry.AdmissionRequest{
		Operation: registry.OpConnect, Subresource: req.Subresource, Namespace: req.Namespace, Name: req.Name, Object: obj,
	})
}
