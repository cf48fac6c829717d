package noderunner

import (
	"archive/tar"
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
	"github.com/google/go-containerregistry/pkg/v1/mutate"
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

// imageStore finds images in the docker-save archives (*.tar) of a directory and extracts each once per digest.
type imageStore struct {
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

func newImageStore(dir, stateDir string, log logr.Logger) *imageStore {
	return &imageStore{dir: dir, stateDir: stateDir, log: log, refs: map[string]string{}, extracted: map[string]*Image{}}
}

// scan re-reads the manifest.json of every archive in the directory.
func (s *imageStore) scan() error {
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
func (s *imageStore) archiveTags(archive string) (archiveTags, error) {
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
func (s *imageStore) Refs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	refs := make([]string, 0, len(s.refs))
	for ref := range s.refs {
		refs = append(refs, ref)
	}
	sort.Strings(refs)
	return refs
}

// errImageNotFound says the runner has no archive with the image.
var errImageNotFound = errors.New("image not found")

// archiveRef finds the archive and the archive's own spelling of ref: an exact match first, then the same resolved
// name (so "x" matches "x:latest").
func (s *imageStore) archiveRef(ref string) (archive, archiveTag string, ok bool) {
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
// rescan of the directory (images may be built while the runner runs); it then fails with errImageNotFound.
func (s *imageStore) Get(ref string) (*Image, error) {
	s.mu.Lock()
	img, ok := s.extracted[ref]
	s.mu.Unlock()
	if ok && !archiveChanged(img) {
		return img, nil
	}
	if ok {
		if err := s.scan(); err != nil {
			return nil, err
		}
	}
	archive, tagStr, found := s.archiveRef(ref)
	if !found {
		if err := s.scan(); err != nil {
			return nil, err
		}
		if archive, tagStr, found = s.archiveRef(ref); !found {
			return nil, fmt.Errorf("%w: %s", errImageNotFound, ref)
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
func (s *imageStore) load(ref, archive, tagStr string) (*Image, error) {
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

// extractImage writes the flattened file system of img (whiteouts applied) to a temporary directory next to rootfs
// and renames it into place, so a half-extracted image is never used.
func extractImage(img v1.Image, rootfs string) error {
	if err := os.MkdirAll(filepath.Dir(rootfs), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(rootfs), "extract-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	rc := mutate.Extract(img)
	defer rc.Close()
	if err := untar(tar.NewReader(rc), tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, rootfs); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return nil
}

// untar writes directories, regular files, symlinks and hard links of tr under dir; entries that would land outside
// dir are refused.
func untar(tr *tar.Reader, dir string) error {
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		target, err := within(dir, hdr.Name)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		if err := writeEntry(tr, hdr, dir, target); err != nil {
			return fmt.Errorf("%s: %w", hdr.Name, err)
		}
	}
}

func writeEntry(tr *tar.Reader, hdr *tar.Header, dir, target string) error {
	mode := os.FileMode(hdr.Mode).Perm()
	switch hdr.Typeflag {
	case tar.TypeDir:
		return os.MkdirAll(target, mode|0o700)
	case tar.TypeReg:
		f, err := os.OpenFile(target, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, mode|0o600)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, tr); err != nil {
			_ = f.Close()
			return err
		}
		return f.Close()
	case tar.TypeSymlink:
		_ = os.Remove(target)
		return os.Symlink(hdr.Linkname, target)
	case tar.TypeLink:
		src, err := within(dir, hdr.Linkname)
		if err != nil {
			return err
		}
		_ = os.Remove(target)
		return os.Link(src, target)
	default:
		return nil // devices, fifos: not needed to run a static binary
	}
}

// within joins name to dir and refuses a result outside dir.
func within(dir, name string) (string, error) {
	target := filepath.Join(dir, filepath.Clean("/"+name))
	if target != dir && !strings.HasPrefix(target, dir+string(filepath.Separator)) {
		return "", fmt.Errorf("tar entry %q is outside the image root", name)
	}
	return target, nil
}

// hostPath resolves the absolute in-image path p to a path on the host under rootfs, following symlinks inside the
// image (absolute link targets are taken relative to rootfs).
func hostPath(rootfs, p string) (string, error) {
	cur := p
	for range 16 {
		target, err := within(rootfs, cur)
		if err != nil {
			return "", err
		}
		fi, err := os.Lstat(target)
		if err != nil {
			return "", err
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			return target, nil
		}
		link, err := os.Readlink(target)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(cur), link)
		}
		cur = link
	}
	return "", fmt.Errorf("too many symlinks resolving %s", p)
}
