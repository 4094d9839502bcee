package auth

import (
	"bytes"
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestEnsurePKI(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pki")
	p, err := EnsurePKI(dir, []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("directory mode %v (%v), want 0700", fi.Mode().Perm(), err)
	}
	for _, f := range []string{CAFile, CAKeyFile, ServingCertFile, ServingKeyFile, AdminCertFile, AdminKeyFile, ServiceAccountKey, ServiceAccountPub} {
		fi, err := os.Stat(p.Path(f))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v (%v), want 0600", f, fi.Mode().Perm(), err)
		}
	}
	ca := parseCert(t, p.CACert)
	admin := parseCert(t, p.AdminCert)
	if admin.CheckSignatureFrom(ca) != nil || admin.Subject.CommonName != AdminUser || !slices.Equal(admin.Subject.Organization, []string{AdminGroup}) {
		t.Errorf("admin certificate %v, signed by the CA: %v", admin.Subject, admin.CheckSignatureFrom(ca))
	}
	serving := parseCert(t, p.ServingCert)
	if err := serving.VerifyHostname("127.0.0.1"); err != nil {
		t.Error(err)
	}
	if err := serving.VerifyHostname("kubernetes.default.svc"); err != nil {
		t.Error(err)
	}

	// A second start reuses everything.
	again, err := EnsurePKI(dir, []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.CACert, p.CACert) || !bytes.Equal(again.ServingCert, p.ServingCert) || !bytes.Equal(again.AdminKey, p.AdminKey) {
		t.Error("a second EnsurePKI made new certificates")
	}

	// A new address gets a serving certificate that names it, from the
	// same CA; the admin's stays.
	moved, err := EnsurePKI(dir, []string{"10.1.2.3", "miniapi.example"})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(moved.ServingCert, p.ServingCert) || !bytes.Equal(moved.AdminCert, p.AdminCert) || !bytes.Equal(moved.CACert, p.CACert) {
		t.Error("a new address did not remake just the serving certificate")
	}
	s := parseCert(t, moved.ServingCert)
	if !slices.ContainsFunc(s.IPAddresses, net.ParseIP("10.1.2.3").Equal) || s.VerifyHostname("miniapi.example") != nil {
		t.Errorf("serving certificate names %v %v", s.IPAddresses, s.DNSNames)
	}
}

func parseCert(t *testing.T, data []byte) *x509.Certificate {
	t.Helper()
	b, _ := pem.Decode(data)
	if b == nil {
		t.Fatal("no PEM block")
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestEnsurePKIConcurrently: servers starting together on one new
// directory end up with one CA and one signing key.
func TestEnsurePKIConcurrently(t *testing.T) {
	dir := t.TempDir()
	out := make(chan *PKI, 4)
	for range 4 {
		go func() {
			p, err := EnsurePKI(dir, []string{"127.0.0.1"})
			if err != nil {
				t.Error(err)
			}
			out <- p
		}()
	}
	var first *PKI
	for range 4 {
		p := <-out
		if p == nil {
			continue
		}
		if first == nil {
			first = p
		} else if !bytes.Equal(p.CACert, first.CACert) || !p.ServiceAccountKey.Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(first.ServiceAccountKey.Public()) {
			t.Error("concurrent starts made different CAs or signing keys")
		}
	}
}
