package server

import (
	"errors"
	"net/url"
	"sync/atomic"

	webhookutil "k8s.io/apiserver/pkg/util/webhook"
)

// conversionResolver finds the Service of a CRD conversion webhook with
// the admission webhooks' resolver (webhookServiceResolver: through the
// Service's EndpointSlices, so a test's local server registered as an
// endpoint is reached). The CRDs' storage is built before that resolver,
// which needs the server's loopback client, so it is set once admission
// is built; until then, and until its informers have synced, a webhook
// by Service is not found and the conversion fails and is retried.
type conversionResolver struct {
	r atomic.Pointer[webhookutil.ServiceResolver]
}

var _ webhookutil.ServiceResolver = (*conversionResolver)(nil)

func (c *conversionResolver) set(r webhookutil.ServiceResolver) { c.r.Store(&r) }

// ResolveEndpoint resolves with the server's webhook resolver.
func (c *conversionResolver) ResolveEndpoint(namespace, name string, port int32) (*url.URL, error) {
	r := c.r.Load()
	if r == nil {
		return nil, errors.New("server: webhook services are not resolved yet: the server is starting")
	}
	return (*r).ResolveEndpoint(namespace, name, port)
}
