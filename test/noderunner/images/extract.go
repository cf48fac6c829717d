package images

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

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

// HostPath resolves the absolute in-image path p to a path on the host under rootfs, following symlinks inside the
// image (absolute link targets are taken relative to rootfs).
func HostPath(rootfs, p string) (string, error) {
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
