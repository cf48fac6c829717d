package image

import (
	"archive/tar"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// cleanName returns the image path of a tar entry name ("" for the root), refusing absolute names and names that
// climb out of the root.
func cleanName(name string) (string, error) {
	if strings.HasPrefix(name, "/") {
		return "", &ruleError{rule: RuleAbsolute, detail: "absolute entry name"}
	}
	p := path.Clean(name)
	if p == "." {
		return "", nil
	}
	if escapes(p) {
		return "", &ruleError{rule: RuleTraversal, detail: fmt.Sprintf("entry name cleans to %q, outside the image root", p)}
	}
	return p, nil
}

// escapes reports whether a cleaned relative path leaves its root.
func escapes(p string) bool { return p == ".." || strings.HasPrefix(p, "../") }

// within reports whether p is dir or under it.
func within(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

// rootOf returns the root p is in, or "".
func (x *extraction) rootOf(p string) string {
	for _, r := range x.roots {
		if within(p, r) {
			return r
		}
	}
	return ""
}

// entry applies one tar entry of layer i.
func (x *extraction) entry(i int, hdr *tar.Header, r io.Reader) error {
	if hdr.Typeflag == tar.TypeXGlobalHeader {
		return nil
	}
	p, err := cleanName(hdr.Name)
	if err != nil || p == "" {
		return err
	}
	if rest := x.uncompressed.limit - x.uncompressed.used; hdr.Size > rest {
		return &ruleError{rule: RuleUncompressedSize, detail: fmt.Sprintf(
			"a file of %d bytes would pass the limit of %d bytes uncompressed", hdr.Size, x.uncompressed.limit)}
	}
	dir, base := path.Split(p)
	if strings.HasPrefix(base, whiteoutPrefix) {
		return x.whiteout(i, strings.TrimSuffix(dir, "/"), base)
	}
	root := x.rootOf(p)
	if root == "" {
		if _, ok := x.probes[p]; ok && isRegular(hdr) {
			x.probes[p] = i
		}
		return nil
	}
	if p == root && hdr.Typeflag != tar.TypeDir {
		return &ruleError{rule: RuleEntryType, detail: fmt.Sprintf("%q must be a directory", "/"+root)}
	}
	switch {
	case hdr.Typeflag == tar.TypeDir:
		x.replace(i, p, true)
		return nil
	case isRegular(hdr):
		return x.file(i, p, hdr, r)
	case hdr.Typeflag == tar.TypeSymlink:
		return x.symlink(i, p, root, hdr.Linkname)
	case hdr.Typeflag == tar.TypeLink:
		return x.hardlink(i, p, root, hdr.Linkname)
	}
	return &ruleError{rule: RuleEntryType, detail: fmt.Sprintf("entry type %s is not a regular file, directory or link",
		typeName(hdr.Typeflag))}
}

func isRegular(hdr *tar.Header) bool {
	return hdr.Typeflag == tar.TypeReg || hdr.Typeflag == tar.TypeRegA //nolint:staticcheck // old archives use it
}

func typeName(t byte) string {
	switch t {
	case tar.TypeChar:
		return "character device"
	case tar.TypeBlock:
		return "block device"
	case tar.TypeFifo:
		return "FIFO"
	}
	return fmt.Sprintf("%q", t)
}

// file keeps a regular file, bounded by MaxFileSize (checked on the header and while reading, for sparse files).
// The content is streamed to a new staged file; a file refused half-way is removed at once.
func (x *extraction) file(i int, p string, hdr *tar.Header, r io.Reader) error {
	max := x.limits.MaxFileSize
	if hdr.Size > max {
		return &ruleError{rule: RuleFileSize, detail: fmt.Sprintf("file of %d bytes, over the limit of %d", hdr.Size, max)}
	}
	if err := x.space.reserve(hdr.Size); err != nil {
		return err
	}
	x.reserved += hdr.Size
	x.staged++
	staged := filepath.Join(x.stage, strconv.Itoa(x.staged))
	f, err := os.OpenFile(staged, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, io.LimitReader(r, max+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > max {
		err = &ruleError{rule: RuleFileSize, detail: fmt.Sprintf("file of more than %d bytes", max)}
	}
	if err != nil {
		_ = os.Remove(staged)
		return err
	}
	x.replace(i, p, false)
	x.keep(p, &node{layer: i, staged: staged})
	return nil
}

// symlink keeps a symlink whose target, resolved lexically from the link's directory (or from the image root for
// an absolute target), stays in the link's root.
func (x *extraction) symlink(i int, p, root, target string) error {
	t := path.Join(path.Dir(p), target)
	if path.IsAbs(target) {
		t = strings.TrimPrefix(path.Clean(target), "/")
	}
	if escapes(t) || !within(t, root) {
		return &ruleError{rule: RuleLinkEscape, detail: fmt.Sprintf("symlink to %q leaves %q", target, "/"+root)}
	}
	x.replace(i, p, false)
	x.keep(p, &node{layer: i, link: t, isLink: true})
	return nil
}

// hardlink keeps a copy of a file extracted before it in the same root (tar hard link targets are image paths).
func (x *extraction) hardlink(i int, p, root, target string) error {
	t, err := cleanName(target)
	if err != nil || !within(t, root) {
		return &ruleError{rule: RuleLinkEscape, detail: fmt.Sprintf("hard link to %q leaves %q", target, "/"+root)}
	}
	n, ok := x.files[t]
	if !ok || n.isLink {
		return &ruleError{rule: RuleLinkEscape, detail: fmt.Sprintf("hard link to %q, which is not a file before it", target)}
	}
	x.replace(i, p, false)
	x.keep(p, &node{layer: i, staged: n.staged})
	return nil
}

// replace removes what an entry at p written by layer i hides: a file at an ancestor of p (now a directory) and,
// unless p is a directory, what lower layers kept under p.
func (x *extraction) replace(i int, p string, isDir bool) {
	for a := path.Dir(p); a != "." && a != "/"; a = path.Dir(a) {
		delete(x.files, a)
	}
	if isDir {
		delete(x.files, p)
		return
	}
	x.remove(p+"/", i)
}

// whiteout applies a whiteout entry in dir: ".wh..wh..opq" hides what lower layers have in dir, ".wh.<name>"
// hides dir/<name> of lower layers.
func (x *extraction) whiteout(i int, dir, base string) error {
	if base == whiteoutOpaque {
		if dir != "" {
			dir += "/"
		}
		x.remove(dir, i)
		return nil
	}
	name := strings.TrimPrefix(base, whiteoutPrefix)
	if name == "" || name == "." || name == ".." || strings.Contains(name, "/") {
		return &ruleError{rule: RuleTraversal, detail: fmt.Sprintf("whiteout of %q", name)}
	}
	t := path.Join(dir, name)
	x.remove(t, i)
	x.remove(t+"/", i)
	return nil
}

// keep records a file or link at p, and p's directories in x.dirs.
func (x *extraction) keep(p string, n *node) {
	x.files[p] = n
	for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
		if _, ok := x.dirs[d]; ok {
			break // and so are its ancestors
		}
		x.dirs[d] = struct{}{}
	}
}

// remove deletes what layers below i kept at p (a path, or a prefix ending in "/"; "" is everything). A path, or a
// prefix that was never a directory of a kept file, costs one lookup: only a directory's removal walks the files.
func (x *extraction) remove(p string, i int) {
	match := func(q string) bool {
		if strings.HasSuffix(p, "/") || p == "" {
			return strings.HasPrefix(q, p)
		}
		return q == p
	}
	for q, layer := range x.probes {
		if layer >= 0 && layer < i && match(q) {
			x.probes[q] = -1
		}
	}
	if x.rootOf(strings.TrimSuffix(p, "/")) == "" && !x.coversRoot(p) {
		return
	}
	if p != "" && !strings.HasSuffix(p, "/") {
		if n, ok := x.files[p]; ok && n.layer < i {
			delete(x.files, p)
		}
		return
	}
	if _, ok := x.dirs[strings.TrimSuffix(p, "/")]; p != "" && !ok {
		return
	}
	x.walks++
	for q, n := range x.files {
		if n.layer < i && match(q) {
			delete(x.files, q)
		}
	}
}

// coversRoot reports whether the prefix p contains a root.
func (x *extraction) coversRoot(p string) bool {
	for _, r := range x.roots {
		if strings.HasPrefix(r+"/", p) {
			return true
		}
	}
	return false
}

// resolveLinks replaces each symlink by a copy of the file it leads to (links are never written to disk); a link
// to a directory is refused, a dangling link dropped.
func (x *extraction) resolveLinks() error {
	links := make([]string, 0)
	for p, n := range x.files {
		if n.isLink {
			links = append(links, p)
		}
	}
	sort.Strings(links)
	resolved := map[string]string{}
	for _, p := range links {
		t := x.files[p].link
		for hops := 0; hops < maxLinkHops; hops++ {
			n, ok := x.files[t]
			if !ok || !n.isLink {
				break
			}
			t = n.link
		}
		if n, ok := x.files[t]; ok && !n.isLink {
			resolved[p] = n.staged
			continue
		}
		if x.isDir(t) {
			return &RefusedError{Image: x.image, Entry: p, Rule: RuleEntryType,
				Detail: fmt.Sprintf("symlink to the directory %q is not supported", "/"+t)}
		}
	}
	for _, p := range links {
		delete(x.files, p)
	}
	for p, staged := range resolved {
		x.files[p] = &node{staged: staged}
	}
	return nil
}

func (x *extraction) isDir(p string) bool {
	for q := range x.files {
		if strings.HasPrefix(q, p+"/") {
			return true
		}
	}
	return x.rootOf(p) == p
}

// under returns the files kept under root: path relative to it -> staged file.
func (x *extraction) under(root string) map[string]string {
	out := map[string]string{}
	for p, n := range x.files {
		if strings.HasPrefix(p, root+"/") && !n.isLink {
			out[strings.TrimPrefix(p, root+"/")] = n.staged
		}
	}
	return out
}

// place moves the staged files of files (relative slash path -> staged file) to their paths under dir, which must
// not exist. Paths kept by the extraction are clean, relative and free of "..", and dir is fresh, so nothing is
// written outside it. Paths sharing a staged file (links, kept as copies) become hard links of one file: a copy
// takes no space, and nothing on disk is a symlink.
func place(dir string, files map[string]string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for p := range files {
		names = append(names, p)
	}
	sort.Strings(names)
	placed := map[string]string{} // staged file -> where it went
	for _, p := range names {
		target := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		staged := files[p]
		if first, ok := placed[staged]; ok {
			if err := os.Link(first, target); err != nil {
				return err
			}
			continue
		}
		if err := os.Rename(staged, target); err != nil {
			return err
		}
		placed[staged] = target
	}
	return nil
}
