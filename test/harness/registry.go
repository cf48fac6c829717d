package harness

import (
	"bytes"
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/almproject/alm/catalog/fbc"
	"github.com/almproject/alm/catalog/image"
	"github.com/almproject/alm/catalog/index"
)

// Registry is an OCI registry in the test process (go-containerregistry's pkg/registry) over plain HTTP on
// loopback, with request counters and a switch that makes it unreachable.
type Registry struct {
	// Host is host:port.
	Host string

	manifests, blobs atomic.Int64
	down             atomic.Bool
}

// NewRegistry starts a registry for the test's life.
func NewRegistry(t testing.TB) *Registry {
	t.Helper()
	r := &Registry{}
	inner := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch {
		case strings.Contains(req.URL.Path, "/manifests/"):
			r.manifests.Add(1)
		case strings.Contains(req.URL.Path, "/blobs/") && req.Method == http.MethodGet:
			r.blobs.Add(1)
		}
		if r.down.Load() {
			if hj, ok := w.(http.Hijacker); ok {
				if conn, _, err := hj.Hijack(); err == nil {
					_ = conn.Close() // the connection drops, as with a registry that is gone
					return
				}
			}
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		inner.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.Host = strings.TrimPrefix(srv.URL, "http://")
	return r
}

// Requests returns how many manifest requests (HEAD or GET) and blob downloads the registry has been asked for,
// including those it dropped while down.
func (r *Registry) Requests() (manifests, blobs int64) { return r.manifests.Load(), r.blobs.Load() }

// SetDown makes every request fail as if the registry were gone (true) or serves again (false).
func (r *Registry) SetDown(down bool) { r.down.Store(down) }

// PushBundle pushes a bundle directory as a registry+v1 bundle image to repo (host-relative, e.g. "bundles/p") with
// tag and returns its reference by digest.
func (r *Registry) PushBundle(t testing.TB, dir, repo, tag string) string {
	t.Helper()
	img, err := image.BundleImage(dir)
	if err != nil {
		t.Fatal(err)
	}
	digest, err := image.Push(context.Background(), img, r.Host+"/"+repo+":"+tag, image.Options{Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	return r.Host + "/" + repo + "@" + digest
}

// PushCatalog pushes File-Based Catalog files (path under /configs -> content) as a catalog image to ref
// (host-relative, e.g. "catalogs/ops:latest") and returns the image's digest.
func (r *Registry) PushCatalog(t testing.TB, files map[string][]byte, ref string) string {
	t.Helper()
	fsys := fstest.MapFS{}
	for p, data := range files {
		fsys[p] = &fstest.MapFile{Data: data, Mode: 0o644}
	}
	img, err := image.CatalogImage(fsys)
	if err != nil {
		t.Fatal(err)
	}
	digest, err := image.Push(context.Background(), img, r.Host+"/"+ref, image.Options{Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	return digest
}

// ImageCatalog pushes each bundle directory under root as a bundle image and returns a File-Based Catalog of them
// as current opm writes one: olm.package, olm.channel, and olm.bundle documents naming the bundle image by digest
// with olm.csv.metadata and no olm.bundle.object, so the manifests exist only in the bundle images.
func (r *Registry) ImageCatalog(t testing.TB, root string) []byte {
	t.Helper()
	contents, err := fbc.LoadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	ix := index.New(index.Catalog{Name: "test", Contents: contents})
	images := map[string]string{}
	for _, pkg := range ix.PackageNames() {
		for _, p := range ix.Package(pkg) {
			for _, b := range p.Bundles {
				images[b.Name] = r.PushBundle(t, b.Path, "bundles/"+b.Package, b.Name)
			}
		}
	}
	var out bytes.Buffer
	if err := ix.WriteCatalogWith("test", "json", &out, index.RenderOptions{Images: images, OmitObjects: true}); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
