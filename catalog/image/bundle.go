package image

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// Labels of OLM's registry+v1 bundle images.
const (
	LabelBundleMediaType      = "operators.operatorframework.io.bundle.mediatype.v1"
	LabelBundleManifests      = "operators.operatorframework.io.bundle.manifests.v1"
	LabelBundleMetadata       = "operators.operatorframework.io.bundle.metadata.v1"
	LabelBundlePackage        = "operators.operatorframework.io.bundle.package.v1"
	LabelBundleChannels       = "operators.operatorframework.io.bundle.channels.v1"
	LabelBundleDefaultChannel = "operators.operatorframework.io.bundle.channel.default.v1"

	// BundleMediaType is the only bundle format read and written.
	BundleMediaType = "registry+v1"
)

// Bundle is a registry+v1 bundle image unpacked on disk.
type Bundle struct {
	// Ref is the image pulled: repository@digest.
	Ref string
	// Digest is the manifest digest pulled, equal to the digest asked for.
	Digest string
	// Labels are the image config's labels.
	Labels map[string]string
	// Package, Channels and DefaultChannel are read from the bundle labels.
	Package, Channels, DefaultChannel string
	// Dir is the bundle directory: Dir/manifests/... and Dir/metadata/...
	Dir string
}

// PullBundle pulls the registry+v1 bundle image ref at digest and unpacks its manifests and metadata directories
// (from the bundle labels, default manifests/ and metadata/) into dir as dir/manifests and dir/metadata, the
// layout of a bundle directory. dir must not exist; it appears complete or not at all (the files are written to a
// temporary sibling that is renamed). The image is fetched by digest and its manifest verified against it: a
// registry serving other content is refused naming both digests. Options.BundleLimits bound the pull.
func (c *Client) PullBundle(ctx context.Context, ref, digest, dir string) (*Bundle, error) {
	f, err := c.fetch(ctx, ref, digest, c.opts.BundleLimits)
	if err != nil {
		return nil, err
	}
	if mt := f.labels[LabelBundleMediaType]; mt != "" && mt != BundleMediaType {
		return nil, &RefusedError{Image: f.name(), Rule: RuleMediaType,
			Detail: fmt.Sprintf("label %s=%q: only %s bundles are read", LabelBundleMediaType, mt, BundleMediaType)}
	}
	manifests, err := labelDir(f.name(), LabelBundleManifests, f.labels[LabelBundleManifests], "manifests/")
	if err != nil {
		return nil, err
	}
	metadata, err := labelDir(f.name(), LabelBundleMetadata, f.labels[LabelBundleMetadata], "metadata/")
	if err != nil {
		return nil, err
	}
	if within(manifests, metadata) || within(metadata, manifests) {
		return nil, &RefusedError{Image: f.name(), Rule: RuleLabel,
			Detail: fmt.Sprintf("manifests /%s and metadata /%s overlap", manifests, metadata)}
	}
	if err := extractInto(dir, func(tmp string) error {
		x := newExtraction(f.name(), filepath.Join(tmp, ".staged"), c.opts.BundleLimits, []string{manifests, metadata})
		if err := x.run(f); err != nil {
			return err
		}
		if len(x.under(manifests)) == 0 {
			return &RefusedError{Image: f.name(), Rule: RuleNoContent, Detail: fmt.Sprintf("no files under /%s", manifests)}
		}
		if err := place(filepath.Join(tmp, "manifests"), x.under(manifests)); err != nil {
			return fmt.Errorf("image %s: %w", f.name(), err)
		}
		if err := place(filepath.Join(tmp, "metadata"), x.under(metadata)); err != nil {
			return fmt.Errorf("image %s: %w", f.name(), err)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return &Bundle{Ref: f.name(), Digest: f.ref.DigestStr(), Labels: f.labels, Dir: dir,
		Package: f.labels[LabelBundlePackage], Channels: f.labels[LabelBundleChannels],
		DefaultChannel: f.labels[LabelBundleDefaultChannel]}, nil
}

// extractInto makes a fresh temporary sibling of dir with a staging directory (.staged) in it, runs fill on it,
// removes the staging directory and renames the sibling to dir: dir appears complete or not at all. On any error
// the sibling is removed, with whatever was written.
func extractInto(dir string, fill func(tmp string) error) (err error) {
	if _, err := os.Lstat(dir); err == nil {
		return fmt.Errorf("%s already exists", dir)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".tmp-"+filepath.Base(dir)+"-")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(tmp)
		}
	}()
	if err := os.Mkdir(filepath.Join(tmp, ".staged"), 0o700); err != nil {
		return err
	}
	if err := fill(tmp); err != nil {
		return err
	}
	if err := os.RemoveAll(filepath.Join(tmp, ".staged")); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}
