package image

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
)

// Labels of OLM's image formats.
const (
	// LabelConfigs names the directory of a File-Based Catalog image's configs (default /configs).
	LabelConfigs = "operators.operatorframework.io.index.configs.v1"
	// LabelDatabase names the SQLite database of a (deprecated) SQLite index image.
	LabelDatabase = "operators.operatorframework.io.index.database.v1"

	// DefaultConfigsDir is where a catalog image's configs are when LabelConfigs is not set.
	DefaultConfigsDir = "/configs"

	sqliteDefaultPath = "database/index.db"
)

// Catalog is the File-Based Catalog of a catalog image, extracted to a directory on disk that Close removes.
type Catalog struct {
	// Ref is the image pulled: repository@digest.
	Ref string
	// Digest is the manifest digest pulled (of the index, for a multi-arch image).
	Digest string
	// Labels are the image config's labels.
	Labels map[string]string
	// ConfigsDir is the directory of the image the files were read from (e.g. /configs).
	ConfigsDir string
	// Dir holds the regular files that were under ConfigsDir in the image, at their paths relative to it. Symlinks
	// and hard links inside ConfigsDir are hard links here (copies that take no space); nothing is a symlink. It is
	// below Options.ScratchDir; read it, then Close the Catalog.
	Dir string

	tmp      string // the temporary directory holding Dir
	space    *Space // where reserved bytes are given back
	reserved int64
	once     sync.Once
}

// FS returns the files as an fs.FS (for FBC loaders that walk a file system, reading one file at a time).
func (c *Catalog) FS() fs.FS { return os.DirFS(c.Dir) }

// Close removes the extracted files from disk (and gives their space back to Options.Space).
func (c *Catalog) Close() error {
	err := os.RemoveAll(c.tmp)
	if err == nil {
		c.once.Do(func() { c.space.release(c.reserved) })
	}
	return err
}

// PullCatalog pulls the catalog image ref at digest (normally the result of Digest on the same ref) and extracts
// its File-Based Catalog to a new directory below Options.ScratchDir: the image is fetched by digest, so a tag that
// moved in between does not mix content. An index is resolved to linux/GOARCH, else linux/amd64, else its first
// image. Layers are applied in order with whiteouts and only the files under the configs directory are kept. The
// files are streamed to disk as they are decompressed, so memory does not grow with the catalog's size, and
// Options.CatalogLimits bound what is read and written (a decompression bomb is cut off at MaxUncompressed). A SQLite
// index image is refused with the way to convert it; refusals are *RefusedError, and a failed pull leaves nothing on
// disk. The caller reads Catalog.Dir (or FS), then calls Close, which removes it.
func (c *Client) PullCatalog(ctx context.Context, ref, digest string) (*Catalog, error) {
	f, err := c.fetch(ctx, ref, digest, c.opts.CatalogLimits)
	if err != nil {
		return nil, err
	}
	configs, hasLabel := f.labels[LabelConfigs]
	if db, ok := f.labels[LabelDatabase]; ok && !hasLabel {
		return nil, sqliteRefusal(f.name(), ref, fmt.Sprintf("it has the label %s=%s", LabelDatabase, db))
	}
	root, err := labelDir(f.name(), LabelConfigs, configs, DefaultConfigsDir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(c.opts.ScratchDir, 0o700); err != nil {
		return nil, fmt.Errorf("image %s: scratch directory: %w", f.name(), err)
	}
	tmp, err := os.MkdirTemp(c.opts.ScratchDir, "catalog-")
	if err != nil {
		return nil, fmt.Errorf("image %s: scratch directory: %w", f.name(), err)
	}
	cat := &Catalog{Ref: f.name(), Digest: f.ref.DigestStr(), Labels: f.labels, ConfigsDir: "/" + root,
		Dir: filepath.Join(tmp, "configs"), tmp: tmp, space: c.opts.Space}
	if err := c.extractCatalog(f, cat, root, hasLabel, ref); err != nil {
		_ = cat.Close()
		return nil, err
	}
	return cat, nil
}

// extractCatalog extracts the files under root to cat's directory, staging them in a sibling.
func (c *Client) extractCatalog(f *fetched, cat *Catalog, root string, hasLabel bool, ref string) error {
	stage := filepath.Join(cat.tmp, ".staged")
	if err := os.Mkdir(stage, 0o700); err != nil {
		return fmt.Errorf("image %s: %w", f.name(), err)
	}
	x := newExtraction(f.name(), stage, c.opts.CatalogLimits, []string{root}, sqliteDefaultPath)
	x.space = c.opts.Space
	defer func() { cat.reserved = x.reserved }()
	if err := x.run(f); err != nil {
		return err
	}
	files := x.under(root)
	if len(files) == 0 {
		if !hasLabel && x.exists(sqliteDefaultPath) {
			return sqliteRefusal(f.name(), ref, "it has no "+LabelConfigs+" label and has /"+sqliteDefaultPath)
		}
		return &RefusedError{Image: f.name(), Rule: RuleNoContent,
			Detail: fmt.Sprintf("no File-Based Catalog files under /%s", root)}
	}
	if err := place(cat.Dir, files); err != nil {
		return fmt.Errorf("image %s: %w", f.name(), err)
	}
	return os.RemoveAll(stage)
}

// RemoveScratch removes from dir the catalog directories that pulls (PullCatalog with Options.ScratchDir dir) left
// there: a process that stopped before it closed its catalogs. Call it at start, before any pull.
func RemoveScratch(dir string) error {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), "catalog-") {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

func sqliteRefusal(image, ref, why string) error {
	return &RefusedError{Image: image, Rule: RuleSQLite, Detail: fmt.Sprintf(
		"a SQLite index image (%s) is not read: convert it with `opm migrate %s <dir>`, then build and push a "+
			"File-Based Catalog image, e.g. `almctl catalog push <dir> <ref>`", why, ref)}
}

// labelDir returns the image path a directory label names (def if unset), refusing what is not a clean path
// below the image root.
func labelDir(image, label, value, def string) (string, error) {
	if value == "" {
		value = def
	}
	p := path.Clean(strings.TrimPrefix(value, "/"))
	if p == "." || escapes(p) || strings.HasPrefix(p, "/") {
		return "", &RefusedError{Image: image, Rule: RuleLabel,
			Detail: fmt.Sprintf("label %s=%q does not name a directory below the image root", label, value)}
	}
	return p, nil
}
