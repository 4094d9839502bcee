package builtin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	"github.com/miniapi/miniapi/storage"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	kubestorage "k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	networkinginformers "k8s.io/client-go/informers/networking/v1"
	networkingclient "k8s.io/client-go/kubernetes/typed/networking/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/registry/core/service/allocator"
	"k8s.io/kubernetes/pkg/registry/core/service/ipallocator"
	"k8s.io/kubernetes/pkg/registry/core/service/portallocator"
	servicestore "k8s.io/kubernetes/pkg/registry/core/service/storage"
	netutils "k8s.io/utils/net"
)

// Services allocates Services' ClusterIPs and NodePorts as kube-apiserver
// does, with kube's own code: its service storage's hooks (which decide
// what a Service of each type and IP family policy gets, and give it
// back on delete), its ClusterIP allocator (an IPAddress object per
// address, within the ServiceCIDRs), and its NodePort allocator (a
// bitmap kept in etcd). The Services kind's strategy calls the hooks
// around every write (registry.WriteHooks).
//
// NewServices returns it unstarted: its ClusterIP allocator needs the
// API (IPAddresses are written, ServiceCIDRs watched), so Start wires it
// to the running server; writes of Services wait until then.
type Services struct {
	cfg ServicesConfig
	// ready is closed when Start has built rest (or failed: err).
	ready chan struct{}
	rest  *servicestore.REST
	err   error
}

// ServicesConfig sizes the allocators, as kube-apiserver's
// --service-cluster-ip-range and --service-node-port-range do.
type ServicesConfig struct {
	// ClusterIPRange is where ClusterIPs come from; its family is the
	// cluster's primary one.
	ClusterIPRange net.IPNet
	// NodePortRange is where NodePorts come from.
	NodePortRange utilnet.PortRange
	// Ranges stores the NodePort bitmap, at RangesKey.
	Ranges    storage.Interface
	RangesKey string
}

// NewServices returns the allocation of Services, to Start once the
// server serves.
func NewServices(cfg ServicesConfig) *Services {
	return &Services{cfg: cfg, ready: make(chan struct{})}
}

// Start builds the allocators over client (the server's own API) and
// informers of its ServiceCIDRs and IPAddresses, which the caller starts
// and stops, calls built (if not nil) once they are built, and returns
// once the ClusterIP allocator can allocate. It must be called once;
// Destroy releases what it started.
func (s *Services) Start(ctx context.Context, client networkingclient.NetworkingV1Interface,
	serviceCIDRs networkinginformers.ServiceCIDRInformer, ipAddresses networkinginformers.IPAddressInformer, built func()) error {
	defer close(s.ready)
	s.rest, s.err = s.build(ctx, client, serviceCIDRs, ipAddresses, built)
	return s.err
}

func (s *Services) build(ctx context.Context, client networkingclient.NetworkingV1Interface,
	serviceCIDRs networkinginformers.ServiceCIDRInformer, ipAddresses networkinginformers.IPAddressInformer, built func()) (*servicestore.REST, error) {
	family := s.primaryFamily()
	// As kube-apiserver 1.37: IPAddress objects alone, no bitmap.
	ips, err := ipallocator.NewMetaAllocator(client, serviceCIDRs, ipAddresses, family == core.IPv6Protocol, nil)
	if built != nil {
		built()
	}
	if err != nil {
		return nil, fmt.Errorf("builtin: cluster IP allocator: %w", err)
	}
	if err := allocatorReady(ctx, ips); err != nil {
		ips.Destroy()
		return nil, err
	}
	ports, err := portallocator.New(s.cfg.NodePortRange, func(max int, rangeSpec string, offset int) (allocator.Interface, error) {
		return newRangeStore(ctx, s.cfg.Ranges, s.cfg.RangesKey, allocator.NewAllocationMapWithOffset(max, rangeSpec, offset))
	})
	if err != nil {
		ips.Destroy()
		return nil, fmt.Errorf("builtin: node port allocator: %w", err)
	}
	rest, _, _, err := servicestore.NewREST(hooksOnly{}, family, map[core.IPFamily]ipallocator.Interface{family: ips}, ports, nil, nil, nil)
	if err != nil {
		ips.Destroy()
		return nil, fmt.Errorf("builtin: service storage hooks: %w", err)
	}
	return rest, nil
}

// allocatorReady waits until kube's cluster IP allocator can allocate.
// It builds the allocator of each ServiceCIDR from its informers on a
// goroutine of its own, and until then refuses every Service "range is
// full", though the default ServiceCIDR exists already: Services created
// at once after a start were refused so. A dry run takes no address;
// a full range means the allocator is built.
func allocatorReady(ctx context.Context, ips *ipallocator.MetaAllocator) error {
	// From 1 ms, doubling to 10 ms: it is built within milliseconds,
	// unless its ServiceCIDR is not ready (then not before it is), and
	// a server is not ready before it (a dry run costs microseconds).
	for wait := time.Millisecond; ; wait = min(2*wait, 10*time.Millisecond) {
		_, err := ips.DryRun().AllocateNext()
		if err == nil || errors.Is(err, ipallocator.ErrFull) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("builtin: cluster IP allocator not ready: %w", ctx.Err())
		case <-time.After(wait):
		}
	}
}

// primaryFamily is the cluster's primary IP family, its ClusterIP
// range's; without Services, IPv4.
func (s *Services) primaryFamily() core.IPFamily {
	if s != nil && netutils.IsIPv6CIDR(&s.cfg.ClusterIPRange) {
		return core.IPv6Protocol
	}
	return core.IPv4Protocol
}

// Destroy stops the allocators' background work.
func (s *Services) Destroy() {
	select {
	case <-s.ready:
		if s.rest != nil {
			s.rest.Destroy()
		}
	default:
	}
}

// hooks waits for Start and returns kube's service storage.
func (s *Services) hooks(ctx context.Context) (*servicestore.REST, error) {
	select {
	case <-s.ready:
		return s.rest, s.err
	case <-ctx.Done():
		return nil, api.NewServiceUnavailable("the Service allocators are not started yet")
	}
}

// hooksOnly gives kube's service storage the options it completes its
// generic store with; that store is never used for storage (ours is),
// only for its allocation hooks, so it gets none.
type hooksOnly struct{}

// GetRESTOptions returns options whose decorator builds no storage.
func (hooksOnly) GetRESTOptions(resource schema.GroupResource, _ runtime.Object) (generic.RESTOptions, error) {
	return generic.RESTOptions{
		StorageConfig: &storagebackend.ConfigForResource{GroupResource: resource},
		Decorator: func(*storagebackend.ConfigForResource, string, func(runtime.Object) (string, error), func() runtime.Object,
			func() runtime.Object, kubestorage.AttrFunc, kubestorage.IndexerFuncs, *cache.Indexers) (kubestorage.Interface, factory.DestroyFunc, error) {
			return nil, func() {}, nil
		},
		ResourcePrefix: resource.Resource,
	}, nil
}

// serviceKind is the Service kind with the allocation hooks of svcs.
type serviceKind struct{ serviceProxy }

var _ registry.WriteHooks = serviceKind{}

// BeginCreate allocates a new Service's ClusterIPs and NodePorts (kube's
// beginCreate hook), filling them into obj.
func (k serviceKind) BeginCreate(ctx context.Context, obj *api.Object, dryRun bool) (func(bool), error) {
	rest, err := k.svcs.hooks(ctx)
	if err != nil {
		return nil, err
	}
	in, err := k.toInternal(obj)
	if err != nil {
		return nil, err
	}
	kctx := k.requestContext(ctx, "create", obj.Metadata.Namespace, obj.Metadata.Name, "")
	finish, err := rest.Store.BeginCreate(kctx, in, &metav1.CreateOptions{DryRun: dryRunOption(dryRun)})
	if err != nil {
		return nil, statusError(err)
	}
	return k.applyAllocation(kctx, rest, obj, in, finish)
}

// BeginUpdate allocates and releases what an update changes (kube's
// beginUpdate hook).
func (k serviceKind) BeginUpdate(ctx context.Context, obj, old *api.Object, dryRun bool) (func(bool), error) {
	rest, err := k.svcs.hooks(ctx)
	if err != nil {
		return nil, err
	}
	in, err := k.toInternal(obj)
	if err != nil {
		return nil, err
	}
	oldIn, err := k.toInternal(old)
	if err != nil {
		return nil, err
	}
	kctx := k.requestContext(ctx, "update", obj.Metadata.Namespace, obj.Metadata.Name, "")
	finish, err := rest.Store.BeginUpdate(kctx, in, oldIn, &metav1.UpdateOptions{DryRun: dryRunOption(dryRun)})
	if err != nil {
		return nil, statusError(err)
	}
	return k.applyAllocation(kctx, rest, obj, in, finish)
}

// applyAllocation writes what the hook allocated into obj and returns
// the finish of its transaction. kube's service storage also decorates
// every Service it reads (an ExternalName Service loses the
// internalTrafficPolicy an earlier type was defaulted with); miniapi
// answers and watches what it stored, so kube's decorator runs here, on
// the way in.
func (k serviceKind) applyAllocation(kctx context.Context, rest *servicestore.REST, obj *api.Object, in runtime.Object, finish genericregistry.FinishFunc) (func(bool), error) {
	if rest.Store.Decorator != nil {
		rest.Store.Decorator(in)
	}
	out, err := k.fromInternal(in)
	if err != nil {
		finish(kctx, false)
		return nil, err
	}
	out.Metadata = obj.Metadata
	*obj = *out
	return func(stored bool) { finish(kctx, stored) }, nil
}

// AfterDelete gives a deleted Service's ClusterIPs and NodePorts back
// (kube's afterDelete hook).
func (k serviceKind) AfterDelete(obj *api.Object, dryRun bool) {
	var rest *servicestore.REST
	select {
	case <-k.svcs.ready:
		rest = k.svcs.rest
	default:
	}
	if rest == nil {
		return // nothing was allocated before Start
	}
	in, err := k.toInternal(obj)
	if err != nil {
		return
	}
	rest.Store.AfterDelete(in, &metav1.DeleteOptions{DryRun: dryRunOption(dryRun)})
}

func dryRunOption(dryRun bool) []string {
	if dryRun {
		return []string{metav1.DryRunAll}
	}
	return nil
}
