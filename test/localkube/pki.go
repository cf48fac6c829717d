package localkube

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// PKI is a certificate authority of its own with the key pairs it signed, as PEM files in one directory: what a
// cluster with a node needs beyond envtest's own certificates (see NodeOptions).
type PKI struct {
	Dir string
	ca  *x509.Certificate
	key *ecdsa.PrivateKey
}

// NewPKI creates a CA named cn and writes ca.crt under dir.
func NewPKI(dir, cn string) (*PKI, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		Subject: pkix.Name{CommonName: cn}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := sign(tmpl, nil, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	p := &PKI{Dir: dir, key: key}
	if p.ca, err = x509.ParseCertificate(der); err != nil {
		return nil, err
	}
	return p, os.WriteFile(p.CAFile(), pemCert(der), 0o644)
}

// CAFile is the CA certificate's PEM file.
func (p *PKI) CAFile() string { return filepath.Join(p.Dir, "ca.crt") }

// CAPEM is the CA certificate, PEM-encoded.
func (p *PKI) CAPEM() []byte {
	return pemCert(p.ca.Raw)
}

// Serving writes <name>.crt and <name>.key: a server certificate for the IP addresses and names in sans.
func (p *PKI) Serving(name string, sans ...string) (certFile, keyFile string, err error) {
	tmpl := &x509.Certificate{Subject: pkix.Name{CommonName: name}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	for _, s := range sans {
		if ip := net.ParseIP(s); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, s)
		}
	}
	return p.issue(name, tmpl)
}

// Client writes <name>.crt and <name>.key: a client certificate for user cn in groups, as Kubernetes reads one
// (common name and organizations).
func (p *PKI) Client(name, cn string, groups ...string) (certFile, keyFile string, err error) {
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn, Organization: groups},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	return p.issue(name, tmpl)
}

func (p *PKI) issue(name string, tmpl *x509.Certificate) (string, string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := sign(tmpl, p.ca, &key.PublicKey, p.key)
	if err != nil {
		return "", "", fmt.Errorf("certificate %s: %w", name, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", "", err
	}
	certFile, keyFile := filepath.Join(p.Dir, name+".crt"), filepath.Join(p.Dir, name+".key")
	if err := os.WriteFile(certFile, pemCert(der), 0o644); err != nil {
		return "", "", err
	}
	return certFile, keyFile, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
}

// sign signs tmpl with signerKey as parent (tmpl itself when parent is nil), valid from an hour ago for a year.
func sign(tmpl, parent *x509.Certificate, pub *ecdsa.PublicKey, signerKey *ecdsa.PrivateKey) ([]byte, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(365*24*time.Hour)
	if parent == nil {
		parent = tmpl
	}
	return x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signerKey)
}

func pemCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
