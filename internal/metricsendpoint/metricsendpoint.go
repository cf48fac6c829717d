// Package metricsendpoint configures the endpoint a manager serves its Prometheus metrics on, as kubebuilder v4
// projects do: HTTPS, and only to a caller whom the API server authenticates (a TokenReview of its bearer token) and
// authorizes for get on the non-resource URL /metrics (a SubjectAccessReview) — e.g. Prometheus's ServiceAccount
// bound to the ClusterRole alm-metrics-reader (config/rbac). Plain HTTP, open to whoever reaches the port, only when
// an admin asks for it. cmd/alm uses it; the attack suite (test/attack) runs the same configuration.
package metricsendpoint

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// DefaultBindAddress is where the metrics endpoint listens unless --metrics-bind-address says otherwise: the
// HTTPS port of kubebuilder v4 projects.
const DefaultBindAddress = ":8443"

// CertName and KeyName are the files of --metrics-cert-dir: the names a kubernetes.io/tls Secret (e.g. one
// cert-manager issues) has when it is mounted as a volume.
const (
	CertName = "tls.crt"
	KeyName  = "tls.key"
)

// Options are the metrics endpoint's flags.
type Options struct {
	// BindAddress is the address /metrics listens on; "0" disables it.
	BindAddress string
	// Secure serves /metrics over HTTPS to authenticated and authorized callers only; false serves plain HTTP to
	// anyone.
	Secure bool
	// CertDir holds CertName and KeyName, the serving certificate and its key; empty: a self-signed certificate
	// generated at start.
	CertDir string
}

// BindFlags defines --metrics-bind-address, --metrics-secure and --metrics-cert-dir on fs. readerRole is the
// ClusterRole that grants get on /metrics, named in the help.
func (o *Options) BindFlags(fs *flag.FlagSet, readerRole string) {
	fs.StringVar(&o.BindAddress, "metrics-bind-address", DefaultBindAddress,
		"Address the Prometheus metrics endpoint (/metrics) listens on; \"0\" disables it.")
	fs.BoolVar(&o.Secure, "metrics-secure", true,
		"Serve /metrics over HTTPS, and only to callers whose bearer token the API server authenticates (TokenReview) "+
			"and authorizes for get on the non-resource URL /metrics (SubjectAccessReview): bind Prometheus's "+
			"ServiceAccount to the ClusterRole "+readerRole+". --metrics-secure=false serves plain HTTP with no "+
			"authentication, so that anyone who reaches the port reads every namespace, package and version the "+
			"metrics list: use it only on a loopback address or behind a proxy of your own.")
	fs.StringVar(&o.CertDir, "metrics-cert-dir", "",
		"Directory holding the certificate ("+CertName+") and key ("+KeyName+") /metrics is served with, e.g. a "+
			"cert-manager Certificate's Secret mounted as a volume; they are read again when they change. Default: a "+
			"self-signed certificate generated at start, which scrapers cannot verify.")
}

// Validate checks what the flags say together: a certificate directory only with HTTPS, holding both files
// (controller-runtime would silently fall back to a self-signed certificate without them).
func (o Options) Validate() error {
	if o.CertDir == "" {
		return nil
	}
	if !o.Secure {
		return errors.New("--metrics-cert-dir is set but --metrics-secure=false serves plain HTTP: " +
			"drop --metrics-cert-dir, or drop --metrics-secure=false to serve HTTPS with that certificate")
	}
	var errs []error
	for _, name := range []string{CertName, KeyName} {
		path := filepath.Join(o.CertDir, name)
		if _, err := os.Stat(path); err != nil {
			errs = append(errs, fmt.Errorf("--metrics-cert-dir %s: %w (it must hold %s and %s)", o.CertDir, err, CertName, KeyName))
		}
	}
	return errors.Join(errs...)
}

// Open says whether the endpoint serves metrics to anyone who reaches it (plain HTTP, no authentication), for a
// warning at start.
func (o Options) Open() bool {
	return !o.Secure && o.BindAddress != "0"
}

// Server returns the options of controller-runtime's metrics server. With Secure, every request to /metrics passes
// filters.WithAuthenticationAndAuthorization, which asks the API server with the manager's own identity: that identity
// needs create on tokenreviews (authentication.k8s.io) and subjectaccessreviews (authorization.k8s.io).
func (o Options) Server() metricsserver.Options {
	s := metricsserver.Options{BindAddress: o.BindAddress, SecureServing: o.Secure}
	if !o.Secure {
		return s
	}
	s.FilterProvider = filters.WithAuthenticationAndAuthorization
	// HTTP/1.1 only, as kubebuilder v4 by default: HTTP/2's stream reset and rapid reset attacks (CVE-2023-44487,
	// CVE-2023-39325) cost a server more than a scraper gains.
	s.TLSOpts = []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }}
	if o.CertDir != "" {
		s.CertDir, s.CertName, s.KeyName = o.CertDir, CertName, KeyName
	}
	return s
}
