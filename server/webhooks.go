package server

import (
	"fmt"
	"net/url"

	"github.com/miniapi/miniapi/admission"
	"github.com/miniapi/miniapi/internal/workqueues"
	"github.com/miniapi/miniapi/registry"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiserver/pkg/util/proxy"
	webhookutil "k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/client-go/dynamic"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
)

// webhookResolver finds the webhook a Service names (admission webhooks,
// CRD conversion webhooks) at one of the Service's ready endpoints, read
// from its EndpointSlices, as kube-apiserver does with
// --enable-aggregator-routing: miniapi has no Service network, so a
// ClusterIP leads nowhere. A Service of type ExternalName leads to its
// externalName, as kube-apiserver's default resolver has it: that is how
// a server on this machine is reached (externalName localhost), since
// kube's validation refuses EndpointSlices with loopback addresses. The
// Service kubernetes/default is the server itself, as kube-apiserver's
// loopback resolver has it.
type webhookResolver struct {
	self     *url.URL
	services corelisters.ServiceLister
	slices   discoverylisters.EndpointSliceLister
}

// ResolveEndpoint returns the URL of the Service's port on one of its
// endpoints.
func (r *webhookResolver) ResolveEndpoint(namespace, name string, port int32) (*url.URL, error) {
	if namespace == "default" && name == "kubernetes" && port == 443 {
		return r.self, nil
	}
	svc, err := r.services.Services(namespace).Get(name)
	if err != nil {
		return nil, err
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return proxy.ResolveCluster(r.services, namespace, name, port)
	}
	getter, err := proxy.NewEndpointSliceListerGetter(r.slices)
	if err != nil {
		return nil, err
	}
	return proxy.ResolveEndpoint(r.services, getter, namespace, name, port)
}

// webhookServiceResolver returns the resolver of webhooks named by a
// Service, over the server's informers (started with the admission
// chain's).
func (s *Server) webhookServiceResolver() webhookutil.ServiceResolver {
	return s.webhookResolver
}

// newAdmission builds kube's admission chain over the server's loopback
// client and informers, and installs it in the registry. The informers
// start with startAdmission, once the server serves.
func (s *Server) newAdmission(cfg Config) error {
	f := newInformerFactory(s.sec.client)
	s.informers = f
	u, err := url.Parse(s.url)
	if err != nil {
		return err
	}
	s.webhookResolver = &webhookResolver{
		self:     u,
		services: f.Core().V1().Services().Lister(),
		slices:   f.Discovery().V1().EndpointSlices().Lister(),
	}
	dyn, err := dynamic.NewForConfig(s.sec.loopback)
	if err != nil {
		return fmt.Errorf("server: loopback client: %w", err)
	}
	owned := workqueues.Own(&s.queues)
	defer owned()
	chain, err := admission.New(admission.Config{
		Registry:        s.reg,
		Client:          s.sec.client,
		Dynamic:         dyn,
		Informers:       f,
		Authorizer:      s.sec.auth.Authorizer,
		ServiceResolver: s.webhookResolver,
		Loopback:        s.sec.loopback,
		Enable:          cfg.EnableAdmissionPlugins,
		Disable:         cfg.DisableAdmissionPlugins,
		ConfigFile:      cfg.AdmissionControlConfigFile,
		Drained:         s.drained,
		APIServerID:     s.id,
		Converter: func(t *registry.Type) (admission.VersionConverter, error) {
			c, err := s.converters.For(t)
			if c == nil || err != nil {
				return nil, err
			}
			return c, nil
		},
	})
	if err != nil {
		return err
	}
	s.reg.SetAdmission(chain)
	return nil
}
