package images

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Pushed is one image pushed to a registry.
type Pushed struct {
	// Archive is the archive it came from, Source its tag there.
	Archive, Source string
	// Ref is the reference it was pushed to, Digest the manifest digest there.
	Ref    string
	Digest v1.Hash
}

// Retag returns tag moved under registry (host[/path]): the repository's last path element and the tag are kept,
// e.g. alm.local/konnect-operator:1.1.0 under registry.example:5000/team is
// registry.example:5000/team/konnect-operator:1.1.0.
func Retag(tag, registry string) (string, error) {
	t, err := name.NewTag(tag, name.StrictValidation)
	if err != nil {
		return "", fmt.Errorf("tag %q: %w", tag, err)
	}
	repo := t.RepositoryStr()
	return strings.TrimSuffix(registry, "/") + "/" + repo[strings.LastIndex(repo, "/")+1:] + ":" + t.TagStr(), nil
}

// PushArchives pushes every image of every archive in dir (*.tar), each RepoTag retagged under registry, with the
// credentials of authn.DefaultKeychain (docker config). insecure allows plain HTTP (loopback registries use it
// anyway).
func PushArchives(ctx context.Context, dir, registry string, insecure bool) ([]Pushed, error) {
	archives, err := filepath.Glob(filepath.Join(dir, "*.tar"))
	if err != nil {
		return nil, err
	}
	if len(archives) == 0 {
		return nil, fmt.Errorf("%s: no image archives (*.tar); run `make images`", dir)
	}
	sort.Strings(archives)
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	var out []Pushed
	for _, path := range archives {
		manifest, err := tarball.LoadManifest(func() (io.ReadCloser, error) { return os.Open(path) })
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		for _, desc := range manifest {
			for _, tag := range desc.RepoTags {
				p, err := pushOne(ctx, path, tag, registry, opts)
				if err != nil {
					return out, err
				}
				out = append(out, p)
			}
		}
	}
	return out, nil
}

func pushOne(ctx context.Context, path, tag, registry string, opts []name.Option) (Pushed, error) {
	src, err := name.NewTag(tag, name.StrictValidation)
	if err != nil {
		return Pushed{}, fmt.Errorf("%s: RepoTag %q: %w", path, tag, err)
	}
	img, err := tarball.ImageFromPath(path, &src)
	if err != nil {
		return Pushed{}, fmt.Errorf("%s: %s: %w", path, tag, err)
	}
	target, err := Retag(tag, registry)
	if err != nil {
		return Pushed{}, err
	}
	ref, err := name.NewTag(target, opts...)
	if err != nil {
		return Pushed{}, fmt.Errorf("--registry %q: %s: %w", registry, target, err)
	}
	if err := remote.Write(ref, img, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return Pushed{}, fmt.Errorf("pushing %s to %s: %w", tag, target, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return Pushed{}, err
	}
	return Pushed{Archive: path, Source: tag, Ref: ref.String(), Digest: digest}, nil
}
