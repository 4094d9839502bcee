package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/miniapi/miniapi/builtin"
	"github.com/miniapi/miniapi/endpoints"
	"github.com/miniapi/miniapi/internal/workqueues"
	"github.com/miniapi/miniapi/registry"
	"github.com/miniapi/miniapi/storage"
	"github.com/miniapi/miniapi/storage/etcd3"
	networkingv1 "k8s.io/api/networking/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/discovery"
	networkinginformers "k8s.io/client-go/informers/networking/v1"
	"k8s.io/client-go/kubernetes"
	admissionregistrationv1client "k8s.io/client-go/kubernetes/typed/admissionregistration/v1"
	appsv1client "k8s.io/client-go/kubernetes/typed/apps/v1"
	batchv1client "k8s.io/client-go/kubernetes/typed/batch/v1"
	certificatesv1client "k8s.io/client-go/kubernetes/typed/certificates/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	discoveryv1client "k8s.io/client-go/kubernetes/typed/discovery/v1"
	flowcontrolv1client "k8s.io/client-go/kubernetes/typed/flowcontrol/v1"
	networkingv1client "k8s.io/client-go/kubernetes/typed/networking/v1"
	nodev1client "k8s.io/client-go/kubernetes/typed/node/v1"
	policyv1client "k8s.io/client-go/kubernetes/typed/policy/v1"
	rbacv1client "k8s.io/client-go/kubernetes/typed/rbac/v1"
	resourcev1client "k8s.io/client-go/kubernetes/typed/resource/v1"
	schedulingv1client "k8s.io/client-go/kubernetes/typed/scheduling/v1"
	storagev1client "k8s.io/client-go/kubernetes/typed/storage/v1"
	networkinglisters "k8s.io/client-go/listers/networking/v1"
	"k8s.io/client-go/openapi"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kubernetes/pkg/controlplane/controller/defaultservicecidr"
	"k8s.io/kubernetes/pkg/controlplane/controller/kubernetesservice"
	"k8s.io/kubernetes/pkg/controlplane/reconcilers"
	netutils "k8s.io/utils/net"
)

// The defaults of kube-apiserver's --service-cluster-ip-range and
// --service-node-port-range.
const (
	DefaultServiceClusterIPRange = "10.0.0.0/24"
	DefaultServiceNodePortRange  = "30000-32767"
)

// serviceRanges parses the Services' ranges of cfg.
func serviceRanges(cfg Config) (cidr net.IPNet, ports utilnet.PortRange, err error) {
	ipRange, portRange := cfg.ServiceClusterIPRange, cfg.ServiceNodePortRange
	if ipRange == "" {
		ipRange = DefaultServiceClusterIPRange
	}
	if portRange == "" {
		portRange = DefaultServiceNodePortRange
	}
	_, c, err := netutils.ParseCIDRSloppy(ipRange)
	if err != nil {
		return cidr, ports, fmt.Errorf("server: --service-cluster-ip-range %q: %w", ipRange, err)
	}
	pr, err := utilnet.ParsePortRange(portRange)
	if err != nil {
		return cidr, ports, fmt.Errorf("server: --service-node-port-range %q: %w", portRange, err)
	}
	return *c, *pr, nil
}

// newServices prepares the allocation of Services' ClusterIPs and
// NodePorts; startServices starts it once the server serves.
func (s *Server) newServices(cfg Config) (*builtin.Services, error) {
	cidr, ports, err := serviceRanges(cfg)
	if err != nil {
		return nil, err
	}
	keys := storage.ResourceKeys{Root: cfg.EtcdPrefix, Resource: "ranges"}
	return builtin.NewServices(builtin.ServicesConfig{
		ClusterIPRange: cidr, NodePortRange: ports,
		Ranges: etcd3.New(etcd3.Config{Client: s.client}), RangesKey: keys.Key("", "servicenodeports"),
	}), nil
}

// startServices runs, until ctx ends, what kube-apiserver runs for
// Services over its own API: the default ServiceCIDR controller (the
// "kubernetes" ServiceCIDR from --service-cluster-ip-range), the
// ClusterIP allocator's informers, and the controller of the
// "kubernetes" Service in default, with no endpoints (no apiserver
// endpoint reconciliation on a loopback server, as kube-apiserver's
// --endpoint-reconciler-type=none). It is kube's own code, talking to
// this server through a client of its own URL.
func (s *Server) startServices(ctx context.Context, svcs *builtin.Services, cfg Config) error {
	cidr, _, err := serviceRanges(cfg)
	if err != nil {
		return err
	}
	client, err := s.loopbackClient()
	if err != nil {
		return err
	}
	serviceCIDRs := serviceCIDRInformer{networkinginformers.NewServiceCIDRInformer(client, 0, cache.Indexers{})}
	ipAddresses := ipAddressInformer{networkinginformers.NewIPAddressInformer(client, 0, cache.Indexers{})}
	// The server's shared informer, which the webhook resolver and the
	// APIService controllers read too.
	services := s.informers.Core().V1().Services()

	serviceIP, err := netutils.GetIndexedIP(&cidr, 1)
	if err != nil {
		return fmt.Errorf("server: the kubernetes Service's IP: %w", err)
	}
	_, portStr, err := net.SplitHostPort(s.listener.Addr().String())
	if err != nil {
		return err
	}
	port, _ := strconv.Atoi(portStr)
	kubernetesService := kubernetesservice.New(kubernetesservice.Config{
		PublicIP:           net.ParseIP("127.0.0.1"),
		EndpointReconciler: reconcilers.NewNoneEndpointReconciler(),
		EndpointInterval:   10 * time.Second,
		ServiceIP:          serviceIP,
		ServicePort:        443,
		PublicServicePort:  port,
	}, client, services)

	// kube-apiserver runs the three as post-start hooks at once. Its
	// default ServiceCIDR controller's Start returns once the default
	// ServiceCIDR is in place and Ready, but finds out by polling an
	// informer of its own every 100 ms: the hook is done as soon as the
	// informer here holds what that Start waits for.
	if _, err := serviceCIDRs.inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.defaultServiceCIDRReady(obj) },
		UpdateFunc: func(_, obj any) { s.defaultServiceCIDRReady(obj) },
	}); err != nil {
		return err
	}
	for _, inf := range []cache.SharedIndexInformer{serviceCIDRs.inf, ipAddresses.inf} {
		s.background.Go(func() { inf.RunWithContext(ctx) })
	}
	s.background.Go(func() {
		defaultservicecidr.NewController(cidr, net.IPNet{}, client).Start(ctx)
		s.hooks.serviceCIDR.finish()
	})
	s.background.Go(func() {
		defer svcs.Destroy()
		// kube's allocator waits for these informers by polling them
		// every 100 ms: built once they have synced, it finds them so
		// at once.
		if !cache.WaitFor(ctx, "", serviceCIDRs.inf.HasSyncedChecker(), ipAddresses.inf.HasSyncedChecker()) {
			return
		}
		// Start waits until the allocator can allocate: until the
		// default ServiceCIDR exists. Own is process-wide: held only
		// while the allocator's queue is made, not while it waits,
		// which would hold up every other server's start.
		owned := sync.OnceFunc(workqueues.Own(&s.queues))
		err := svcs.Start(ctx, client.NetworkingV1(), serviceCIDRs, ipAddresses, owned)
		owned()
		if err != nil {
			if ctx.Err() == nil { // not a shutdown during start-up
				s.log.Error("server: Services cannot be allocated addresses", "err", err)
				s.hooks.serviceIPRepair.fail(err)
			}
			return
		}
		s.hooks.serviceIPRepair.finish()
		<-ctx.Done()
	})
	s.background.Go(func() {
		// Its Start waits for the Services informer by polling it
		// every 100 ms: started once it has synced, it finds it so at
		// once. Its controller creates the Service once /readyz
		// answers ok.
		if !cache.WaitFor(ctx, "", services.Informer().HasSyncedChecker()) {
			return
		}
		kubernetesService.Start(ctx.Done())
		s.hooks.serviceController.finish()
	})
	return nil
}

// defaultServiceCIDRReady finishes the default ServiceCIDR's hook once
// obj is that ServiceCIDR, Ready.
func (s *Server) defaultServiceCIDRReady(obj any) {
	c, ok := obj.(*networkingv1.ServiceCIDR)
	if ok && c.Name == defaultservicecidr.DefaultServiceCIDRName &&
		apimeta.IsStatusConditionTrue(c.Status.Conditions, networkingv1.ServiceCIDRConditionReady) {
		s.hooks.serviceCIDR.finish()
	}
}

// loopbackClient is the kubernetes.Interface kube's controllers get
// (the Service and APIService ones, kube-controller-manager's): a client of the server's own API for the
// groups they use. Building the full clientset would link a client (and
// an informer) for every group of every version, tens of megabytes, for
// nothing.
type loopbackClient struct {
	// The embedded interface is nil: only the groups below are served,
	// the only ones the server's own components call (a full clientset
	// would link every group's client).
	kubernetes.Interface
	discoveryClient discovery.DiscoveryInterfaces
	admission       admissionregistrationv1client.AdmissionregistrationV1Interface
	apps            appsv1client.AppsV1Interface
	batch           batchv1client.BatchV1Interface
	certs           certificatesv1client.CertificatesV1Interface
	coordination    coordinationv1client.CoordinationV1Interface
	core            corev1client.CoreV1Interface
	discovery       discoveryv1client.DiscoveryV1Interface
	flowcontrol     flowcontrolv1client.FlowcontrolV1Interface
	networking      networkingv1client.NetworkingV1Interface
	node            nodev1client.NodeV1Interface
	policy          policyv1client.PolicyV1Interface
	rbac            rbacv1client.RbacV1Interface
	resource        resourcev1client.ResourceV1Interface
	scheduling      schedulingv1client.SchedulingV1Interface
	storage         storagev1client.StorageV1Interface
}

func newLoopbackClient(cfg *rest.Config, started <-chan struct{}, reg func() *registry.Snapshot) (*loopbackClient, error) {
	c := &loopbackClient{}
	var errs []error
	add := func(err error) { errs = append(errs, err) }
	d, err := discovery.NewDiscoveryClientForConfig(cfg)
	add(err)
	if d != nil {
		c.discoveryClient = loopbackDiscovery{DiscoveryClient: d, openAPI: &lazyOpenAPI{server: d.OpenAPIV3(), reg: reg, started: started}}
	}
	c.admission, err = admissionregistrationv1client.NewForConfig(cfg)
	add(err)
	c.apps, err = appsv1client.NewForConfig(cfg)
	add(err)
	c.batch, err = batchv1client.NewForConfig(cfg)
	add(err)
	c.certs, err = certificatesv1client.NewForConfig(cfg)
	add(err)
	c.coordination, err = coordinationv1client.NewForConfig(cfg)
	add(err)
	c.core, err = corev1client.NewForConfig(cfg)
	add(err)
	c.discovery, err = discoveryv1client.NewForConfig(cfg)
	add(err)
	c.flowcontrol, err = flowcontrolv1client.NewForConfig(cfg)
	add(err)
	c.networking, err = networkingv1client.NewForConfig(cfg)
	add(err)
	c.node, err = nodev1client.NewForConfig(cfg)
	add(err)
	c.policy, err = policyv1client.NewForConfig(cfg)
	add(err)
	c.rbac, err = rbacv1client.NewForConfig(cfg)
	add(err)
	c.resource, err = resourcev1client.NewForConfig(cfg)
	add(err)
	c.scheduling, err = schedulingv1client.NewForConfig(cfg)
	add(err)
	c.storage, err = storagev1client.NewForConfig(cfg)
	add(err)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("server: loopback client: %w", err)
	}
	return c, nil
}

// loopbackClient returns the client of the server's own components.
func (s *Server) loopbackClient() (*loopbackClient, error) {
	return s.sec.client, nil
}

// Discovery is the discovery client (admission policies read OpenAPI
// through it).
func (c *loopbackClient) Discovery() discovery.DiscoveryInterfaces { return c.discoveryClient }

// loopbackDiscovery is the loopback's discovery client, whose OpenAPI v3
// client lists the served schemas from the registry (see lazyOpenAPI).
type loopbackDiscovery struct {
	*discovery.DiscoveryClient
	openAPI *lazyOpenAPI
}

// OpenAPIV3 is the OpenAPI v3 client.
func (d loopbackDiscovery) OpenAPIV3() openapi.Client { return d.openAPI }

// lazyOpenAPI is the loopback's OpenAPI v3 client. kube's mutating policy
// plugin lists the served schemas as it starts, and then every five
// seconds, but reads a group version's schema only when a mutating
// policy applies to an object of it. Listing them from the server
// builds every document first (~150 ms of CPU, as much as the rest of a
// start), so the list is made from the registry instead: each group
// version served, named by a URL whose generation changes whenever the
// set of types does, which is all the plugin compares. A schema is
// fetched from the server when it is asked for, once the server serves
// (before that the call would be refused).
type lazyOpenAPI struct {
	server  openapi.Client
	reg     func() *registry.Snapshot
	started <-chan struct{}

	// mu protects last and generation.
	mu         sync.Mutex
	last       *registry.Snapshot
	generation uint64
}

// Paths lists the group versions served now.
func (c *lazyOpenAPI) Paths() (map[string]openapi.GroupVersion, error) {
	snap := c.reg()
	c.mu.Lock()
	if snap != c.last {
		c.last = snap
		c.generation++
	}
	gen := c.generation
	c.mu.Unlock()
	out := map[string]openapi.GroupVersion{}
	for _, res := range snap.Resources() {
		key := endpoints.OpenAPIV3Key(res.Type.Group, res.Type.Version)
		if _, ok := out[key]; !ok {
			out[key] = lazyGroupVersion{c: c, key: key, generation: gen}
		}
	}
	return out, nil
}

// lazyGroupVersion is one group version's schema, fetched when asked for.
type lazyGroupVersion struct {
	c          *lazyOpenAPI
	key        string
	generation uint64
}

// ServerRelativeURL names this group version's schema as of the set of
// types it was listed from.
func (g lazyGroupVersion) ServerRelativeURL() string {
	return "/openapi/v3/" + g.key + "?generation=" + strconv.FormatUint(g.generation, 10)
}

// Schema fetches the schema from the server.
func (g lazyGroupVersion) Schema(contentType string) ([]byte, error) {
	<-g.c.started
	paths, err := g.c.server.Paths()
	if err != nil {
		return nil, err
	}
	gv, ok := paths[g.key]
	if !ok {
		return nil, fmt.Errorf("server: no OpenAPI schema is served for %s", g.key)
	}
	return gv.Schema(contentType)
}

// AdmissionregistrationV1 is admissionregistration.k8s.io/v1's client.
func (c *loopbackClient) AdmissionregistrationV1() admissionregistrationv1client.AdmissionregistrationV1Interface {
	return c.admission
}

// AppsV1 is apps/v1's client.
func (c *loopbackClient) AppsV1() appsv1client.AppsV1Interface { return c.apps }

// BatchV1 is batch/v1's client.
func (c *loopbackClient) BatchV1() batchv1client.BatchV1Interface { return c.batch }

// PolicyV1 is policy/v1's client.
func (c *loopbackClient) PolicyV1() policyv1client.PolicyV1Interface { return c.policy }

// CertificatesV1 is certificates.k8s.io/v1's client.
func (c *loopbackClient) CertificatesV1() certificatesv1client.CertificatesV1Interface {
	return c.certs
}

// CoordinationV1 is coordination.k8s.io/v1's client (the simulated
// nodes' Leases).
func (c *loopbackClient) CoordinationV1() coordinationv1client.CoordinationV1Interface {
	return c.coordination
}

// NodeV1 is node.k8s.io/v1's client.
func (c *loopbackClient) NodeV1() nodev1client.NodeV1Interface { return c.node }

// ResourceV1 is resource.k8s.io/v1's client.
func (c *loopbackClient) ResourceV1() resourcev1client.ResourceV1Interface { return c.resource }

// SchedulingV1 is scheduling.k8s.io/v1's client.
func (c *loopbackClient) SchedulingV1() schedulingv1client.SchedulingV1Interface { return c.scheduling }

// StorageV1 is storage.k8s.io/v1's client.
func (c *loopbackClient) StorageV1() storagev1client.StorageV1Interface { return c.storage }

// RbacV1 is rbac.authorization.k8s.io/v1's client.
func (c *loopbackClient) RbacV1() rbacv1client.RbacV1Interface { return c.rbac }

// CoreV1 is the core group's client.
func (c *loopbackClient) CoreV1() corev1client.CoreV1Interface { return c.core }

// DiscoveryV1 is discovery.k8s.io/v1's client.
func (c *loopbackClient) DiscoveryV1() discoveryv1client.DiscoveryV1Interface { return c.discovery }

// FlowcontrolV1 is flowcontrol.apiserver.k8s.io/v1's client.
func (c *loopbackClient) FlowcontrolV1() flowcontrolv1client.FlowcontrolV1Interface {
	return c.flowcontrol
}

// NetworkingV1 is networking.k8s.io/v1's client.
func (c *loopbackClient) NetworkingV1() networkingv1client.NetworkingV1Interface { return c.networking }

// The informers kube's Service allocator and controllers take, over
// informers of their own (a shared informer factory would, again, link
// every group).
type (
	serviceCIDRInformer struct{ inf cache.SharedIndexInformer }
	ipAddressInformer   struct{ inf cache.SharedIndexInformer }
)

func (i serviceCIDRInformer) Informer() cache.SharedIndexInformer { return i.inf }
func (i serviceCIDRInformer) Lister() networkinglisters.ServiceCIDRLister {
	return networkinglisters.NewServiceCIDRLister(i.inf.GetIndexer())
}
func (i ipAddressInformer) Informer() cache.SharedIndexInformer { return i.inf }
func (i ipAddressInformer) Lister() networkinglisters.IPAddressLister {
	return networkinglisters.NewIPAddressLister(i.inf.GetIndexer())
}
