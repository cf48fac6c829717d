// Package images is the local node runner's image store: it finds the images Deployments name in a directory of
// docker-save archives and extracts each once per digest, so their entrypoints can run from the host.
package images

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Image is an image the runner has: its reference as written in the archive, the archive, and once extracted, its
// root file system and configuration.
type Image struct {
	// Ref is the reference as a Deployment names it, e.g. "alm.local/konnect-operator:1.0.0".
	Ref string
	// Archive is the docker-save tarball that holds the image.
	Archive string
	// Digest is the image's digest ("sha256:...").
	Digest string
	// RootFS is the directory the image's layers were extracted to.
	RootFS string
	// Config is the image's runtime configuration (Entrypoint, Cmd, Env, WorkingDir, User).
	Config v1.Config

	archiveModTime time.Time
}

// archiveChanged says the image's archive was rewritten (or removed) since it was read: `make images` while the
// runner runs. The next pod of the image then uses the new build.
func archiveChanged(img *Image) bool {
	fi, err := os.Stat(img.Archive)
	return err != nil || !fi.ModTime().Equal(img.archiveModTime)
}

// Store finds images in the docker-save archives (*.tar) of a directory and extracts each once per digest.
type Store struct {
	dir      string
	stateDir string
	log      logr.Logger

	mu        sync.Mutex
	refs      map[string]string // reference -> archive
	extracted map[string]*Image // reference -> extracted image
	archives  map[string]archiveTags
}

// archiveTags caches the RepoTags of an archive as of its modification time: a docker-save tarball has its
// manifest.json at the end, so reading it means reading the whole file.
type archiveTags struct {
	modTime time.Time
	tags    []string
}

// NewStore returns a store of the archives in dir that extracts images under stateDir/images.
func NewStore(dir, stateDir string, log logr.Logger) *Store {
	return &Store{dir: dir, stateDir: stateDir, log: log, refs: map[string]string{}, extracted: map[string]*Image{}}
}

// Scan re-reads the manifest.json of every archive in the directory.
func (s *Store) Scan() error {
	archives, err := filepath.Glob(filepath.Join(s.dir, "*.tar"))
	if err != nil {
		return err
	}
	refs, cache := map[string]string{}, map[string]archiveTags{}
	for _, archive := range archives {
		at, err := s.archiveTags(archive)
		if err != nil {
			s.log.Error(err, "Skipping an image archive that is not a docker-save tarball", "archive", archive)
			continue
		}
		cache[archive] = at
		for _, tag := range at.tags {
			refs[tag] = archive
		}
	}
	s.mu.Lock()
	s.refs, s.archives = refs, cache
	s.mu.Unlock()
	return nil
}

// archiveTags returns the RepoTags of an archive, read again only when the file changed.
func (s *Store) archiveTags(archive string) (archiveTags, error) {
	fi, err := os.Stat(archive)
	if err != nil {
		return archiveTags{}, err
	}
	s.mu.Lock()
	cached, ok := s.archives[archive]
	s.mu.Unlock()
	if ok && cached.modTime.Equal(fi.ModTime()) {
		return cached, nil
	}
	manifest, err := tarball.LoadManifest(func() (io.ReadCloser, error) { return os.Open(archive) })
	if err != nil {
		return archiveTags{}, err
	}
	at := archiveTags{modTime: fi.ModTime()}
	for _, desc := range manifest {
		at.tags = append(at.tags, desc.RepoTags...)
	}
	return at, nil
}

// Refs lists the references of the images the store has, sorted.
func (s *Store) Refs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	refs := make([]string, 0, len(s.refs))
	for ref := range s.refs {
		refs = append(refs, ref)
	}
	sort.Strings(refs)
	return refs
}

// ErrNotFound says the runner has no archive with the image.
var ErrNotFound = errors.New("image not found")

// archiveRef finds the archive and the archive's own spelling of ref: an exact match first, then the same resolved
// name (so "x" matches "x:latest").
func (s *Store) archiveRef(ref string) (archive, archiveTag string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.refs[ref]; ok {
		return a, ref, true
	}
	want, err := name.NewTag(ref)
	if err != nil {
		return "", "", false
	}
	for tag, a := range s.refs {
		if t, err := name.NewTag(tag); err == nil && t.Name() == want.Name() {
			return a, tag, true
		}
	}
	return "", "", false
}

// Get returns the extracted image ref, extracting it on first use. An unknown reference is looked up again after a
// rescan of the directory (images may be built while the runner runs); it then fails with ErrNotFound.
func (s *Store) Get(ref string) (*Image, error) {
	s.mu.Lock()
	img, ok := s.extracted[ref]
	s.mu.Unlock()
	if ok && !archiveChanged(img) {
		return img, nil
	}
	if ok {
		if err := s.Scan(); err != nil {
			return nil, err
		}
	}
	archive, tagStr, found := s.archiveRef(ref)
	if !found {
		if err := s.Scan(); err != nil {
			return nil, err
		}
		if archive, tagStr, found = s.archiveRef(ref); !found {
			return nil, fmt.Errorf("%w: %s", ErrNotFound, ref)
		}
	}
	img, err := s.load(ref, archive, tagStr)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.extracted[ref] = img
	s.mu.Unlock()
	return img, nil
}

// load reads the image tagStr from archive and extracts its file system under the state dir, once per digest.
func (s *Store) load(ref, archive, tagStr string) (*Image, error) {
	tag, err := name.NewTag(tagStr)
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", ref, err)
	}
	fi, err := os.Stat(archive)
	if err != nil {
		return nil, err
	}
	img, err := tarball.ImageFromPath(archive, &tag)
	if err != nil {
		return nil, fmt.Errorf("reading image %s from %s: %w", ref, archive, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", ref, err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("image %s: reading its config: %w", ref, err)
	}
	rootfs := filepath.Join(s.stateDir, "images", digest.Algorithm+"-"+digest.Hex, "rootfs")
	if _, err := os.Stat(rootfs); errors.Is(err, os.ErrNotExist) {
		if err := extractImage(img, rootfs); err != nil {
			return nil, fmt.Errorf("extracting image %s: %w", ref, err)
		}
		s.log.Info("Extracted image", "image", ref, "digest", digest.String(), "rootfs", rootfs)
	}
	return &Image{Ref: ref, Archive: archive, Digest: digest.String(), RootFS: rootfs, Config: cfg.Config,
		archiveModTime: fi.ModTime()}, nil
}
