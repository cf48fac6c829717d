// Package images is the local node runner's image store: it finds the images Deployments name in a directory of
// docker-save archives, or pulls them from registry mirrors, and extracts each once per digest, so their entrypoints
// can run from the host.
package images

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Image is an image the runner has: its reference, where it came from (an archive or a registry mirror), and once
// extracted, its root file system and configuration.
type Image struct {
	// Ref is the reference as a Deployment names it, e.g. "alm.local/konnect-operator:1.0.0".
	Ref string
	// Archive is the docker-save tarball that holds the image; empty for a pulled image.
	Archive string
	// Pulled is the reference on a registry mirror the image was pulled from; empty for an image from an archive.
	Pulled string
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

// Options configures a Store.
type Options struct {
	// Dir holds docker-save archives (*.tar, found by RepoTag). Empty: no archives.
	Dir string
	// StateDir receives the extracted images, under StateDir/images/<digest>/rootfs.
	StateDir string
	// Mirrors maps a registry host as references name it (e.g. "alm.local") to the host[:port] of a plain-HTTP
	// registry that serves its repositories (e.g. "127.0.0.1:5000"), as a container runtime's registry mirror does.
	Mirrors map[string]string
	// Log receives what the store does (extractions, pulls).
	Log logr.Logger
}

// Store finds images in the docker-save archives (*.tar) of a directory, or pulls them from a registry mirror, and
// extracts each once per digest.
type Store struct {
	dir      string
	stateDir string
	mirrors  map[string]string // registry (normalized) -> mirror host[:port]
	log      logr.Logger

	mu        sync.Mutex
	refs      map[string]string // reference -> archive
	extracted map[string]*Image // reference -> extracted image
	archives  map[string]archiveTags
	pulled    map[string]pulledImage // reference -> the image last pulled for it
}

// archiveTags caches the RepoTags of an archive as of its modification time: a docker-save tarball has its
// manifest.json at the end, so reading it means reading the whole file.
type archiveTags struct {
	modTime time.Time
	tags    []string
}

// NewStore returns a store of the archives in opts.Dir and of opts.Mirrors. A mirror key that is not a registry
// host is an error.
func NewStore(opts Options) (*Store, error) {
	s := &Store{dir: opts.Dir, stateDir: opts.StateDir, log: opts.Log, mirrors: map[string]string{},
		refs: map[string]string{}, extracted: map[string]*Image{}, pulled: map[string]pulledImage{}}
	for host, mirror := range opts.Mirrors {
		reg, err := name.NewRegistry(host)
		if err != nil {
			return nil, fmt.Errorf("registry mirror for %q: %w", host, err)
		}
		s.mirrors[reg.RegistryStr()] = strings.TrimPrefix(mirror, "http://")
	}
	return s, nil
}

// Scan re-reads the manifest.json of every archive in the directory.
func (s *Store) Scan() error {
	if s.dir == "" {
		return nil
	}
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
	refs := make([]string, 0, len(s.refs)+len(s.pulled))
	for ref := range s.refs {
		refs = append(refs, ref)
	}
	for ref := range s.pulled {
		if _, ok := s.refs[ref]; !ok {
			refs = append(refs, ref)
		}
	}
	sort.Strings(refs)
	return refs
}

// ErrNotFound says the store has no archive with the image and could not pull it. Errors that wrap it are
// *NotFoundError.
var ErrNotFound = errors.New("image not found")

// NotFoundError says the store has no archive with the image Ref and, when its registry has a mirror, why it could
// not be pulled from there (Cause).
type NotFoundError struct {
	// Ref is the reference as the Deployment names it.
	Ref string
	// Cause is why pulling it failed; nil when its registry has no mirror.
	Cause error
}

func (e *NotFoundError) Error() string {
	if e.Cause == nil {
		return fmt.Sprintf("%v: %s", ErrNotFound, e.Ref)
	}
	return fmt.Sprintf("%v: %s: %v", ErrNotFound, e.Ref, e.Cause)
}

// Is makes errors.Is(err, ErrNotFound) hold.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// Unwrap returns the cause of a failed pull.
func (e *NotFoundError) Unwrap() error { return e.Cause }

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

// Get returns the extracted image ref, extracting it on first use: from an archive if one has it (as an image
// loaded into a node is used before any pull), else pulled from its registry's mirror. It fails with a
// *NotFoundError when neither has it.
func (s *Store) Get(ctx context.Context, ref string) (*Image, error) {
	img, err := s.fromArchive(ref)
	if !errors.Is(err, ErrNotFound) {
		return img, err
	}
	mirror, ok := s.mirrorOf(ref)
	if !ok {
		return nil, err
	}
	return s.pull(ctx, ref, mirror)
}

// fromArchive returns the extracted image ref of an archive. An unknown reference is looked up again after a rescan
// of the directory (images may be built while the runner runs); it then fails with ErrNotFound.
func (s *Store) fromArchive(ref string) (*Image, error) {
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
			return nil, &NotFoundError{Ref: ref}
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
	loaded, err := s.unpack(ref, img)
	if err != nil {
		return nil, err
	}
	loaded.Archive, loaded.archiveModTime = archive, fi.ModTime()
	return loaded, nil
}

// unpack extracts img's file system under the state dir, once per digest, and returns it with img's configuration.
func (s *Store) unpack(ref string, img v1.Image) (*Image, error) {
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
	return &Image{Ref: ref, Digest: digest.String(), RootFS: rootfs, Config: cfg.Config}, nil
}
