package image

import (
	"context"
	"fmt"
	"runtime"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// fetched is an image resolved by digest: its manifest's layers checked against the limits, its labels read.
type fetched struct {
	ref    name.Digest // what was asked for: repository@digest (the index digest for a multi-arch image)
	img    v1.Image
	layers []v1.Descriptor
	labels map[string]string
}

func (f *fetched) name() string { return f.ref.String() }

// fetch resolves ref@digest to one image (choosing a platform in an index), checks the manifest against the
// limits (layer media types, declared sizes) before any layer is downloaded, and reads the config's labels.
func (c *Client) fetch(ctx context.Context, ref, digest string, limits Limits) (*fetched, error) {
	d, err := c.pinned(ref, digest)
	if err != nil {
		return nil, err
	}
	desc, err := c.puller.Get(ctx, d)
	if err != nil {
		if isDigestError(err) {
			return nil, &RefusedError{Image: d.String(), Rule: RuleDigest, Detail: err.Error()}
		}
		return nil, fmt.Errorf("image %s: %w", d, err)
	}
	var img v1.Image
	switch {
	case desc.MediaType.IsIndex():
		img, err = c.platformImage(desc, d)
	case desc.MediaType.IsImage():
		img, err = desc.Image()
	default:
		return nil, &RefusedError{Image: d.String(), Rule: RuleMediaType,
			Detail: fmt.Sprintf("manifest media type %q is not an image or an index", desc.MediaType)}
	}
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", d, err)
	}
	f := &fetched{ref: d, img: img}
	if err := f.checkManifest(limits); err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		if isDigestError(err) {
			return nil, &RefusedError{Image: d.String(), Rule: RuleDigest, Detail: "config: " + err.Error()}
		}
		return nil, fmt.Errorf("image %s: config: %w", d, err)
	}
	f.labels = cfg.Config.Labels
	return f, nil
}

// platformImage picks the image of an index for this platform (see choosePlatform).
func (c *Client) platformImage(desc *remote.Descriptor, d name.Digest) (v1.Image, error) {
	idx, err := desc.ImageIndex()
	if err != nil {
		return nil, err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	child, ok := choosePlatform(im.Manifests, runtime.GOARCH)
	if !ok {
		return nil, &RefusedError{Image: d.String(), Rule: RuleMediaType, Detail: "the index lists no image"}
	}
	return idx.Image(child.Digest)
}

// choosePlatform picks, among an index's image manifests, linux/goarch, else linux/amd64, else the first image.
func choosePlatform(manifests []v1.Descriptor, goarch string) (v1.Descriptor, bool) {
	var images []v1.Descriptor
	for _, m := range manifests {
		if m.MediaType.IsImage() || m.MediaType == "" {
			images = append(images, m)
		}
	}
	for _, arch := range []string{goarch, "amd64"} {
		for _, m := range images {
			if m.Platform != nil && m.Platform.OS == "linux" && m.Platform.Architecture == arch {
				return m, true
			}
		}
	}
	if len(images) == 0 {
		return v1.Descriptor{}, false
	}
	return images[0], true
}

// checkManifest refuses what must not be downloaded: a config over its cap, layers of a media type this package
// does not read (foreign layers would be fetched from URLs of the image's choosing), and layers whose declared
// sizes add up to more than MaxCompressed.
func (f *fetched) checkManifest(limits Limits) error {
	m, err := f.img.Manifest()
	if err != nil {
		return fmt.Errorf("image %s: manifest: %w", f.name(), err)
	}
	if m.Config.Size > maxConfigSize {
		return &RefusedError{Image: f.name(), Layer: m.Config.Digest.String(), Rule: RuleCompressedSize,
			Detail: fmt.Sprintf("config of %d bytes, over %d", m.Config.Size, maxConfigSize)}
	}
	var total int64
	for _, l := range m.Layers {
		switch l.MediaType {
		case types.DockerLayer, types.DockerUncompressedLayer, types.OCILayer, types.OCILayerZStd,
			types.OCIUncompressedLayer:
		default:
			return &RefusedError{Image: f.name(), Layer: l.Digest.String(), Rule: RuleMediaType,
				Detail: fmt.Sprintf("layer media type %q is not read", l.MediaType)}
		}
		if len(l.URLs) > 0 {
			return &RefusedError{Image: f.name(), Layer: l.Digest.String(), Rule: RuleMediaType,
				Detail: "layer with foreign URLs"}
		}
		total += l.Size
		if l.Size < 0 || total > limits.MaxCompressed {
			return &RefusedError{Image: f.name(), Layer: l.Digest.String(), Rule: RuleCompressedSize,
				Detail: fmt.Sprintf("layers declare %d bytes compressed, over the limit of %d", total,
					limits.MaxCompressed)}
		}
	}
	f.layers = m.Layers
	return nil
}
