package image

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/google/go-containerregistry/pkg/compression"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

var catalogFiles = map[string]string{
	"etcd/catalog.json":  `{"schema":"olm.package","name":"etcd","defaultChannel":"stable"}`,
	"etcd/bundles.yaml":  "schema: olm.bundle\nname: etcd.v1.0.0\npackage: etcd\n",
	"konnect/index.json": `{"schema":"olm.package","name":"konnect"}`,
}

func catalogImage(t *testing.T, files map[string]string) v1.Image {
	t.Helper()
	m := fstest.MapFS{}
	for p, data := range files {
		m[p] = &fstest.MapFile{Data: []byte(data), Mode: 0o644}
	}
	img, err := CatalogImage(m)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// filesOf returns the files a pulled catalog extracted, then closes it and checks that Close removed them.
func filesOf(t *testing.T, cat *Catalog) map[string]string {
	t.Helper()
	files := readTree(t, cat.Dir)
	if err := cat.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cat.Dir); !os.IsNotExist(err) {
		t.Errorf("Close left %s: %v", cat.Dir, err)
	}
	return files
}

func TestCatalogRoundTrip(t *testing.T) {
	reg := newRegistry(t, false, nil)
	c := newClient(t, Options{})
	ctx := context.Background()
	ref := reg.ref("catalogs/operators:latest")
	pushed := push(t, c, catalogImage(t, catalogFiles), ref)

	digest, err := c.Digest(ctx, ref)
	if err != nil || digest != pushed {
		t.Fatalf("Digest = %s, %v; pushed %s", digest, err, pushed)
	}
	cat, err := c.PullCatalog(ctx, ref, digest)
	if err != nil {
		t.Fatal(err)
	}
	if got := filesOf(t, cat); !reflect.DeepEqual(got, catalogFiles) {
		t.Errorf("files = %v, want %v", got, catalogFiles)
	}
	if cat.Digest != pushed || cat.ConfigsDir != "/configs" || cat.Labels[LabelConfigs] != "/configs" {
		t.Errorf("catalog = %s %s %v", cat.Digest, cat.ConfigsDir, cat.Labels)
	}
	cat, err = c.PullCatalog(ctx, ref, digest)
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	data, err := fs.ReadFile(cat.FS(), "etcd/catalog.json")
	if err != nil || string(data) != catalogFiles["etcd/catalog.json"] {
		t.Errorf("FS: %q, %v", data, err)
	}
}

// writeBundle writes a bundle directory and returns it with its files.
func writeBundle(t *testing.T, version string) (string, map[string]string) {
	t.Helper()
	files := map[string]string{
		"manifests/etcd.clusterserviceversion.yaml": "kind: ClusterServiceVersion\nmetadata:\n  name: etcd.v" + version + "\n",
		"manifests/etcdclusters.crd.yaml":           "kind: CustomResourceDefinition\n",
		"metadata/annotations.yaml": "annotations:\n" +
			"  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n" +
			"  operators.operatorframework.io.bundle.manifests.v1: manifests/\n" +
			"  operators.operatorframework.io.bundle.metadata.v1: metadata/\n" +
			"  operators.operatorframework.io.bundle.package.v1: etcd\n" +
			"  operators.operatorframework.io.bundle.channels.v1: alpha,stable\n" +
			"  operators.operatorframework.io.bundle.channel.default.v1: stable\n",
	}
	dir := t.TempDir()
	for p, data := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, files
}

func bundleImage(t *testing.T, version string) (v1.Image, map[string]string) {
	t.Helper()
	dir, files := writeBundle(t, version)
	img, err := BundleImage(dir)
	if err != nil {
		t.Fatal(err)
	}
	return img, files
}

func TestBundleRoundTrip(t *testing.T) {
	reg := newRegistry(t, false, nil)
	c := newClient(t, Options{})
	img, files := bundleImage(t, "1.0.0")
	ref := reg.ref("bundles/etcd:v1.0.0")
	digest := push(t, c, img, ref)

	out := filepath.Join(t.TempDir(), "bundle")
	b, err := c.PullBundle(context.Background(), ref, digest, out)
	if err != nil {
		t.Fatal(err)
	}
	if got := readTree(t, out); !reflect.DeepEqual(got, files) {
		t.Errorf("extracted %v, want %v", got, files)
	}
	if b.Digest != digest || b.Package != "etcd" || b.Channels != "alpha,stable" || b.DefaultChannel != "stable" ||
		b.Labels[LabelBundleMediaType] != BundleMediaType || b.Dir != out {
		t.Errorf("bundle = %+v", b)
	}
	if _, err := c.PullBundle(context.Background(), ref, digest, out); err == nil {
		t.Error("a second pull into an existing directory succeeded")
	}
}

func TestBuildIsDeterministic(t *testing.T) {
	dir, _ := writeBundle(t, "1.0.0")
	var digests []string
	for range 2 {
		img, err := BundleImage(dir)
		if err != nil {
			t.Fatal(err)
		}
		d, _ := img.Digest()
		digests = append(digests, d.String())
		// Touch the files: timestamps must not matter.
		_ = os.Chtimes(filepath.Join(dir, "metadata", "annotations.yaml"), timeZero, timeZero)
	}
	a, _ := catalogImage(t, catalogFiles).Digest()
	b, _ := catalogImage(t, catalogFiles).Digest()
	if digests[0] != digests[1] || a != b {
		t.Errorf("bundle digests %v, catalog digests %s %s", digests, a, b)
	}
}

// TestUnchangedPollDownloadsNoBlob: polling is one manifest HEAD per Digest, no blob.
func TestUnchangedPollDownloadsNoBlob(t *testing.T) {
	reg := newRegistry(t, false, nil)
	ref := reg.ref("catalogs/operators:latest")
	push(t, newClient(t, Options{}), catalogImage(t, catalogFiles), ref)
	c := newClient(t, Options{})
	ctx := context.Background()
	reg.counts.reset()
	first, err := c.Digest(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("first poll (new client): %v, %d bytes written", reg.counts.kinds, reg.counts.written)
	reg.counts.reset()
	second, err := c.Digest(ctx, ref)
	if err != nil || second != first {
		t.Fatalf("second poll %s, %v; first %s", second, err, first)
	}
	t.Logf("unchanged poll: %v, %d bytes written", reg.counts.kinds, reg.counts.written)
	if reg.counts.get("manifest HEAD") != 1 || reg.counts.get("manifest GET") != 0 ||
		reg.counts.get("blob GET") != 0 || reg.counts.get("blob HEAD") != 0 || reg.counts.get("ping") != 0 {
		t.Errorf("unchanged poll requests = %v, want exactly one manifest HEAD", reg.counts.kinds)
	}
	// A digest reference needs no request at all.
	reg.counts.reset()
	if d, err := c.Digest(ctx, reg.ref("catalogs/operators@"+first)); err != nil || d != first {
		t.Errorf("Digest(digest ref) = %s, %v", d, err)
	}
	if len(reg.counts.kinds) != 0 {
		t.Errorf("Digest(digest ref) made requests %v", reg.counts.kinds)
	}
}

// TestDigestFallsBackToGet: a registry that does not answer HEAD.
func TestDigestFallsBackToGet(t *testing.T) {
	var noHead atomic.Bool
	reg := newRegistry(t, false, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if noHead.Load() && r.Method == http.MethodHead && strings.Contains(r.URL.Path, "/manifests/") {
				w.WriteHeader(http.StatusMethodNotAllowed)
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	ref := reg.ref("catalogs/operators:latest")
	c := newClient(t, Options{})
	pushed := push(t, c, catalogImage(t, catalogFiles), ref)
	noHead.Store(true)
	reg.counts.reset()
	if d, err := c.Digest(context.Background(), ref); err != nil || d != pushed {
		t.Fatalf("Digest = %s, %v; want %s", d, err, pushed)
	}
	if reg.counts.get("manifest GET") != 1 || reg.counts.get("blob GET") != 0 {
		t.Errorf("requests = %v", reg.counts.kinds)
	}
}

func TestIndexCatalogChoosesPlatform(t *testing.T) {
	reg := newRegistry(t, false, nil)
	other := "s390x"
	if runtime.GOARCH == other {
		other = "ppc64le"
	}
	idx := mutate.AppendManifests(empty.Index,
		mutate.IndexAddendum{Add: catalogImage(t, map[string]string{"p/other.json": "{}"}),
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: other}}},
		mutate.IndexAddendum{Add: catalogImage(t, map[string]string{"p/mine.json": "{}"}),
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: runtime.GOARCH}}})
	ref := reg.ref("catalogs/multi:latest")
	r, _ := name.ParseReference(ref)
	if err := remote.WriteIndex(r, idx); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, Options{})
	digest, err := c.Digest(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := idx.Digest(); digest != want.String() {
		t.Errorf("Digest = %s, want the index digest %s", digest, want)
	}
	cat, err := c.PullCatalog(context.Background(), ref, digest)
	if err != nil {
		t.Fatal(err)
	}
	files := filesOf(t, cat)
	if _, ok := files["p/mine.json"]; !ok || len(files) != 1 || cat.Digest != digest {
		t.Errorf("files %v digest %s", files, cat.Digest)
	}
}

func TestChoosePlatform(t *testing.T) {
	d := func(os, arch string) v1.Descriptor {
		return v1.Descriptor{MediaType: "application/vnd.oci.image.manifest.v1+json",
			Platform: &v1.Platform{OS: os, Architecture: arch}, Digest: v1.Hash{Algorithm: "sha256", Hex: os + arch}}
	}
	for _, tc := range []struct {
		name      string
		manifests []v1.Descriptor
		goarch    string
		want      string
	}{
		{"own arch", []v1.Descriptor{d("linux", "amd64"), d("linux", "arm64")}, "arm64", "linuxarm64"},
		{"amd64 fallback", []v1.Descriptor{d("linux", "s390x"), d("linux", "amd64")}, "arm64", "linuxamd64"},
		{"first", []v1.Descriptor{d("windows", "amd64"), d("linux", "s390x")}, "arm64", "windowsamd64"},
		{"not linux", []v1.Descriptor{d("windows", "arm64"), d("linux", "arm64")}, "arm64", "linuxarm64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := choosePlatform(tc.manifests, tc.goarch)
			if !ok || got.Digest.Hex != tc.want {
				t.Errorf("chose %s, want %s", got.Digest.Hex, tc.want)
			}
		})
	}
	if _, ok := choosePlatform(nil, "amd64"); ok {
		t.Error("chose from an empty index")
	}
}

// TestWhiteouts: a file whiteout and an opaque directory across two layers.
func TestWhiteouts(t *testing.T) {
	reg := newRegistry(t, false, nil)
	lower := layerOf(t, file("configs/a.json", "a"), file("configs/b.json", "b"), file("configs/sub/c.json", "c"),
		file("configs/old/d.json", "d"), file("configs/gone/e.json", "e"), file("usr/bin/opm", "binary"))
	upper := layerOf(t, file("configs/.wh.a.json", ""), file("configs/old/.wh..wh..opq", ""),
		file("configs/old/f.json", "f"), file("configs/.wh.gone", ""), file("configs/new.json", "new"))
	img := imageOfLayers(t, map[string]string{LabelConfigs: "/configs"}, lower, upper)
	c := newClient(t, Options{})
	ref := reg.ref("catalogs/layered:1")
	digest := push(t, c, img, ref)
	cat, err := c.PullCatalog(context.Background(), ref, digest)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"b.json": "b", "sub/c.json": "c", "old/f.json": "f", "new.json": "new"}
	if got := filesOf(t, cat); !reflect.DeepEqual(got, want) {
		t.Errorf("files = %v, want %v", got, want)
	}
}

func TestSQLiteIndexRefused(t *testing.T) {
	reg := newRegistry(t, false, nil)
	c := newClient(t, Options{})
	db := layerOf(t, file("database/index.db", "SQLite format 3\x00"), file("bin/opm", "binary"))
	for _, tc := range []struct {
		name   string
		labels map[string]string
	}{
		{"database label", map[string]string{LabelDatabase: "/database/index.db"}},
		{"no configs label, /database/index.db", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref := reg.ref("catalogs/sqlite:" + strings.ReplaceAll(tc.name[:4], " ", ""))
			digest := push(t, c, imageOfLayers(t, tc.labels, db), ref)
			_, err := c.PullCatalog(context.Background(), ref, digest)
			t.Log(err)
			r := asRefused(t, err)
			if r.Rule != RuleSQLite || Reason(err) != ReasonRefused ||
				!strings.Contains(err.Error(), "opm migrate "+ref+" <dir>") || !strings.Contains(err.Error(), "almctl catalog push") {
				t.Errorf("err = %v (reason %s)", err, Reason(err))
			}
		})
	}
}

func TestEmptyCatalogRefused(t *testing.T) {
	reg := newRegistry(t, false, nil)
	c := newClient(t, Options{})
	ref := reg.ref("catalogs/empty:1")
	digest := push(t, c, imageOfLayers(t, nil, layerOf(t, file("etc/hosts", "x"))), ref)
	_, err := c.PullCatalog(context.Background(), ref, digest)
	if r := asRefused(t, err); r.Rule != RuleNoContent {
		t.Errorf("err = %v", err)
	}
}

// TestTagMoved: pulling by the digest Digest returned gives that content even if the tag moved; a registry that
// answers a digest with another manifest (the tag's new one) is refused naming both digests.
func TestTagMoved(t *testing.T) {
	var lie atomic.Value // string; when set, manifest requests for this digest are answered with the tag's manifest
	reg := newRegistry(t, false, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if l, _ := lie.Load().(string); l != "" && strings.HasSuffix(r.URL.Path, "/manifests/"+l) {
				r.URL.Path = strings.TrimSuffix(r.URL.Path, l) + "latest"
			}
			h.ServeHTTP(w, r)
		})
	})
	c := newClient(t, Options{})
	ctx := context.Background()
	ref := reg.ref("catalogs/moving:latest")
	push(t, c, catalogImage(t, map[string]string{"p/v1.json": "1"}), ref)
	d1, err := c.Digest(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	d2 := push(t, c, catalogImage(t, map[string]string{"p/v2.json": "2"}), ref)

	cat, err := c.PullCatalog(ctx, ref, d1)
	if err != nil || cat.Digest != d1 || filesOf(t, cat)["p/v1.json"] != "1" {
		t.Fatalf("pull of the polled digest: %v, %v", cat, err)
	}
	lie.Store(d1)
	_, err = c.PullCatalog(ctx, ref, d1)
	t.Log(err)
	if r := asRefused(t, err); r.Rule != RuleDigest || Reason(err) != ReasonDigestMismatch ||
		!strings.Contains(err.Error(), d1) || !strings.Contains(err.Error(), d2) {
		t.Errorf("err = %v", err)
	}
	out := filepath.Join(t.TempDir(), "b")
	_, err = c.PullBundle(ctx, reg.ref("catalogs/moving@"+d2), d1, out)
	if r := asRefused(t, err); r.Rule != RuleDigest || !strings.Contains(err.Error(), d1) || !strings.Contains(err.Error(), d2) {
		t.Errorf("pinned ref, other digest: %v", err)
	}
}

// TestTamperedBlobRefused: a registry serving other bytes for a layer digest.
func TestTamperedBlobRefused(t *testing.T) {
	var tampered atomic.Value // string: the blob digest to tamper with
	reg := newRegistry(t, false, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			target, _ := tampered.Load().(string)
			if target == "" || r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/blobs/"+target) {
				h.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			body := rec.Body.Bytes()
			body[len(body)/2] ^= 0xff
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			_, _ = w.Write(body)
		})
	})
	c := newClient(t, Options{})
	layer := layerOf(t, file("configs/p/catalog.json", strings.Repeat(`{"schema":"olm.package"}`, 200)))
	ref := reg.ref("catalogs/tampered:1")
	digest := push(t, c, imageOfLayers(t, nil, layer), ref)
	target := digestOf(t, layer)
	tampered.Store(target)
	_, err := c.PullCatalog(context.Background(), ref, digest)
	t.Log(err)
	r := asRefused(t, err)
	if r.Rule != RuleDigest || r.Layer != target || Reason(err) != ReasonDigestMismatch || !strings.Contains(r.Image, "catalogs/tampered@"+digest) {
		t.Errorf("err = %v (reason %s)", err, Reason(err))
	}
	if reg.counts.blob(target) == 0 {
		t.Error("the tampered blob was never requested")
	}
}

// TestPullErrorsClassified: TLS with a CA bundle and basic auth from a dockerconfigjson, and each failure's reason.
func TestPullErrorsClassified(t *testing.T) {
	reg := newRegistry(t, true, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if u, p, ok := r.BasicAuth(); !ok || u != "alm" || p != "s3cret" {
				w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	ca := pemOf(reg.srv.Certificate().Raw)
	good := dockerConfig(reg.host, "alm", "s3cret")
	kc, err := KeychainFromDockerConfigJSON(good)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewClient(Options{Keychain: kc, CABundle: ca})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ref := reg.ref("catalogs/private:1")
	pushed, err := c.Push(ctx, catalogImage(t, catalogFiles), ref)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := c.Digest(ctx, ref); err != nil || d != pushed {
		t.Fatalf("Digest over TLS with auth = %s, %v", d, err)
	}
	if cat, err := c.PullCatalog(ctx, ref, pushed); err != nil || len(filesOf(t, cat)) != len(catalogFiles) {
		t.Fatalf("PullCatalog over TLS with auth: %v", err)
	}
	// Check asks with the client's own credentials even for a digest reference: the credentials that pulled it
	// are not the caller's.
	pinned := reg.ref("catalogs/private@" + pushed)
	if err := c.Check(ctx, pinned, pushed); err != nil {
		t.Errorf("Check with the credentials: %v", err)
	}
	anonymous := newClient(t, Options{CABundle: ca})
	if err := anonymous.Check(ctx, pinned, pushed); Reason(err) != ReasonUnauthorized {
		t.Errorf("Check without credentials = %v (reason %s), want Unauthorized", err, Reason(err))
	}
	badKC, _ := KeychainFromDockerConfigJSON(dockerConfig(reg.host, "alm", "wrong"))
	closed := httptest.NewServer(http.NotFoundHandler())
	closedHost := strings.TrimPrefix(closed.URL, "http://")
	closed.Close()
	for _, tc := range []struct {
		name string
		opts Options
		ref  string
		want string
	}{
		{"wrong password", Options{Keychain: badKC, CABundle: ca}, ref, ReasonUnauthorized},
		{"anonymous", Options{CABundle: ca}, ref, ReasonUnauthorized},
		{"unknown repository", Options{Keychain: kc, CABundle: ca}, reg.ref("catalogs/nothing:1"), ReasonNotFound},
		{"unknown tag", Options{Keychain: kc, CABundle: ca}, reg.ref("catalogs/private:2"), ReasonNotFound},
		{"no CA", Options{Keychain: kc}, ref, ReasonTLS},
		{"nothing listening", Options{}, closedHost + "/catalogs/x:1", ReasonUnreachable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewClient(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Digest(ctx, tc.ref)
			if got := Reason(err); got != tc.want {
				t.Errorf("Reason(%v) = %s, want %s", err, got, tc.want)
			}
			if err != nil && !strings.Contains(err.Error(), tc.ref) {
				t.Errorf("error does not name the image: %v", err)
			}
		})
	}
}

func dockerConfig(host, user, pass string) []byte {
	return fmt.Appendf(nil, `{"auths":{%q:{"username":%q,"password":%q}}}`, host, user, pass)
}

// TestLayerCompressions: gzip, zstd and uncompressed layers read alike.
func TestLayerCompressions(t *testing.T) {
	reg := newRegistry(t, false, nil)
	c := newClient(t, Options{})
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	_ = tw.WriteHeader(&tar.Header{Name: "configs/p/catalog.json", Typeflag: tar.TypeReg, Mode: 0o644, Size: 2})
	_, _ = tw.Write([]byte("{}"))
	_ = tw.Close()
	for _, tc := range []struct {
		name string
		opts []tarball.LayerOption
	}{
		{"gzip", []tarball.LayerOption{tarball.WithMediaType(types.OCILayer)}},
		{"zstd", []tarball.LayerOption{tarball.WithCompression(compression.ZStd), tarball.WithMediaType(types.OCILayerZStd)}},
		{"none", []tarball.LayerOption{tarball.WithCompression(compression.None), tarball.WithMediaType(types.OCIUncompressedLayer)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
				return io.NopCloser(bytes.NewReader(buf.Bytes())), nil
			}, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			ref := reg.ref("catalogs/" + tc.name + ":1")
			digest := push(t, c, imageOfLayers(t, nil, layer), ref)
			cat, err := c.PullCatalog(context.Background(), ref, digest)
			if err != nil || filesOf(t, cat)["p/catalog.json"] != "{}" {
				t.Fatalf("%v, %v", cat, err)
			}
		})
	}
}

// TestSpaceSharedByPulls: pulls sharing a Space may not hold more than its MaxBytes on disk at once; a pull that
// would is stopped (a *SpaceError, not a refusal of the image) and leaves nothing, and Close gives the space back.
func TestSpaceSharedByPulls(t *testing.T) {
	reg := newRegistry(t, false, nil)
	space := &Space{MaxBytes: 3000}
	scratch := t.TempDir()
	c := newClient(t, Options{Space: space, ScratchDir: scratch})
	ctx := context.Background()
	ref := reg.ref("catalogs/space:1")
	digest := push(t, c, catalogImage(t, map[string]string{"p/catalog.json": strings.Repeat("x", 2000)}), ref)
	held, err := c.PullCatalog(ctx, ref, digest)
	if err != nil {
		t.Fatal(err)
	}
	if space.Used() != 2000 {
		t.Errorf("Used = %d while a 2000-byte catalog is extracted", space.Used())
	}
	_, err = c.PullCatalog(ctx, ref, digest)
	var full *SpaceError
	if !errors.As(err, &full) || Reason(err) != ReasonPullFailed || !strings.Contains(err.Error(), "3000 bytes") {
		t.Fatalf("second pull: %v, want a SpaceError naming the limit", err)
	}
	t.Log(err)
	if entries, _ := os.ReadDir(scratch); len(entries) != 1 || space.Used() != 2000 {
		t.Errorf("after the stopped pull: scratch holds %v, %d bytes reserved", entries, space.Used())
	}
	if err := held.Close(); err != nil || space.Used() != 0 {
		t.Fatalf("Close: %v, %d bytes still reserved", err, space.Used())
	}
	again, err := c.PullCatalog(ctx, ref, digest)
	if err != nil {
		t.Fatal(err)
	}
	if files := filesOf(t, again); len(files) != 1 || space.Used() != 0 {
		t.Errorf("files %d, %d bytes reserved after Close", len(files), space.Used())
	}
}

// TestRemoveScratch removes the catalog directories a stopped process left, and nothing else.
func TestRemoveScratch(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"catalog-123/configs/p", "other/x"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := RemoveScratch(dir); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 || entries[0].Name() != "other" {
		t.Errorf("left %v, want only other", entries)
	}
	if err := RemoveScratch(filepath.Join(dir, "missing")); err != nil {
		t.Errorf("missing directory: %v", err)
	}
}
