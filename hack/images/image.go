package images

import (
	"archive/tar"
	"bytes"
	"encoding/pem"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// Paths and identities inside every image.
const (
	CACertsPath = "/etc/ssl/certs/ca-certificates.crt"
	UID         = 65532
	User        = "65532:65532"
)

// OCI label keys set on every image.
const (
	LabelTitle    = "org.opencontainers.image.title"
	LabelVersion  = "org.opencontainers.image.version"
	LabelSource   = "org.opencontainers.image.source"
	LabelRevision = "org.opencontainers.image.revision"
)

// Meta is what an image says about itself besides its binary.
type Meta struct {
	// Name is the binary's name; the entrypoint is /<Name>.
	Name    string
	Version string
	// GOARCH is the binary's architecture (the config's architecture).
	GOARCH string
	// Source and Revision (a git commit; empty if unknown) become OCI labels.
	Source, Revision string
	// Created is the config's creation time and the layer files' modification time.
	Created time.Time
}

// Entrypoint is the absolute path of the binary in an image of that name.
func Entrypoint(name string) string { return "/" + name }

// NewImage returns the image of a static binary: one layer with /<name>, the CA roots, /etc/passwd, /etc/group and
// /tmp on an empty base, with the config described in the package documentation.
func NewImage(binary []byte, m Meta) (v1.Image, error) {
	layerTar, err := rootFS(binary, m)
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", m.Name, err)
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.DockerLayer))
	if err != nil {
		return nil, fmt.Errorf("image %s: layer: %w", m.Name, err)
	}
	// Docker schema 2 media types: a docker-save archive stores no manifest, and an image read back from one (what
	// `make push` sends) gets a Docker schema 2 manifest; building with the same types keeps the digests equal.
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.DockerManifestSchema2), types.DockerConfigJSON)
	created := v1.Time{Time: m.Created.UTC()}
	img, err := mutate.Append(base, mutate.Addendum{Layer: layer, History: v1.History{
		Created: created, CreatedBy: "hack/images: " + Entrypoint(m.Name) + ", CA roots, user nonroot", Comment: m.Version,
	}})
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", m.Name, err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("image %s: config: %w", m.Name, err)
	}
	cfg = cfg.DeepCopy()
	cfg.Created, cfg.OS, cfg.Architecture = created, "linux", m.GOARCH
	cfg.Config = v1.Config{
		User:       User,
		Entrypoint: []string{Entrypoint(m.Name)},
		WorkingDir: "/",
		Env:        []string{"PATH=/", "SSL_CERT_FILE=" + CACertsPath},
		Labels: map[string]string{
			LabelTitle: m.Name, LabelVersion: m.Version, LabelSource: m.Source, LabelRevision: m.Revision,
		},
	}
	if m.Revision == "" {
		delete(cfg.Config.Labels, LabelRevision)
	}
	return mutate.ConfigFile(img, cfg)
}

// rootFS returns the image's only layer as an uncompressed tar, entries in a fixed order and with fixed times.
func rootFS(binary []byte, m Meta) ([]byte, error) {
	certs, err := CACertificates()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	mtime := m.Created.UTC()
	dir := func(name string, mode int64, uid int) *tar.Header {
		return &tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: mode, Uid: uid, Gid: uid, ModTime: mtime, Format: tar.FormatPAX}
	}
	file := func(name string, mode int64, data []byte) *tar.Header {
		return &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: mtime, Format: tar.FormatPAX}
	}
	entries := []struct {
		hdr  *tar.Header
		data []byte
	}{
		{hdr: file(m.Name, 0o755, binary), data: binary},
		{hdr: dir("etc/", 0o755, 0)},
		{hdr: file("etc/group", 0o644, []byte("root:x:0:\nnonroot:x:65532:\n")), data: []byte("root:x:0:\nnonroot:x:65532:\n")},
		{hdr: file("etc/passwd", 0o644, passwd), data: passwd},
		{hdr: dir("etc/ssl/", 0o755, 0)},
		{hdr: dir("etc/ssl/certs/", 0o755, 0)},
		{hdr: file(CACertsPath[1:], 0o644, certs), data: certs},
		{hdr: dir("home/", 0o755, 0)},
		{hdr: dir("home/nonroot/", 0o700, UID)},
		{hdr: dir("tmp/", 0o1777, 0)},
	}
	for _, e := range entries {
		if err := tw.WriteHeader(e.hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

var passwd = []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")

// CACertificates returns the Mozilla (NSS) root certificates embedded in golang.org/x/crypto/x509roots/fallback as
// a PEM bundle. Roots with constraints a PEM file cannot express (distrust-after dates) are left out.
func CACertificates() ([]byte, error) {
	var out bytes.Buffer
	for root := range bundle.Roots() {
		if root.Constraint != nil {
			continue
		}
		if err := pem.Encode(&out, &pem.Block{Type: "CERTIFICATE", Bytes: root.Certificate}); err != nil {
			return nil, err
		}
	}
	if out.Len() == 0 {
		return nil, fmt.Errorf("golang.org/x/crypto/x509roots/fallback/bundle: no root certificates")
	}
	return out.Bytes(), nil
}

// WriteArchive writes img under tag to path in the docker-save tarball format (manifest.json with RepoTags) and
// returns the digest of the image as read back from the archive (what a push of the archive sends).
func WriteArchive(path string, img v1.Image, tag string) (v1.Hash, error) {
	t, err := name.NewTag(tag, name.StrictValidation)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("tag %q: %w", tag, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return v1.Hash{}, err
	}
	tmp := path + ".tmp"
	if err := tarball.MultiRefWriteToFile(tmp, map[name.Reference]v1.Image{t: img}); err != nil {
		os.Remove(tmp)
		return v1.Hash{}, fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return v1.Hash{}, err
	}
	stored, err := tarball.ImageFromPath(path, &t)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("reading back %s: %w", path, err)
	}
	return stored.Digest()
}
