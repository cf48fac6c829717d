package images

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// pullTimeout bounds one pull (manifest, config and layers) from a mirror.
const pullTimeout = 2 * time.Minute

// pulledImage is the image last pulled for a reference and the manifest digest the mirror then served for it.
type pulledImage struct {
	manifest string
	img      *Image
}

// mirrorOf returns the mirror's reference for ref: the same repository and tag or digest on the mirror of ref's
// registry, in plain HTTP. ok is false when ref's registry has no mirror (or ref is not a valid reference).
func (s *Store) mirrorOf(ref string) (name.Reference, bool) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return nil, false
	}
	mirror, ok := s.mirrors[r.Context().RegistryStr()]
	if !ok {
		return nil, false
	}
	repo, err := name.NewRepository(mirror+"/"+r.Context().RepositoryStr(), name.Insecure)
	if err != nil {
		return nil, false
	}
	if d, isDigest := r.(name.Digest); isDigest {
		return repo.Digest(d.DigestStr()), true
	}
	return repo.Tag(r.Identifier()), true
}

// pull resolves ref on the mirror (src) every time, as a kubelet pulls an image whose tag may have moved, and
// extracts the image once per digest. When the mirror cannot be reached but ref was pulled before, the image pulled
// before is used. A failed pull is a *NotFoundError whose cause is the mirror's answer.
func (s *Store) pull(ctx context.Context, ref string, src name.Reference) (*Image, error) {
	ctx, cancel := context.WithTimeout(ctx, pullTimeout)
	defer cancel()
	s.mu.Lock()
	prev, pulledBefore := s.pulled[ref]
	s.mu.Unlock()
	opts := []remote.Option{remote.WithContext(ctx),
		remote.WithPlatform(v1.Platform{OS: runtime.GOOS, Architecture: runtime.GOARCH}),
		remote.WithRetryBackoff(remote.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Steps: 3})}
	desc, err := remote.Get(src, opts...)
	if err != nil {
		if pulledBefore {
			s.log.Info("Using the image pulled before: the mirror does not answer", "image", ref, "mirror", src.String(), "error", err.Error())
			return prev.img, nil
		}
		return nil, &NotFoundError{Ref: ref, Cause: fmt.Errorf("pulling %s: %w", src, err)}
	}
	if pulledBefore && prev.manifest == desc.Digest.String() {
		return prev.img, nil
	}
	img, err := desc.Image()
	if err != nil {
		return nil, &NotFoundError{Ref: ref, Cause: fmt.Errorf("pulling %s: %w", src, err)}
	}
	loaded, err := s.unpack(ref, img) // fetches the layers
	if err != nil {
		return nil, &NotFoundError{Ref: ref, Cause: fmt.Errorf("pulling %s: %w", src, err)}
	}
	loaded.Pulled = src.String()
	s.log.Info("Pulled image", "image", ref, "from", src.String(), "digest", loaded.Digest)
	s.mu.Lock()
	s.pulled[ref] = pulledImage{manifest: desc.Digest.String(), img: loaded}
	s.mu.Unlock()
	return loaded, nil
}
