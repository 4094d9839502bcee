package server

import (
	"context"
	"fmt"
	"net/url"
	"sync"

	"github.com/miniapi/miniapi/builtin"
	"github.com/miniapi/miniapi/internal/workqueues"
	"github.com/miniapi/miniapi/registry"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apiextensionsinformers "k8s.io/apiextensions-apiserver/pkg/client/informers/externalversions/apiextensions/v1"
	apiextensionslisters "k8s.io/apiextensions-apiserver/pkg/client/listers/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/util/proxy"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/transport"
	aggregatorclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"
	apiregistrationinformers "k8s.io/kube-aggregator/pkg/client/informers/externalversions/apiregistration/v1"
	apiregistrationlisters "k8s.io/kube-aggregator/pkg/client/listers/apiregistration/v1"
	"k8s.io/kube-aggregator/pkg/controllers/autoregister"
	localavailability "k8s.io/kube-aggregator/pkg/controllers/status/local"
	availabilitymetrics "k8s.io/kube-aggregator/pkg/controllers/status/metrics"
	"k8s.io/kube-aggregator/pkg/controllers/status/remote"
	"k8s.io/kubernetes/pkg/controlplane/controller/crdregistration"
)

// startAPIServices runs, until ctx ends, the controllers kube-apiserver's
// aggregator runs for APIServices, kube's own code over this server's API
// through a client of its own URL:
//
//   - the autoregister controller keeps an APIService for each of the
//     group-versions miniapi serves as kube-apiserver's own (local: the
//     built-in ones kube-apiserver has a priority for), created at start
//     and labelled automanaged "onstart", as kube-apiserver's;
//   - the CRD registration controller has it keep one for every served
//     version of every CustomResourceDefinition (automanaged "true"), and
//     delete it when the version or the CRD goes;
//   - the availability controllers keep the Available condition: True,
//     reason Local, for the local ones; for one with spec.service, what
//     kube-apiserver finds of that Service, its EndpointSlices and, last,
//     its discovery document, which miniapi, proxying to nothing, never
//     reaches (FailedDiscoveryCheck, "connection refused").
//
// Requests to an APIService's group-version are not proxied: miniapi
// serves the group-versions it has types for, and no others.
func (s *Server) startAPIServices(ctx context.Context, local []schema.GroupVersion) error {
	cfg := s.ownConfig()
	aggregator, err := aggregatorclient.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("server: loopback client: %w", err)
	}
	crdClient, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("server: loopback client: %w", err)
	}
	apiServices := apiServiceInformer{apiregistrationinformers.NewAPIServiceInformer(aggregator, 0, cache.Indexers{})}
	crds := crdInformer{apiextensionsinformers.NewCustomResourceDefinitionInformer(crdClient, 0, cache.Indexers{})}
	// Services and EndpointSlices: the server's shared informers, which
	// the webhook resolver and the Service allocator read too.
	services := s.informers.Core().V1().Services()
	slices := s.informers.Discovery().V1().EndpointSlices()

	client := aggregator.ApiregistrationV1()
	owned := workqueues.Own(&s.queues)
	defer owned()
	autoRegistration := autoregister.NewAutoRegisterController(apiServices, client)
	for _, gv := range local {
		if as := builtin.LocalAPIService(gv); as != nil {
			autoRegistration.AddAPIServiceToSyncOnStart(as)
		}
	}
	crdRegistration := crdregistration.NewCRDRegistrationController(crds, autoRegistration)
	metrics := availabilitymetrics.New()
	localAvailability, err := localavailability.New(apiServices, client, metrics)
	if err != nil {
		return err
	}
	remoteAvailability, err := remote.New(apiServices, services, slices, client,
		&transport.DialHolder{Dial: builtin.RefuseDial}, nil, clusterIPResolver{services.Lister()}, metrics)
	if err != nil {
		return err
	}

	for _, inf := range []cache.SharedIndexInformer{apiServices.inf, crds.inf} {
		s.background.Go(func() { inf.RunWithContext(ctx) })
	}
	s.background.Go(func() {
		// As kube-apiserver, APIServices are registered once the CRDs
		// are known, so that those of CRDs are not taken for stale and
		// deleted. Started on a synced informer, the CRD registration
		// controller lists the CRDs at once, and so always reports its
		// first pass done. Each controller runs even when ctx ends
		// first: Run shuts its queue down.
		// cache.WaitFor, not WaitForCacheSync: that polls every 100
		// ms, and the informers have only just started.
		synced := cache.WaitFor(ctx, "", crds.inf.HasSyncedChecker(), apiServices.inf.HasSyncedChecker())
		var wg sync.WaitGroup
		wg.Go(func() { crdRegistration.Run(1, ctx.Done()) })
		if synced {
			crdRegistration.WaitForInitialSync()
		}
		// Five workers, as kube-apiserver's: a new data directory
		// registers some twenty APIServices.
		wg.Go(func() { autoRegistration.Run(5, ctx.Done()) })
		wg.Go(func() { localAvailability.Run(1, ctx.Done()) })
		wg.Go(func() { remoteAvailability.Run(1, ctx.Done()) })
		wg.Wait()
	})
	return nil
}

// localGroupVersions are the group-versions of types, the built-in ones
// (CustomResourceDefinitions' own among them), that miniapi serves as
// kube-apiserver serves its own.
func localGroupVersions(types []registry.Type) []schema.GroupVersion {
	seen := map[schema.GroupVersion]bool{}
	var out []schema.GroupVersion
	for _, t := range types {
		gv := schema.GroupVersion{Group: t.Group, Version: t.Version}
		if !seen[gv] {
			seen[gv] = true
			out = append(out, gv)
		}
	}
	return out
}

// clusterIPResolver finds an aggregated API server at its Service's
// ClusterIP, as kube-apiserver does unless --enable-aggregator-routing.
type clusterIPResolver struct{ services corelisters.ServiceLister }

func (r clusterIPResolver) ResolveEndpoint(ns, name string, port int32) (*url.URL, error) {
	return proxy.ResolveCluster(r.services, ns, name, port)
}

// The informers kube's APIService controllers take, over informers of
// their own: the server's narrow factory serves neither type.
type (
	apiServiceInformer struct{ inf cache.SharedIndexInformer }
	crdInformer        struct{ inf cache.SharedIndexInformer }
)

func (i apiServiceInformer) Informer() cache.SharedIndexInformer { return i.inf }
func (i apiServiceInformer) Lister() apiregistrationlisters.APIServiceLister {
	return apiregistrationlisters.NewAPIServiceLister(i.inf.GetIndexer())
}
func (i crdInformer) Informer() cache.SharedIndexInformer { return i.inf }
func (i crdInformer) Lister() apiextensionslisters.CustomResourceDefinitionLister {
	return apiextensionslisters.NewCustomResourceDefinitionLister(i.inf.GetIndexer())
}
