package image

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"testing/fstest"
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

// Catalog is the File-Based Catalog of a catalog image.
type Catalog struct {
	// Ref is the image pulled: repository@digest.
	Ref string
	// Digest is the manifest digest pulled (of the index, for a multi-arch image).
	Digest string
	// Labels are the image config's labels.
	Labels map[string]string
	// ConfigsDir is the directory of the image the files were read from (e.g. /configs).
	ConfigsDir string
	// Files are the regular files under ConfigsDir, by slash-separated path relative to it. Symlinks inside
	// ConfigsDir are resolved to copies of their targets.
	Files map[string][]byte
}

// FS returns the files as an fs.FS (for FBC loaders that walk a file system).
func (c *Catalog) FS() fs.FS {
	m := fstest.MapFS{}
	for p, data := range c.Files {
		m[p] = &fstest.MapFile{Data: data, Mode: 0o444}
	}
	return m
}

// PullCatalog pulls the catalog image ref at digest (normally the result of Digest on the same ref) and returns
// its File-Based Catalog: the image is fetched by digest, so a tag that moved in between does not mix content.
// An index is resolved to linux/GOARCH, else linux/amd64, else its first image. Layers are applied in order with
// whiteouts and only the files under the configs directory are kept. A SQLite index image is refused with the
// way to convert it. Options.CatalogLimits bound the pull; refusals are *RefusedError.
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
	x := newExtraction(f.name(), c.opts.CatalogLimits, []string{root}, sqliteDefaultPath)
	if err := x.run(f); err != nil {
		return nil, err
	}
	files := x.under(root)
	if len(files) == 0 {
		if !hasLabel && x.exists(sqliteDefaultPath) {
			return nil, sqliteRefusal(f.name(), ref, "it has no "+LabelConfigs+" label and has /"+sqliteDefaultPath)
		}
		return nil, &RefusedError{Image: f.name(), Rule: RuleNoContent,
			Detail: fmt.Sprintf("no File-Based Catalog files under /%s", root)}
	}
	return &Catalog{Ref: f.name(), Digest: f.ref.DigestStr(), Labels: f.labels, ConfigsDir: "/" + root, Files: files}, nil
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
