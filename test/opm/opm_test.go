package opm_test

import (
	"archive/tar"
	"bytes"
	"io"
	"io/fs"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"
	"sigs.k8s.io/yaml"

	"github.com/almproject/alm/test/localkube"
	"github.com/almproject/alm/test/opm"
)

// TestRenderBundleImageFromLoopbackRegistry pushes a registry+v1 bundle image of bundles/konnect-operator/1.0.0 to a
// plain-HTTP registry on loopback and checks that real opm renders it as the olm.bundle of that package and version.
func TestRenderBundleImageFromLoopbackRegistry(t *testing.T) {
	root, err := localkube.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	ref := strings.TrimPrefix(srv.URL, "http://") + "/konnect-operator-bundle:1.0.0"
	pushBundle(t, filepath.Join(root, "bundles", "konnect-operator", "1.0.0"), ref)

	out, err := opm.Run(t, "render", "--use-http", "--output=json", ref)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := declcfg.LoadReader(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("opm's output is not FBC: %v\n%s", err, out)
	}
	if len(cfg.Bundles) != 1 || len(cfg.Packages)+len(cfg.Channels)+len(cfg.Others) != 0 {
		t.Fatalf("want exactly one olm.bundle, got %d bundles, %d packages, %d channels, %d others",
			len(cfg.Bundles), len(cfg.Packages), len(cfg.Channels), len(cfg.Others))
	}
	b := cfg.Bundles[0]
	if b.Schema != declcfg.SchemaBundle || b.Package != "konnect-operator" || b.Image != ref {
		t.Errorf("bundle = schema %q, package %q, image %q; want %q, konnect-operator, %q", b.Schema, b.Package, b.Image, declcfg.SchemaBundle, ref)
	}
	props, err := property.Parse(b.Properties)
	if err != nil {
		t.Fatal(err)
	}
	if len(props.Packages) != 1 || props.Packages[0].PackageName != "konnect-operator" || props.Packages[0].Version != "1.0.0" {
		t.Errorf("olm.package properties = %+v, want konnect-operator 1.0.0", props.Packages)
	}
}

// pushBundle pushes dir (manifests/ and metadata/) as a one-layer registry+v1 bundle image whose config labels are
// the annotations of its metadata/annotations.yaml.
func pushBundle(t *testing.T, dir, ref string) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if err := tw.WriteHeader(&tar.Header{Name: filepath.ToSlash(rel), Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(data))}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err != nil || tw.Close() != nil {
		t.Fatalf("packing %s: %v", dir, err)
	}
	annotations, err := os.ReadFile(filepath.Join(dir, "metadata", "annotations.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(annotations, &meta); err != nil {
		t.Fatal(err)
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf.Bytes())), nil })
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err == nil {
		img, err = mutate.Config(img, v1.Config{Labels: meta.Annotations})
	}
	if err != nil {
		t.Fatal(err)
	}
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img, remote.WithContext(t.Context())); err != nil {
		t.Fatalf("pushing %s: %v", ref, err)
	}
}
