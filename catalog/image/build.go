package image

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"sigs.k8s.io/yaml"
)

// BundleImage builds a registry+v1 bundle image in OLM's format from a bundle directory (manifests/ and
// metadata/annotations.yaml): one layer holding manifests/... and metadata/..., the image labels copied from the
// annotations: map of metadata/annotations.yaml, with the manifests and metadata labels set to that layout. The
// image is deterministic (sorted entries, zero timestamps, uid/gid 0), so the same directory gives the same digest.
// Only regular files and directories are read; anything else is an error.
func BundleImage(dir string) (v1.Image, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "metadata", "annotations.yaml"))
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", dir, err)
	}
	var doc struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("bundle %s: metadata/annotations.yaml: %w", dir, err)
	}
	labels := map[string]string{}
	for k, v := range doc.Annotations {
		labels[k] = v
	}
	if mt := labels[LabelBundleMediaType]; mt != "" && mt != BundleMediaType {
		return nil, fmt.Errorf("bundle %s: %s=%q: only %s bundles are built", dir, LabelBundleMediaType, mt, BundleMediaType)
	}
	if labels[LabelBundlePackage] == "" {
		return nil, fmt.Errorf("bundle %s: metadata/annotations.yaml has no %s", dir, LabelBundlePackage)
	}
	labels[LabelBundleMediaType] = BundleMediaType
	labels[LabelBundleManifests] = "manifests/"
	labels[LabelBundleMetadata] = "metadata/"
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	fsys := os.DirFS(dir)
	for _, top := range []string{"manifests", "metadata"} {
		if err := addTree(tw, fsys, top, top); err != nil {
			return nil, fmt.Errorf("bundle %s: %w", dir, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return imageOf(buf.Bytes(), labels)
}

// CatalogImage builds a File-Based Catalog image from fsys (the catalog's files, e.g. os.DirFS of a directory
// opm migrate or almctl wrote, or an fstest.MapFS): one layer with the files under /configs and the label
// operators.operatorframework.io.index.configs.v1=/configs. Deterministic like BundleImage; only regular files
// and directories are read.
func CatalogImage(fsys fs.FS) (v1.Image, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := addTree(tw, fsys, ".", "configs"); err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return imageOf(buf.Bytes(), map[string]string{LabelConfigs: DefaultConfigsDir})
}

// addTree writes the tree at root of fsys into tw under prefix, in lexical order, with fixed metadata.
func addTree(tw *tar.Writer, fsys fs.FS, root, prefix string) error {
	epoch := time.Unix(0, 0).UTC()
	return fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := path.Join(prefix, p[len(root):])
		if root == "." {
			rel = path.Join(prefix, p)
		}
		hdr := &tar.Header{Name: rel, ModTime: epoch, Uname: "", Gname: "", Format: tar.FormatPAX}
		switch {
		case d.IsDir():
			hdr.Typeflag, hdr.Name, hdr.Mode = tar.TypeDir, rel+"/", 0o755
			return tw.WriteHeader(hdr)
		case d.Type().IsRegular():
			data, err := fs.ReadFile(fsys, p)
			if err != nil {
				return err
			}
			hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeReg, 0o644, int64(len(data))
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			_, err = tw.Write(data)
			return err
		}
		return fmt.Errorf("%s: not a regular file or directory (%s)", p, d.Type())
	})
}

// imageOf is an OCI image of one layer (tarData, gzip-compressed) with labels, for linux/amd64.
func imageOf(tarData []byte, labels map[string]string) (v1.Image, error) {
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(tarData)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.AppendLayers(base, layer)
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", "amd64"
	cfg.Config.Labels = labels
	return mutate.ConfigFile(img, cfg)
}

// Push writes img to ref (a tag or a digest reference) with the Client's options and returns its manifest digest.
func (c *Client) Push(ctx context.Context, img v1.Image, ref string) (string, error) {
	r, err := name.ParseReference(ref, c.name...)
	if err != nil {
		return "", fmt.Errorf("image %s: %w", ref, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return "", fmt.Errorf("image %s: %w", ref, err)
	}
	if err := remote.Write(r, img, append([]remote.Option{remote.WithContext(ctx)}, c.remote...)...); err != nil {
		return "", fmt.Errorf("image %s: push: %w", ref, err)
	}
	return digest.String(), nil
}

// Push writes img to ref with opts (see Client.Push).
func Push(ctx context.Context, img v1.Image, ref string, opts Options) (string, error) {
	c, err := NewClient(opts)
	if err != nil {
		return "", err
	}
	return c.Push(ctx, img, ref)
}
