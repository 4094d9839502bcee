package miniapitest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"strconv"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// WithWebhooks installs admission webhook configurations for a webhook
// server the test runs itself, as envtest's Environment does with its
// WebhookInstallOptions: controller-runtime's own Install reads the
// configurations from opts.Paths (kubebuilder's config/webhook) and
// opts.MutatingWebhooks / ValidatingWebhooks, generates a CA and a
// serving certificate in LocalServingCertDir, picks a free
// LocalServingHost:LocalServingPort, rewrites every webhook's
// clientConfig to that address with the CA as caBundle, and creates
// the configurations before Start returns. The filled options are
// Env.WebhookInstallOptions: start controller-runtime's webhook server
// with their Host, Port and CertDir, then call WaitForWebhookServer.
// The certificate directory is removed when the server stops.
//
// The webhooks take effect as on kube-apiserver: a write they match
// fails (failurePolicy Fail, kubebuilder's default) until the test's
// webhook server answers.
func WithWebhooks(opts envtest.WebhookInstallOptions) Option {
	return func(o *options) { o.webhooks = &opts }
}

// installWebhooks installs o's webhooks on the started server.
func (e *Env) installWebhooks(opts *envtest.WebhookInstallOptions) error {
	e.WebhookInstallOptions = opts
	err := opts.Install(e.Config)
	// Install may have written the certificates before it failed.
	e.t.Cleanup(func() {
		if err := opts.Cleanup(); err != nil {
			e.t.Errorf("miniapitest: remove webhook certificates: %v", err)
		}
	})
	if err != nil {
		return fmt.Errorf("install webhooks: %w", err)
	}
	return nil
}

// WaitForWebhookServer waits until the test's webhook server answers
// TLS at the address WithWebhooks gave it, with the certificate
// WithWebhooks generated, or ctx ends: kubebuilder's scaffolded suites
// wait the same way (tls.Dial in a loop) after starting the manager.
func (e *Env) WaitForWebhookServer(ctx context.Context) error {
	o := e.WebhookInstallOptions
	if o == nil {
		return fmt.Errorf("miniapitest: no webhooks installed (WithWebhooks)")
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(o.LocalServingCAData) {
		return fmt.Errorf("miniapitest: the webhook CA is not PEM")
	}
	addr := net.JoinHostPort(o.LocalServingHost, strconv.Itoa(o.LocalServingPort))
	d := tls.Dialer{Config: &tls.Config{RootCAs: pool, ServerName: o.LocalServingHost, MinVersion: tls.VersionTLS12}}
	for {
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			return conn.Close()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("miniapitest: webhook server at %s: %w (last: %v)", addr, ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
