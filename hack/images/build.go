package images

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/almproject/alm/hack/bundlegen"
)

// Source is the value of the org.opencontainers.image.source label (the module path).
const Source = "github.com/almproject/alm"

// Target is one image to build.
type Target struct {
	// Name is the binary and image name: the entrypoint is /<Name>.
	Name string
	// Package is the Go package of the binary, relative to the repository root (e.g. ./cmd/alm).
	Package string
	Version string
	// Tag is the image reference written into the archive (e.g. alm.local/konnect-operator:1.1.0).
	Tag string
}

// Archive is the file name of the target's archive: <name>-<version>.tar.
func (t Target) Archive() string { return t.Name + "-" + t.Version + ".tar" }

// PauseImage is the local node's pod sandbox image (test/cmd/pause), which test/localnode's containerd pulls.
const PauseImage = "alm.local/pause:1.0.0"

// Plan returns the images to build: alm.local/alm:<almVersion>, the local node's PauseImage, and for every package
// input in <root>/hack/bundles the image of every version (the image its bundle names), built from ./cmd/<name>.
func Plan(root, almVersion string) ([]Target, error) {
	targets := []Target{
		{Name: "alm", Package: "./cmd/alm", Version: almVersion, Tag: "alm.local/alm:" + almVersion},
		{Name: "pause", Package: "./test/cmd/pause", Version: "1.0.0", Tag: PauseImage},
	}
	inputs, err := filepath.Glob(filepath.Join(root, "hack", "bundles", "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(inputs)
	for _, in := range inputs {
		p, err := bundlegen.LoadPackage(in)
		if err != nil {
			return nil, err
		}
		imageName := p.ImageRepository[strings.LastIndex(p.ImageRepository, "/")+1:]
		if _, err := os.Stat(filepath.Join(root, "cmd", imageName)); err != nil {
			return nil, fmt.Errorf("%s: imageRepository %s: no command cmd/%s to build", in, p.ImageRepository, imageName)
		}
		for _, v := range p.Versions {
			targets = append(targets, Target{
				Name: imageName, Package: "./cmd/" + imageName, Version: v.Version, Tag: p.ImageFor(v),
			})
		}
	}
	return targets, nil
}

// Options are the build settings shared by every target.
type Options struct {
	// Root is the repository root (where go build runs).
	Root string
	// OutDir receives the archives (bin/images).
	OutDir string
	// GOARCH of the binaries; empty means the host's (runtime.GOARCH via `go env`).
	GOARCH string
	// Revision is the git commit for the revision label; empty leaves the label out.
	Revision string
	// Created is the images' creation time.
	Created time.Time
}

// Result is one archive written.
type Result struct {
	Path   string
	Tag    string
	Digest v1.Hash
}

// Build builds the target's binary, its image and its archive in opts.OutDir.
func Build(ctx context.Context, t Target, opts Options) (Result, error) {
	goarch := opts.GOARCH
	if goarch == "" {
		goarch = hostGOARCH(ctx)
	}
	bin, err := BuildBinary(ctx, opts.Root, t.Package, t.Version, goarch)
	if err != nil {
		return Result{}, err
	}
	img, err := NewImage(bin, Meta{
		Name: t.Name, Version: t.Version, GOARCH: goarch, Source: Source, Revision: opts.Revision, Created: opts.Created,
	})
	if err != nil {
		return Result{}, err
	}
	path := filepath.Join(opts.OutDir, t.Archive())
	digest, err := WriteArchive(path, img, t.Tag)
	if err != nil {
		return Result{}, err
	}
	return Result{Path: path, Tag: t.Tag, Digest: digest}, nil
}

// BuildBinary builds a static linux binary of the Go package (CGO_ENABLED=0, -trimpath, -s -w,
// -X main.version=<version>) and returns its content.
func BuildBinary(ctx context.Context, root, pkg, version, goarch string) ([]byte, error) {
	dir, err := os.MkdirTemp("", "images-build-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "bin")
	if err := BuildBinaryFile(ctx, root, pkg, version, goarch, out); err != nil {
		return nil, err
	}
	return os.ReadFile(out)
}

// BuildBinaryFile builds the binary BuildBinary builds into the file out, written by the linker.
func BuildBinaryFile(ctx context.Context, root, pkg, version, goarch, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w -X main.version="+version, "-o", out, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goarch)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s (GOARCH=%s): %w\n%s", pkg, goarch, err, stderr.String())
	}
	return nil
}

func hostGOARCH(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "go", "env", "GOARCH").Output()
	if err != nil {
		return "amd64"
	}
	return strings.TrimSpace(string(out))
}

// GitRevision returns the commit checked out in root, or "" when it is not known.
func GitRevision(ctx context.Context, root string) string {
	cmd := exec.CommandContext(ctx, "git", "rev-parse", "HEAD")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// CreatedFromEnv returns SOURCE_DATE_EPOCH as a time, or the Unix epoch when it is unset.
func CreatedFromEnv() (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	sec, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: want seconds since the Unix epoch: %w", s, err)
	}
	return time.Unix(sec, 0).UTC(), nil
}
