package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// TestKubeconfig writes the kubeconfig of a plain and of a TLS server and
// checks client-go reaches each through it alone, the TLS one with
// certificate verification on.
func TestKubeconfig(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		name := "http"
		if useTLS {
			name = "https"
		}
		t.Run(name, func(t *testing.T) {
			var cfg Config
			if useTLS {
				cfg.TLSCertFile, cfg.TLSKeyFile = selfSigned(t)
			}
			srv := start(t, cfg)
			path := DefaultKubeconfigPath(srv.cfg.DataDir, srv.URL())
			abs, err := srv.WriteKubeconfig(path)
			if err != nil {
				t.Fatal(err)
			}
			if abs != filepath.Join(srv.cfg.DataDir, "kubeconfig") {
				t.Errorf("written to %s, want <data-dir>/kubeconfig", abs)
			}
			if fi, err := os.Stat(abs); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("kubeconfig mode %v (%v), want 0600", fi.Mode(), err)
			}
			rc, err := clientcmd.BuildConfigFromFlags("", abs)
			if err != nil {
				t.Fatal(err)
			}
			if rc.Host != srv.URL() {
				t.Errorf("kubeconfig server %s, want %s", rc.Host, srv.URL())
			}
			if useTLS && (len(rc.CAData) == 0 || rc.Insecure) {
				t.Errorf("TLS kubeconfig has CA data %d bytes, insecure %v; want the certificate and verification", len(rc.CAData), rc.Insecure)
			}
			rc.Timeout = 10 * time.Second
			dc, err := discovery.NewDiscoveryClientForConfig(rc)
			if err != nil {
				t.Fatal(err)
			}
			v, err := dc.ServerVersion()
			if err != nil {
				t.Fatalf("server version through the kubeconfig: %v", err)
			}
			if !strings.Contains(v.GitVersion, "miniapi") {
				t.Errorf("gitVersion %q", v.GitVersion)
			}
			// A client without the CA must refuse the server: the
			// kubeconfig, not luck, is what makes TLS verify.
			if useTLS {
				bare := rest.CopyConfig(rc)
				bare.CAData = nil
				dc, err := discovery.NewDiscoveryClientForConfig(bare)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := dc.ServerVersion(); err == nil {
					t.Error("a client without the kubeconfig's CA trusted the self-signed server")
				}
			}
		})
	}
}

func TestDefaultKubeconfigPath(t *testing.T) {
	tests := []struct{ dataDir, url, want string }{
		{"/var/lib/miniapi", "http://127.0.0.1:8080", "/var/lib/miniapi/kubeconfig"},
		{"", "http://127.0.0.1:8080", "miniapi-8080.kubeconfig"},
		{"", "https://[::1]:6443", "miniapi-6443.kubeconfig"},
	}
	for _, tc := range tests {
		if got := DefaultKubeconfigPath(tc.dataDir, tc.url); got != tc.want {
			t.Errorf("DefaultKubeconfigPath(%q, %q) = %q, want %q", tc.dataDir, tc.url, got, tc.want)
		}
	}
}

func TestClientURL(t *testing.T) {
	tests := map[string]string{
		"http://0.0.0.0:8080":    "http://127.0.0.1:8080",
		"https://[::]:6443":      "https://[::1]:6443",
		"http://127.0.0.1:8080":  "http://127.0.0.1:8080",
		"https://10.1.2.3:6443":  "https://10.1.2.3:6443",
		"http://[::1]:8080":      "http://[::1]:8080",
		"https://localhost:8443": "https://localhost:8443",
	}
	for in, want := range tests {
		if got := clientURL(in); got != want {
			t.Errorf("clientURL(%s) = %s, want %s", in, got, want)
		}
	}
}
