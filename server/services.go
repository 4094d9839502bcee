package server

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/miniapi/miniapi/builtin"
	"github.com/miniapi/miniapi/storage"
	"github.com/miniapi/miniapi/storage/etcd3"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
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
	client, err := kubernetes.NewForConfig(&rest.Config{Host: s.url, UserAgent: "kube-apiserver", QPS: -1})
	if err != nil {
		return fmt.Errorf("server: loopback client: %w", err)
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	serviceCIDRs := factory.Networking().V1().ServiceCIDRs()
	ipAddresses := factory.Networking().V1().IPAddresses()
	services := factory.Core().V1().Services()
	// Informers are registered before the factory starts.
	serviceCIDRs.Informer()
	ipAddresses.Informer()
	services.Informer()

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

	s.background.Go(func() {
		defer svcs.Destroy()
		defer factory.Shutdown()
		factory.Start(ctx.Done())
		// Blocks until the default ServiceCIDR exists.
		defaultservicecidr.NewController(cidr, net.IPNet{}, client).Start(ctx)
		if err := svcs.Start(ctx, client.NetworkingV1(), serviceCIDRs, ipAddresses); err != nil {
			s.log.Error("server: Services cannot be allocated addresses", "err", err)
			return
		}
		kubernetesService.Start(ctx.Done())
		<-ctx.Done()
	})
	return nil
}
