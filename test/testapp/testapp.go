// Package testapp builds the tests' operator container, test/cmd/testapp, as an image: a small program that serves
// /healthz and /readyz on --listen (/readyz failing from --unready-after on) and runs until it is stopped. The chaos
// scenarios and test/workloads push it to the local environment's registry as the operator their bundles install.
package testapp

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Build compiles test/cmd/testapp of the repository at root statically and returns it as an image: entrypoint
// /app/testapp, Cmd --listen=:8081, PATH=/app.
func Build(root string) (v1.Image, error) {
	dir, err := os.MkdirTemp("", "testimage-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "testapp")
	build := exec.Command("go", "build", "-o", bin, "./test/cmd/testapp")
	build.Dir, build.Env = root, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build testapp: %w: %s", err, out)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	_ = tw.WriteHeader(&tar.Header{Name: "app/", Typeflag: tar.TypeDir, Mode: 0o755})
	_ = tw.WriteHeader(&tar.Header{Name: "app/testapp", Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(data))})
	_, _ = tw.Write(data)
	if err := tw.Close(); err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf.Bytes())), nil })
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return nil, err
	}
	return mutate.Config(img, v1.Config{Entrypoint: []string{"/app/testapp"}, Cmd: []string{"--listen=:8081"},
		Env: []string{"PATH=/app"}, WorkingDir: "/app"})
}
