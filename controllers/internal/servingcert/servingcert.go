// Package servingcert issues the certificates of the webhooks ALM installs: a CA per OperatorVersion and, signed by
// it, a serving certificate per webhook Service, decides when each is renewed, and when a webhook Deployment's pods
// must be rolled onto a renewed one (rollout.go). Its decisions are pure apart from the randomness of new keys;
// Issue (issue.go) reads the Secrets and Deployments they need, and Serves makes a TLS handshake with a Service.
package servingcert

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"time"
)

// Keys of the CA Secret and of the serving certificate Secret. The serving Secret is of type kubernetes.io/tls
// (tls.crt, tls.key) and also holds the CA (ca.crt), as OLM's does.
const (
	KeyCACert         = "ca.crt"
	KeyCAKey          = "ca.key"
	KeyPreviousCACert = "ca-previous.crt"
	KeyTLSCert        = "tls.crt"
	KeyTLSKey         = "tls.key"
)

// Lifetimes: a CA lives two years, a serving certificate one; each is renewed once less than a third of its
// lifetime remains, so there is always a long overlap in which the old one is still valid.
const (
	CALifetime      = 2 * 365 * 24 * time.Hour
	ServingLifetime = 365 * 24 * time.Hour
)

// Due says whether a certificate valid from notBefore to notAfter must be renewed at now.
func Due(notBefore, notAfter, now time.Time) bool {
	return now.After(notAfter.Add(-notAfter.Sub(notBefore) / 3))
}

// CA is a CA's certificate and key (PEM), and the previous CA's certificate while it is still valid: a caBundle
// trusts both, so certificates of the previous CA keep working while they are replaced.
type CA struct {
	Cert, Key, Previous []byte
}

// Bundle is the caBundle that trusts ca and, while valid, its predecessor.
func (ca CA) Bundle() []byte {
	return append(append([]byte{}, ca.Cert...), ca.Previous...)
}

// Data is the CA as the data of its Secret.
func (ca CA) Data() map[string][]byte {
	d := map[string][]byte{KeyCACert: ca.Cert, KeyCAKey: ca.Key}
	if len(ca.Previous) > 0 {
		d[KeyPreviousCACert] = ca.Previous
	}
	return d
}

// EnsureCA returns the CA to use at now given the data of the version's CA Secret (nil: none yet) and of the CA
// Secret of the version it replaces (nil: none, or collected): the version's own while it is not due; else the
// replaced version's while that one has not expired, even when it is due, because the old version's webhooks trust
// only it and both versions' pods read the same serving Secret (a new CA during the upgrade would fail the old
// webhooks' calls once their pods reload); else a new one, which keeps the one it renews as Previous, so a CA that
// came due during an upgrade is renewed once the old version is gone. renewed says whether the result differs from
// own.
func EnsureCA(own, replaced map[string][]byte, name string, now time.Time) (ca CA, renewed bool, err error) {
	if c, ok := validCA(own, now); ok {
		return c, false, nil
	}
	if c, ok := unexpiredCA(replaced, now); ok {
		return c, !bytes.Equal(c.Cert, own[KeyCACert]), nil
	}
	fresh, err := NewCA(name, now)
	if err != nil {
		return CA{}, false, err
	}
	if cert, err := parseCert(own[KeyCACert]); err == nil && now.Before(cert.NotAfter) {
		fresh.Previous = own[KeyCACert]
	}
	return fresh, true, nil
}

// validCA reads a CA from Secret data when it parses, its key matches and it is not due.
func validCA(data map[string][]byte, now time.Time) (CA, bool) {
	cert, err := parseCert(data[KeyCACert])
	if err != nil || Due(cert.NotBefore, cert.NotAfter, now) {
		return CA{}, false
	}
	return unexpiredCA(data, now)
}

// unexpiredCA reads a CA from Secret data when it parses, its key matches and it has not expired.
func unexpiredCA(data map[string][]byte, now time.Time) (CA, bool) {
	cert, err := parseCert(data[KeyCACert])
	if err != nil || !now.Before(cert.NotAfter) {
		return CA{}, false
	}
	if _, err := parseKey(data[KeyCAKey]); err != nil {
		return CA{}, false
	}
	ca := CA{Cert: data[KeyCACert], Key: data[KeyCAKey]}
	if prev, err := parseCert(data[KeyPreviousCACert]); err == nil && now.Before(prev.NotAfter) {
		ca.Previous = data[KeyPreviousCACert]
	}
	return ca, true
}

// NewCA creates a self-signed CA named name, valid for CALifetime from now.
func NewCA(name string, now time.Time) (CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return CA{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: name},
		NotBefore: now.Add(-time.Minute), NotAfter: now.Add(CALifetime),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return CA{}, err
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return CA{}, err
	}
	return CA{Cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), Key: keyPEM}, nil
}

// EnsureServing returns the serving certificate and key (PEM) for hosts at now: those of existing (the data of the
// serving Secret) while they are signed by ca, name exactly hosts and are not due; else new ones signed by ca.
func EnsureServing(existing map[string][]byte, ca CA, hosts []string, now time.Time) (cert, key []byte, err error) {
	if c, err := parseCert(existing[KeyTLSCert]); err == nil && !Due(c.NotBefore, c.NotAfter, now) &&
		slices.Equal(c.DNSNames, hosts) && signedBy(c, ca.Cert) {
		if _, err := parseKey(existing[KeyTLSKey]); err == nil {
			return existing[KeyTLSCert], existing[KeyTLSKey], nil
		}
	}
	caCert, err := parseCert(ca.Cert)
	if err != nil {
		return nil, nil, fmt.Errorf("CA certificate: %w", err)
	}
	caKey, err := parseKey(ca.Key)
	if err != nil {
		return nil, nil, fmt.Errorf("CA key: %w", err)
	}
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: hosts[0]}, DNSNames: hosts,
		NotBefore: now.Add(-time.Minute), NotAfter: now.Add(ServingLifetime),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &k.PublicKey, caKey)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err := encodeKey(k)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM, nil
}

// NextRenewal is when the earliest of the certificates (PEM) becomes due; zero when none parses.
func NextRenewal(certs ...[]byte) time.Time {
	var next time.Time
	for _, data := range certs {
		c, err := parseCert(data)
		if err != nil {
			continue
		}
		at := c.NotAfter.Add(-c.NotAfter.Sub(c.NotBefore) / 3)
		if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	return next
}

// Hosts are the DNS names a Service is called by.
func Hosts(service, namespace string) []string {
	return []string{service + "." + namespace + ".svc", service + "." + namespace + ".svc.cluster.local"}
}

func signedBy(c *x509.Certificate, caPEM []byte) bool {
	ca, err := parseCert(caPEM)
	return err == nil && bytes.Equal(c.RawIssuer, ca.RawSubject) && c.CheckSignatureFrom(ca) == nil
}

func parseCert(data []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM certificate")
	}
	return x509.ParseCertificate(block.Bytes)
}

func parseKey(data []byte) (*ecdsa.PrivateKey, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("no PEM key")
	}
	return x509.ParseECPrivateKey(block.Bytes)
}

func encodeKey(k *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return n
}
