package localenv

import (
	"context"
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
)

// ImageHost is the registry host the images `make images` builds are named under (alm.local/<name>:<version>),
// which the node runner mirrors to the environment's registry.
const ImageHost = "alm.local"

// Registry is the environment's OCI registry: go-containerregistry's in-process registry behind an http.Server on a
// free loopback port, plain HTTP as a local development registry. It counts the manifest requests (GET and HEAD) it
// serves per repository, so a test can see who pulled what.
type Registry struct {
	// Host is host:port, e.g. 127.0.0.1:41234.
	Host string

	srv       *http.Server
	mu        sync.Mutex
	manifests map[string]int64 // repository -> manifest requests
}

// StartRegistry starts a registry on 127.0.0.1 on a free port; Close stops it.
func StartRegistry() (*Registry, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("starting the registry: %w", err)
	}
	r := &Registry{Host: ln.Addr().String(), manifests: map[string]int64{}}
	inner := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	r.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if repo, ok := manifestRepository(req.URL.Path); ok {
			r.mu.Lock()
			r.manifests[repo]++
			r.mu.Unlock()
		}
		inner.ServeHTTP(w, req)
	})}
	go func() { _ = r.srv.Serve(ln) }()
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
	err := r.srv.Shutdown(ctx)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// PushArchives pushes every image of the docker-save archives in dir (what `make images` writes) to the registry
// under its name without the alm.local host: alm.local/konnect-operator:1.0.0 becomes
// <registry>/konnect-operator:1.0.0. It returns the references pushed.
func (r *Registry) PushArchives(ctx context.Context, dir string) ([]string, error) {
	pushed, err := hackimages.PushArchives(ctx, dir, r.Host, true)
	if err != nil {
		return nil, fmt.Errorf("pushing the images of %s to the registry %s: %w", dir, r.Host, err)
	}
	refs := make([]string, 0, len(pushed))
	for _, p := range pushed {
		refs = append(refs, p.Ref)
	}
	return refs, nil
}
