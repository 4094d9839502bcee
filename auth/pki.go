package auth

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"k8s.io/client-go/util/keyutil"
)

// File names in a certificate directory (see EnsurePKI).
const (
	CAFile            = "ca.crt"
	CAKeyFile         = "ca.key"
	ServingCertFile   = "apiserver.crt"
	ServingKeyFile    = "apiserver.key"
	AdminCertFile     = "admin.crt"
	AdminKeyFile      = "admin.key"
	ServiceAccountKey = "sa.key"
	ServiceAccountPub = "sa.pub"
)

// AdminUser and AdminGroup are the identity of the admin client
// certificate: the group kube-apiserver lets do anything
// (user.SystemPrivilegedGroup), as kubeadm's admin.conf was.
const (
	AdminUser  = "miniapi-admin"
	AdminGroup = "system:masters"
)

// Lifetimes of what EnsurePKI makes. A leaf within renewBefore of its end
// is made again at start.
const (
	caLifetime   = 10 * 365 * 24 * time.Hour
	leafLifetime = 365 * 24 * time.Hour
	renewBefore  = 30 * 24 * time.Hour
)

// PKI is a certificate directory's paths, filled by EnsurePKI.
type PKI struct {
	Dir string
	// CACert is the CA's certificate in PEM: it signs the serving and
	// admin certificates and verifies client certificates.
	CACert []byte
	// ServingCert, ServingKey, AdminCert and AdminKey are PEM.
	ServingCert, ServingKey []byte
	AdminCert, AdminKey     []byte
	// ServiceAccountKey signs service account tokens.
	ServiceAccountKey crypto.Signer
}

// EnsurePKI makes dir hold a CA, a serving certificate for hosts, an
// admin client certificate (AdminUser in AdminGroup) and a service
// account signing key, creating what is missing (files 0600, the
// directory 0700) and remaking a serving certificate that does not name
// every host or a leaf near its end. Keys are ECDSA P-256: generating one
// takes microseconds, where RSA would take most of the start-up budget.
func EnsurePKI(dir string, hosts []string) (*PKI, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("auth: certificate directory: %w", err)
	}
	// Replicas sharing a directory may start at once: one makes what is
	// missing, the others then read it.
	unlock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	p := &PKI{Dir: dir}
	caCert, caKey, err := p.ensureCA()
	if err != nil {
		return nil, err
	}
	p.ServingCert, p.ServingKey, err = p.ensureLeaf(ServingCertFile, ServingKeyFile, caCert, caKey, servingTemplate(hosts))
	if err != nil {
		return nil, err
	}
	p.AdminCert, p.AdminKey, err = p.ensureLeaf(AdminCertFile, AdminKeyFile, caCert, caKey, adminTemplate())
	if err != nil {
		return nil, err
	}
	if p.ServiceAccountKey, err = p.ensureServiceAccountKey(); err != nil {
		return nil, err
	}
	return p, nil
}

// Path returns the path of a file in the directory.
func (p *PKI) Path(name string) string { return filepath.Join(p.Dir, name) }

// ensureCA loads the CA or makes one.
func (p *PKI) ensureCA() (*x509.Certificate, crypto.Signer, error) {
	certPEM, keyPEM, err := readPair(p.Path(CAFile), p.Path(CAKeyFile))
	if err == nil {
		cert, key, perr := parsePair(certPEM, keyPEM)
		if perr == nil && time.Until(cert.NotAfter) > renewBefore {
			p.CACert = certPEM
			return cert, key, nil
		}
		// A CA that cannot be read or is about to end is replaced, and
		// every leaf with it: they no longer chain to it.
		for _, f := range []string{ServingCertFile, AdminCertFile} {
			os.Remove(p.Path(f))
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: fmt.Sprintf("miniapi-ca@%d", now.Unix())},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(caLifetime),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, nil, fmt.Errorf("auth: make the CA: %w", err)
	}
	cert, _ := x509.ParseCertificate(der)
	certPEM, keyPEM, err = encodePair(der, key)
	if err != nil {
		return nil, nil, err
	}
	if err := writePair(p.Path(CAFile), p.Path(CAKeyFile), certPEM, keyPEM); err != nil {
		return nil, nil, err
	}
	p.CACert = certPEM
	return cert, key, nil
}

// ensureLeaf loads a certificate signed by ca that still fits tmpl, or
// makes one.
func (p *PKI) ensureLeaf(certFile, keyFile string, ca *x509.Certificate, caKey crypto.Signer, tmpl *x509.Certificate) ([]byte, []byte, error) {
	certPEM, keyPEM, err := readPair(p.Path(certFile), p.Path(keyFile))
	if err == nil {
		if cert, _, perr := parsePair(certPEM, keyPEM); perr == nil && fits(cert, ca, tmpl) {
			return certPEM, keyPEM, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl.SerialNumber = serial()
	tmpl.NotBefore = now.Add(-time.Hour)
	tmpl.NotAfter = now.Add(leafLifetime)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("auth: make %s: %w", certFile, err)
	}
	if certPEM, keyPEM, err = encodePair(der, key); err != nil {
		return nil, nil, err
	}
	if err := writePair(p.Path(certFile), p.Path(keyFile), certPEM, keyPEM); err != nil {
		return nil, nil, err
	}
	return certPEM, keyPEM, nil
}

// fits reports whether cert, signed by ca, is what tmpl asks for and
// not near its end.
func fits(cert, ca *x509.Certificate, tmpl *x509.Certificate) bool {
	if cert.CheckSignatureFrom(ca) != nil || time.Until(cert.NotAfter) < renewBefore {
		return false
	}
	if cert.Subject.CommonName != tmpl.Subject.CommonName || !slices.Equal(cert.Subject.Organization, tmpl.Subject.Organization) {
		return false
	}
	for _, name := range tmpl.DNSNames {
		if !slices.Contains(cert.DNSNames, name) {
			return false
		}
	}
	for _, ip := range tmpl.IPAddresses {
		if !slices.ContainsFunc(cert.IPAddresses, ip.Equal) {
			return false
		}
	}
	return true
}

// servingTemplate is the serving certificate for hosts (names or IPs),
// plus the names a client inside a cluster would use.
func servingTemplate(hosts []string) *x509.Certificate {
	t := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "miniapi"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			if !ip.IsUnspecified() && !slices.ContainsFunc(t.IPAddresses, ip.Equal) {
				t.IPAddresses = append(t.IPAddresses, ip)
			}
		} else if h != "" && !slices.Contains(t.DNSNames, h) {
			t.DNSNames = append(t.DNSNames, h)
		}
	}
	return t
}

// adminTemplate is the admin client certificate.
func adminTemplate() *x509.Certificate {
	return &x509.Certificate{
		Subject:     pkix.Name{CommonName: AdminUser, Organization: []string{AdminGroup}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
}

// ensureServiceAccountKey loads the service account signing key or makes
// one, and writes its public half beside it for whoever verifies tokens
// elsewhere.
func (p *PKI) ensureServiceAccountKey() (crypto.Signer, error) {
	path := p.Path(ServiceAccountKey)
	data, err := os.ReadFile(path)
	if err == nil {
		k, perr := keyutil.ParsePrivateKeyPEM(data)
		if perr != nil {
			return nil, fmt.Errorf("auth: %s: %w", path, perr)
		}
		signer, ok := k.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("auth: %s: not a signing key", path)
		}
		return signer, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return nil, err
	}
	if err := writeFile(path, pem.EncodeToMemory(&pem.Block{Type: keyutil.ECPrivateKeyBlockType, Bytes: der})); err != nil {
		return nil, err
	}
	if err := writeFile(p.Path(ServiceAccountPub), pem.EncodeToMemory(&pem.Block{Type: keyutil.PublicKeyBlockType, Bytes: pub})); err != nil {
		return nil, err
	}
	return key, nil
}

// serial is a random certificate serial number.
func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return n
}

func readPair(certPath, keyPath string) ([]byte, []byte, error) {
	c, err := os.ReadFile(certPath)
	if err != nil {
		return nil, nil, err
	}
	k, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, nil, err
	}
	return c, k, nil
}

// parsePair reads a PEM certificate and the PEM private key that goes
// with it.
func parsePair(certPEM, keyPEM []byte) (*x509.Certificate, crypto.Signer, error) {
	block, _ := pem.Decode(certPEM)
	if block == nil {
		return nil, nil, errors.New("no PEM certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, nil, err
	}
	k, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return nil, nil, err
	}
	signer, ok := k.(crypto.Signer)
	if !ok {
		return nil, nil, errors.New("not a signing key")
	}
	pub, err := x509.MarshalPKIXPublicKey(signer.Public())
	if err != nil || !bytes.Equal(pub, cert.RawSubjectPublicKeyInfo) {
		return nil, nil, errors.New("the key does not match the certificate")
	}
	return cert, signer, nil
}

func encodePair(der []byte, key *ecdsa.PrivateKey) ([]byte, []byte, error) {
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: keyutil.ECPrivateKeyBlockType, Bytes: kder}), nil
}

// writePair writes the key first, so a certificate on disk always has
// its key.
func writePair(certPath, keyPath string, certPEM, keyPEM []byte) error {
	if err := writeFile(keyPath, keyPEM); err != nil {
		return err
	}
	return writeFile(certPath, certPEM)
}

// writeFile writes data with mode 0600 through a temporary file and a
// rename, so a crash leaves the old file or the new.
func writeFile(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("auth: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("auth: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	return nil
}

// lockDir takes an exclusive lock on dir's lock file, for other
// processes and goroutines alike, and returns its release.
func lockDir(dir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("auth: lock the certificate directory: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("auth: lock the certificate directory: %w", err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
