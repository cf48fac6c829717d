package catalogsource

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// DirectoryPolicy says which namespaces may serve which directories of ALM's filesystem. A directory CatalogSource
// reads what ALM can read, with ALM's identity: only cluster admins may choose the path. The zero value lets no
// namespace read any directory.
type DirectoryPolicy struct {
	// Namespace is ALM's own namespace, where only cluster admins create CatalogSources: its directory sources may
	// name any path (except one that overlaps Forbidden).
	Namespace string
	// Root is the directory a cluster admin opened to CatalogSources of every namespace (the manager's
	// --directory-catalog-root): a path under it may be served anywhere. Empty: no other namespace may serve a
	// directory.
	Root string
	// Forbidden are directories no CatalogSource may serve, nor a directory that holds them: where ALM keeps what it
	// pulled from other catalogs with their credentials (the bundle cache, the catalog scratch directory).
	Forbidden []ForbiddenDir
}

// ForbiddenDir is a directory of ALM's that no CatalogSource may serve, what it is and the manager flag that sets it,
// for messages (e.g. "ALM's bundle cache", "--bundle-cache-dir").
type ForbiddenDir struct{ Dir, What, Flag string }

// directoryRefusedError is a directory CatalogSource the policy refuses: it serves nothing until its spec (or the
// directory's contents) change.
type directoryRefusedError struct{ msg string }

func (e *directoryRefusedError) Error() string { return e.msg }

func refusedf(format string, args ...any) error {
	return &directoryRefusedError{msg: fmt.Sprintf(format, args...)}
}

// Check decides whether a CatalogSource in namespace may serve path, and returns the path to read: path with its
// symlinks and ".." resolved, so that what is checked is what is read. A namespace that may read no directory is
// refused before the filesystem is touched.
func (p DirectoryPolicy) Check(namespace, path string) (string, error) {
	const field = "spec.directory.path"
	inALM := p.Namespace != "" && namespace == p.Namespace
	if !inALM && p.Root == "" {
		return "", refusedf("%s %s: directory CatalogSources read ALM's own filesystem, so only CatalogSources in ALM's namespace %s "+
			"(cluster admins) may use them, and other namespaces only under a root a cluster admin sets with the manager's "+
			"--directory-catalog-root, which is not set; publish the bundles with `almctl publish` (a ConfigMap CatalogSource) "+
			"or as a catalog image (spec.image)", field, path, p.Namespace)
	}
	if !filepath.IsAbs(path) {
		return "", refusedf("%s %s: the path must be absolute", field, path)
	}
	root := ""
	if !inALM {
		root = resolve(p.Root)
		if !within(root, filepath.Clean(path)) { // lexically first: nothing outside the root is looked up
			return "", p.outsideRoot(path, "")
		}
	}
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", field, path, err)
	}
	if !inALM && !within(root, resolved) {
		return "", p.outsideRoot(path, resolved)
	}
	for _, f := range p.Forbidden {
		if dir := resolve(f.Dir); dir != "" && (within(dir, resolved) || within(resolved, dir)) {
			return "", refusedf("%s %s (resolved: %s) overlaps %s %s (the manager's %s), which holds images pulled with "+
				"other catalogs' credentials; no CatalogSource may serve it or a directory that holds it: name a directory of its own",
				field, path, resolved, f.What, dir, f.Flag)
		}
	}
	return resolved, nil
}

func (p DirectoryPolicy) outsideRoot(path, resolved string) error {
	shown := path
	if resolved != "" {
		shown += " (resolved: " + resolved + ")"
	}
	return refusedf("spec.directory.path %s is not under %s, the directory a cluster admin opened to every namespace "+
		"(the manager's --directory-catalog-root); outside ALM's namespace %s a directory CatalogSource may serve only a path "+
		"under it, symlinks and \"..\" resolved: put the bundles there, or publish them with `almctl publish` or as a catalog image",
		shown, p.Root, p.Namespace)
}

// resolve is dir with its symlinks resolved, or cleaned when it does not exist (yet).
func resolve(dir string) string {
	if dir == "" {
		return ""
	}
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		return r
	}
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return filepath.Clean(dir)
}

// within says whether path is dir or under it (both clean and absolute).
func within(dir, path string) bool {
	if dir == "/" || dir == path {
		return true
	}
	return strings.HasPrefix(path, dir+string(filepath.Separator))
}

// maxDirEntries bounds a directory source's walk: a catalog of thousands of bundles holds tens of thousands of
// files; a directory with more is refused rather than walked at every resync.
const maxDirEntries = 200_000

// walkDir walks the tree of a directory source (resolved by Check) and calls visit for each entry, refusing what
// ALM does not read: an entry on a special file system (/proc, /sys, cgroups: their files are not a catalog and may
// block or never end), a device, FIFO or socket (reading one may block), a symlink that resolves outside root (a
// link would otherwise read what the policy refused), and more than maxDirEntries entries. Symlinks are not
// followed (their targets inside root are walked as root's own entries); visit gets a symlink's target's info, so
// that a ConfigMap volume's update (its ..data link moves) changes what is visited.
func walkDir(root string, visit func(path string, info fs.FileInfo)) error {
	n := 0
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if n++; n > maxDirEntries {
			return refusedf("spec.directory.path %s holds more than %d entries; ALM does not walk it at every resync: "+
				"serve a directory of bundles only", root, maxDirEntries)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if err := checkEntry(root, path, info); err != nil {
			return err
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			if info, err = os.Stat(path); err != nil {
				return err
			}
		}
		visit(path, info)
		return nil
	})
}

// checkEntry refuses one entry of a directory source's tree (see walkDir).
func checkEntry(root, path string, info fs.FileInfo) error {
	switch mode := info.Mode(); {
	case mode.IsDir():
		if fsName, special := specialFS(path); special {
			return refusedf("spec.directory.path %s: %s is on a %s file system, which holds no catalog; ALM does not walk it: "+
				"serve a directory of bundles only", root, path, fsName)
		}
	case mode&fs.ModeSymlink != 0:
		target, err := filepath.EvalSymlinks(path)
		if err != nil {
			return fmt.Errorf("spec.directory.path %s: symlink %s: %w", root, path, err)
		}
		if !within(root, target) {
			return refusedf("spec.directory.path %s: the symlink %s resolves to %s, outside the directory; ALM does not follow "+
				"links out of a directory source: copy the file in, or point the link inside", root, path, target)
		}
	case !mode.IsRegular():
		return refusedf("spec.directory.path %s: %s is not a regular file, directory or symlink (%s); ALM does not read it: "+
			"remove it", root, path, mode.Type())
	}
	return nil
}
