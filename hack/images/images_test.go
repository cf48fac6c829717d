package images

import (
	"archive/tar"
	"context"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

const root = "../.."

var (
	buildOnce   sync.Once
	built       Result
	builtTarget Target
	buildErr    error
)

// gatewayConfig builds the smallest of our images (gateway-config) once per test binary.
func gatewayConfig(t *testing.T) (Target, Result) {
	t.Helper()
	buildOnce.Do(func() {
		builtTarget = Target{Name: "gateway-config", Package: "./cmd/gateway-config", Version: "0.1.0", Tag: "alm.local/gateway-config:0.1.0"}
		out, err := os.MkdirTemp("", "images-test-")
		if err != nil {
			buildErr = err
			return
		}
		built, buildErr = Build(context.Background(), builtTarget, Options{
			Root: root, OutDir: out, Revision: "0123456789abcdef", Created: time.Unix(1700000000, 0),
		})
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtTarget, built
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.Path != "" {
		os.RemoveAll(filepath.Dir(built.Path))
	}
	os.Exit(code)
}

func TestArchiveConfigAndBinary(t *testing.T) {
	target, res := gatewayConfig(t)
	checkArchive(t, res.Path, target.Name, target.Version)
}

// TestBuiltArchives checks every archive `make images` wrote, when there are any.
func TestBuiltArchives(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join(root, "bin", "images", "*.tar"))
	if len(paths) == 0 {
		t.Skip("no archives in bin/images; run `make images`")
	}
	targets, err := Plan(root, "0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		path := filepath.Join(root, "bin", "images", tg.Archive())
		if _, err := os.Stat(path); err != nil {
			continue
		}
		t.Run(tg.Archive(), func(t *testing.T) { checkArchive(t, path, tg.Name, tg.Version) })
	}
}

// checkArchive opens an archive by its RepoTag, checks its config, and runs its entrypoint with --help from a copy
// extracted out of the image's own layer.
func checkArchive(t *testing.T, path, wantName, wantVersion string) {
	t.Helper()
	manifest, err := tarball.LoadManifest(func() (io.ReadCloser, error) { return os.Open(path) })
	if err != nil {
		t.Fatal(err)
	}
	if len(manifest) != 1 || len(manifest[0].RepoTags) != 1 {
		t.Fatalf("manifest.json = %+v, want one image with one RepoTag", manifest)
	}
	tag, err := name.NewTag(manifest[0].RepoTags[0])
	if err != nil {
		t.Fatal(err)
	}
	if want := "alm.local/" + wantName + ":" + wantVersion; tag.String() != want {
		t.Errorf("RepoTag %s, want %s", tag, want)
	}
	img, err := tarball.ImageFromPath(path, &tag)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.Config
	if c.User != "65532:65532" || !slices.Equal(c.Entrypoint, []string{"/" + wantName}) || len(c.Cmd) != 0 || c.WorkingDir != "/" {
		t.Errorf("user %q entrypoint %v cmd %v workdir %q", c.User, c.Entrypoint, c.Cmd, c.WorkingDir)
	}
	if cfg.OS != "linux" || cfg.Architecture != hostGOARCH(context.Background()) {
		t.Errorf("os/arch %s/%s", cfg.OS, cfg.Architecture)
	}
	if !slices.Contains(c.Env, "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt") {
		t.Errorf("env %v lacks SSL_CERT_FILE", c.Env)
	}
	if c.Labels[LabelTitle] != wantName || c.Labels[LabelVersion] != wantVersion || c.Labels[LabelSource] != Source ||
		c.Labels[LabelRevision] == "" {
		t.Errorf("labels %v", c.Labels)
	}
	files := layerFiles(t, img)
	if !strings.Contains(string(files["etc/passwd"]), "nonroot:x:65532:65532:") || !strings.Contains(string(files["etc/group"]), "nonroot:x:65532:") {
		t.Errorf("/etc/passwd %q /etc/group %q", files["etc/passwd"], files["etc/group"])
	}
	if pool := x509.NewCertPool(); !pool.AppendCertsFromPEM(files["etc/ssl/certs/ca-certificates.crt"]) {
		t.Error("/etc/ssl/certs/ca-certificates.crt holds no certificates")
	}
	runHelp(t, files[wantName], wantName)
}

// layerFiles returns the regular files of the image's layers by path.
func layerFiles(t *testing.T, img v1.Image) map[string][]byte {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			hdr, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if hdr.Typeflag == tar.TypeReg {
				data, err := io.ReadAll(tr)
				if err != nil {
					t.Fatal(err)
				}
				files[strings.TrimPrefix(hdr.Name, "/")] = data
			}
		}
		rc.Close()
	}
	return files
}

func runHelp(t *testing.T, binary []byte, name string) {
	t.Helper()
	if len(binary) == 0 {
		t.Fatalf("the layer has no /%s", name)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, binary, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(path, "--help").CombinedOutput()
	if err != nil || !strings.Contains(string(out), name) {
		t.Errorf("/%s --help: %v\n%s", name, err, out)
	}
}

func TestPushAndPullByDigest(t *testing.T) {
	_, res := gatewayConfig(t)
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	reg := strings.TrimPrefix(srv.URL, "http://") + "/team"
	pushed, err := PushArchives(context.Background(), filepath.Dir(res.Path), reg, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(pushed) != 1 || pushed[0].Digest != res.Digest || pushed[0].Ref != reg+"/gateway-config:0.1.0" {
		t.Fatalf("pushed %+v, want %s at %s/gateway-config:0.1.0", pushed, res.Digest, reg)
	}
	ref, err := name.NewDigest(reg+"/gateway-config@"+res.Digest.String(), name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(ref)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := img.Digest(); got != res.Digest {
		t.Errorf("pulled digest %s, want %s", got, res.Digest)
	}
}

func TestImagesAreDeterministic(t *testing.T) {
	m := Meta{Name: "x", Version: "1.0.0", GOARCH: "amd64", Source: Source, Created: time.Unix(0, 0)}
	var digests []v1.Hash
	for range 2 {
		img, err := NewImage([]byte("binary"), m)
		if err != nil {
			t.Fatal(err)
		}
		d, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		digests = append(digests, d)
	}
	if digests[0] != digests[1] {
		t.Errorf("digests differ: %v", digests)
	}
}

func TestRetag(t *testing.T) {
	got, err := Retag("alm.local/konnect-operator:1.1.0", "localhost:5000/team/")
	if err != nil || got != "localhost:5000/team/konnect-operator:1.1.0" {
		t.Errorf("Retag = %q, %v", got, err)
	}
	if _, err := Retag("not a tag", "r"); err == nil || !strings.Contains(err.Error(), `"not a tag"`) {
		t.Errorf("err = %v, want one naming the tag", err)
	}
}
