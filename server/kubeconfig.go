package server

import (
	"encoding/base64"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// KubeconfigName is the name of the cluster, user and context in the
// kubeconfig miniapi writes.
const KubeconfigName = "miniapi"

// DefaultKubeconfigPath is where miniapi writes its kubeconfig unless
// told otherwise: "kubeconfig" in the embedded etcd's data directory,
// which belongs to this server alone. A server on an external etcd
// (dataDir "") has no directory of its own, so it writes
// "miniapi-<port>.kubeconfig" in the working directory: the port keeps
// replicas started side by side from overwriting each other's file.
func DefaultKubeconfigPath(dataDir, serverURL string) string {
	if dataDir != "" {
		return filepath.Join(dataDir, "kubeconfig")
	}
	port := "default"
	if u, err := url.Parse(serverURL); err == nil && u.Port() != "" {
		port = u.Port()
	}
	return "miniapi-" + port + ".kubeconfig"
}

// WriteKubeconfig writes a kubeconfig for this server at path (replacing
// the file atomically, mode 0600) and returns the path made absolute, so
// that KUBECONFIG keeps working from any directory. It has one cluster,
// user and context, all named KubeconfigName, and that context is
// current. Over HTTPS the cluster carries the CA that verifies the served
// certificate and the user the admin client certificate (system:masters);
// with UnsafePlainHTTP there are no credentials.
//
// With --tls-cert-file the served certificate chain is the cluster's
// certificate-authority-data: Go clients (kubectl, client-go) trust a
// certificate that is itself in their roots, so this works for
// self-signed and CA-signed certificates alike, with verification on.
// The certificate must name the host of the URL, as for any client.
func (s *Server) WriteKubeconfig(path string) (string, error) {
	var caData, certData, keyData []byte
	if s.sec.tls != nil {
		caData, certData, keyData = s.sec.servingCA, s.sec.pki.AdminCert, s.sec.pki.AdminKey
	}
	data, err := kubeconfig(clientURL(s.url), caData, certData, keyData)
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("server: kubeconfig: %w", err)
	}
	if err := writeFileAtomic(abs, data, 0o600); err != nil {
		return "", fmt.Errorf("server: kubeconfig: %w", err)
	}
	return abs, nil
}

// AdminConfig is a client-go configuration for this server with the
// admin's credentials (system:masters), as the kubeconfig has them.
func (s *Server) AdminConfig() *rest.Config {
	cfg := &rest.Config{Host: clientURL(s.url)}
	if s.sec.tls != nil {
		cfg.TLSClientConfig = rest.TLSClientConfig{
			CAData: s.sec.servingCA, CertData: s.sec.pki.AdminCert, KeyData: s.sec.pki.AdminKey,
		}
	}
	return cfg
}

// CertDir is the directory of the certificates the server made (CA,
// serving, admin, service account key); "" if it has none.
func (s *Server) CertDir() string {
	if s.sec.pki == nil {
		return ""
	}
	return s.sec.pki.Dir
}

// clientURL turns the URL a server listens on into one a client can dial:
// an unspecified address (0.0.0.0, ::) becomes the loopback address of
// the same family.
func clientURL(serverURL string) string {
	u, err := url.Parse(serverURL)
	if err != nil {
		return serverURL
	}
	ip := net.ParseIP(u.Hostname())
	if ip == nil || !ip.IsUnspecified() {
		return serverURL
	}
	host := "127.0.0.1"
	if ip.To4() == nil {
		host = "::1"
	}
	u.Host = net.JoinHostPort(host, u.Port())
	return u.String()
}

// kubeconfig encodes a kubeconfig (clientcmd's v1 Config) for server, in
// YAML as kubectl writes them.
func kubeconfig(server string, caData, certData, keyData []byte) ([]byte, error) {
	cluster := map[string]any{"server": server}
	if len(caData) > 0 {
		cluster["certificate-authority-data"] = base64.StdEncoding.EncodeToString(caData)
	}
	user := map[string]any{}
	if len(certData) > 0 {
		user["client-certificate-data"] = base64.StdEncoding.EncodeToString(certData)
		user["client-key-data"] = base64.StdEncoding.EncodeToString(keyData)
	}
	cfg := map[string]any{
		"apiVersion":      "v1",
		"kind":            "Config",
		"clusters":        []any{map[string]any{"name": KubeconfigName, "cluster": cluster}},
		"users":           []any{map[string]any{"name": KubeconfigName, "user": user}},
		"contexts":        []any{map[string]any{"name": KubeconfigName, "context": map[string]any{"cluster": KubeconfigName, "user": KubeconfigName}}},
		"current-context": KubeconfigName,
		"preferences":     map[string]any{},
	}
	data, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("server: kubeconfig: %w", err)
	}
	return data, nil
}

// writeFileAtomic writes data to a temporary file beside path and renames
// it over path, so a reader sees the old file or the new, never part.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after a successful rename this finds nothing
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
