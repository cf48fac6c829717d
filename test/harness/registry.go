package harness

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	opv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/bundle"
	"github.com/almproject/alm/catalog/fbc"
	"github.com/almproject/alm/catalog/image"
	"github.com/almproject/alm/catalog/index"
)

// Registry is go-containerregistry's in-process OCI registry over plain HTTP on loopback, with request counters, a
// log of the requests it served, and switches a test flips: SetDown drops every connection (a registry that is gone),
// TamperBlob serves other bytes for one blob.
//
// Its port is the kernel's to give, and a port is given again once its registry is closed: an image CatalogSource
// left by an earlier test (in this process or another on the machine) that names the old registry's host:port polls
// whichever registry listens there now. A test that counts requests counts those of its own repositories
// (ManifestRequests), and shows the log (Served) when a count is wrong.
type Registry struct {
	// Host is host:port.
	Host string

	manifests, blobs atomic.Int64

	mu       sync.Mutex
	down     bool
	tampered map[string]bool
	byRepo   map[string]int64
	served   []ServedRequest
}

// ServedRequest is one request the registry was asked: when, what, and by which client.
type ServedRequest struct {
	Time                            time.Time
	Method, Path, UserAgent, Remote string
}

func (s ServedRequest) String() string {
	return fmt.Sprintf("%s %s %s from %s (User-Agent %q)", s.Time.Format("15:04:05.000000"), s.Method, s.Path, s.Remote, s.UserAgent)
}

// NewRegistry starts a registry for the test.
func NewRegistry(t testing.TB) *Registry {
	t.Helper()
	r := &Registry{tampered: map[string]bool{}, byRepo: map[string]int64{}}
	inner := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.count(req)
		r.mu.Lock()
		r.served = append(r.served, ServedRequest{Time: time.Now(), Method: req.Method, Path: req.URL.Path,
			UserAgent: req.UserAgent(), Remote: req.RemoteAddr})
		if repo, _, ok := strings.Cut(strings.TrimPrefix(req.URL.Path, "/v2/"), "/manifests/"); ok {
			r.byRepo[repo]++
		}
		down, tamper := r.down, r.tamperedBlob(req)
		r.mu.Unlock()
		switch {
		case down:
			drop(w)
		case tamper && req.Method == http.MethodGet:
			rec := httptest.NewRecorder()
			inner.ServeHTTP(rec, req)
			body := rec.Body.Bytes()
			if len(body) > 0 {
				body[len(body)/2] ^= 0xff
			}
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			_, _ = io.Copy(w, bytes.NewReader(body))
		default:
			inner.ServeHTTP(w, req)
		}
	}))
	t.Cleanup(srv.Close)
	r.Host = strings.TrimPrefix(srv.URL, "http://")
	return r
}

// count counts manifest requests and blob downloads.
func (r *Registry) count(req *http.Request) {
	switch {
	case strings.Contains(req.URL.Path, "/manifests/"):
		r.manifests.Add(1)
	case strings.Contains(req.URL.Path, "/blobs/") && req.Method == http.MethodGet:
		r.blobs.Add(1)
	}
}

// drop closes the connection without an answer, as a registry that is gone; 503 where it cannot.
func drop(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	http.Error(w, "registry down", http.StatusServiceUnavailable)
}

// Requests returns how many manifest requests (HEAD or GET) and blob downloads the registry has been asked for,
// including those it dropped while down.
func (r *Registry) Requests() (manifests, blobs int64) { return r.manifests.Load(), r.blobs.Load() }

// ManifestRequests returns how many manifest requests (HEAD or GET) the registry has been asked for in repository
// (host-relative, e.g. "catalogs/ops"): a repository no earlier test named is asked only by this test's sources.
func (r *Registry) ManifestRequests(repository string) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byRepo[repository]
}

// Served returns the requests the registry was asked since the i-th (0: all), one a line, to say who fetched
// what when a count is wrong.
func (r *Registry) Served(i int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, s := range r.served[min(i, len(r.served)):] {
		b.WriteString(s.String() + "\n")
	}
	return b.String()
}

// ServedCount is how many requests the registry was asked so far (a start for Served).
func (r *Registry) ServedCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.served)
}

// tamperedBlob says whether req fetches a blob TamperBlob named. r.mu held.
func (r *Registry) tamperedBlob(req *http.Request) bool {
	i := strings.LastIndex(req.URL.Path, "/blobs/")
	return i >= 0 && r.tampered[req.URL.Path[i+len("/blobs/"):]]
}

// SetDown makes the registry drop every request (true) or serve again (false).
func (r *Registry) SetDown(down bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.down = down
}

// TamperBlob makes the registry serve the blob with this digest with one byte changed.
func (r *Registry) TamperBlob(digest string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tampered[digest] = true
}

// Ref is the reference of repository:tag (or repository@digest) in this registry.
func (r *Registry) Ref(repoAndTag string) string { return r.Host + "/" + repoAndTag }

// PushBundle builds the bundle image of the bundle directory dir (see WriteBundle) and pushes it as ref. It
// returns the image's manifest digest and the digest of its one layer.
func (r *Registry) PushBundle(t testing.TB, dir, ref string) (digest, layer string) {
	t.Helper()
	img, err := image.BundleImage(dir)
	if err != nil {
		t.Fatal(err)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("bundle image layers: %v, %v", layers, err)
	}
	l, err := layers[0].Digest()
	if err != nil {
		t.Fatal(err)
	}
	digest, err = image.Push(context.Background(), img, ref, image.Options{Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	return digest, l.String()
}

// ImageCatalogSource is an image CatalogSource for this registry (plain HTTP: it is on loopback). The loops that
// pull bundle images use its pull options; no test here needs its catalog image to exist.
func (r *Registry) ImageCatalogSource(namespace, name string) *operatorsv1alpha1.CatalogSource {
	return &operatorsv1alpha1.CatalogSource{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: operatorsv1alpha1.CatalogSourceSpec{
			Image: &operatorsv1alpha1.ImageSource{Ref: r.Ref("catalog:latest"), Insecure: true},
		},
	}
}

// ImageOperatorVersion is the OperatorVersion a catalog creates for d when it lists d's bundle only as an image
// (olm.csv.metadata and the image): name, package, version, CRD descriptions and spec.bundle, no install strategy
// and no objects; source names the CatalogSource whose pull options pull it.
func ImageOperatorVersion(d Demo, ref, digest string, source *operatorsv1alpha1.CatalogSource) *operatorsv1alpha1.OperatorVersion {
	ov := d.OperatorVersion()
	ov.Spec.Install = opv1alpha1.NamedInstallStrategy{}
	ov.Spec.Objects = nil
	ov.Spec.Bundle = &operatorsv1alpha1.BundleReference{Image: ref, Digest: digest}
	ov.Spec.Source = &operatorsv1alpha1.CatalogReference{Namespace: source.Namespace, Name: source.Name}
	return ov
}

// WithContentDigest sets ov's spec.bundle to the digest of its content in spec, as the catalog loops record it.
func WithContentDigest(t testing.TB, ov *operatorsv1alpha1.OperatorVersion) *operatorsv1alpha1.OperatorVersion {
	t.Helper()
	d, err := bundle.ContentDigest(&ov.Spec)
	if err != nil {
		t.Fatal(err)
	}
	ov.Spec.Bundle = &operatorsv1alpha1.BundleReference{Digest: d}
	return ov
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
	digest, err := image.Push(context.Background(), img, r.Ref(ref), image.Options{Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	return digest
}

// PushBundleByDigest pushes a bundle directory as repo:tag (host-relative) and returns its reference by digest.
func (r *Registry) PushBundleByDigest(t testing.TB, dir, repo, tag string) string {
	t.Helper()
	digest, _ := r.PushBundle(t, dir, r.Ref(repo+":"+tag))
	return r.Ref(repo + "@" + digest)
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
				images[b.Name] = r.PushBundleByDigest(t, b.Path, "bundles/"+b.Package, b.Name)
			}
		}
	}
	var out bytes.Buffer
	if err := ix.WriteCatalogWith("test", "json", &out, index.RenderOptions{Images: images, OmitObjects: true}); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
