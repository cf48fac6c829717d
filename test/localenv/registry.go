package localenv

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"

	hackimages "github.com/almproject/alm/hack/images"
	"github.com/almproject/alm/test/localkube"
)

// ImageHost is the registry host the images `make images` builds are named under (alm.local/<name>:<version>),
// which the node pulls from the environment's registry (its mirror for that host).
const ImageHost = "alm.local"

// Registry is the environment's OCI registry: go-containerregistry's in-process registry, served twice: over HTTPS
// on the node's address with a certificate of a CA of its own (Host: what ALM in its pod pulls catalog and bundle
// images from, trusting CAPEM through a CatalogSource's caBundle, as with a private registry), and over plain HTTP
// on loopback (Loopback: the node's mirror for alm.local, and where the archives are pushed). It counts the manifest
// requests (GET and HEAD) it serves per repository, so a test can see who pulled what.
type Registry struct {
	// Host is the HTTPS address, node-ip:port.
	Host string
	// Loopback is the plain-HTTP address, 127.0.0.1:port.
	Loopback string
	// CAPEM is the PEM certificate of the CA of Host's certificate, and CAFile a file holding it.
	CAPEM  []byte
	CAFile string

	srvs      []*http.Server
	mu        sync.Mutex
	manifests map[string]int64 // repository -> manifest requests
}

// StartRegistry starts a registry on free ports of ip (HTTPS) and of 127.0.0.1 (HTTP), with its CA and certificate
// in pkiDir; Close stops it.
func StartRegistry(ip, pkiDir string) (*Registry, error) {
	pki, err := localkube.NewPKI(pkiDir, "alm-local-registry-ca")
	if err != nil {
		return nil, err
	}
	certFile, keyFile, err := pki.Serving("registry", ip)
	if err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	secure, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return nil, fmt.Errorf("starting the registry: %w", err)
	}
	plain, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = secure.Close()
		return nil, fmt.Errorf("starting the registry: %w", err)
	}
	r := &Registry{Host: secure.Addr().String(), Loopback: plain.Addr().String(), CAPEM: pki.CAPEM(), CAFile: pki.CAFile(), manifests: map[string]int64{}}
	inner := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	handler := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if repo, ok := manifestRepository(req.URL.Path); ok {
			r.mu.Lock()
			r.manifests[repo]++
			r.mu.Unlock()
		}
		inner.ServeHTTP(w, req)
	})
	for _, ln := range []net.Listener{tls.NewListener(secure, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}), plain} {
		srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: handler}
		r.srvs = append(r.srvs, srv)
		go func() { _ = srv.Serve(ln) }()
	}
	return r, nil
}

// manifestRepository returns the repository of a manifest request path (/v2/<repository>/manifests/<reference>).
func manifestRepository(path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, "/v2/")
	if !ok {
		return "", false
	}
	if repo, _, ok := strings.Cut(rest, "/manifests/"); ok {
		return repo, true
	}
	return "", false
}

// ManifestRequests is how many manifest requests (a pull's first request, and a poll's only one) the registry has
// served for repository (e.g. "konnect-operator", "catalogs/alm").
func (r *Registry) ManifestRequests(repository string) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.manifests[repository]
}

// Close stops the registry; what was pushed is gone with it.
func (r *Registry) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var errs []error
	for _, srv := range r.srvs {
		if err := srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// PushArchives pushes every image of the docker-save archives in dir (what `make images` writes) to the registry
// under its name without the alm.local host: alm.local/konnect-operator:1.0.0 becomes
// <registry>/konnect-operator:1.0.0. It returns the references pushed, on Loopback.
func (r *Registry) PushArchives(ctx context.Context, dir string) ([]string, error) {
	pushed, err := hackimages.PushArchives(ctx, dir, r.Loopback, true)
	if err != nil {
		return nil, fmt.Errorf("pushing the images of %s to the registry %s: %w", dir, r.Loopback, err)
	}
	refs := make([]string, 0, len(pushed))
	for _, p := range pushed {
		refs = append(refs, p.Ref)
	}
	return refs, nil
}
