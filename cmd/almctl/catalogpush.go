package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing/fstest"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/spf13/cobra"

	"github.com/almproject/alm/catalog/bundle"
	"github.com/almproject/alm/catalog/fbc"
	"github.com/almproject/alm/catalog/image"
	"github.com/almproject/alm/catalog/index"
)

// catalogPush is one run of `almctl catalog push`.
type catalogPush struct {
	img         imageFlags
	bundleRepo  string
	withObjects bool

	stderr io.Writer
	client *image.Client
	ref    name.Reference
}

func newCatalogPushCommand() *cobra.Command {
	p := &catalogPush{}
	cmd := &cobra.Command{
		Use:   "push DIR|FBC REF",
		Short: "Push a catalog as a File-Based Catalog image (and its bundles as bundle images)",
		Long: "Push a catalog to REF as a File-Based Catalog image in OLM's format (files under /configs, label\n" +
			"operators.operatorframework.io.index.configs.v1=/configs), which an image CatalogSource, OLM and opm read.\n\n" +
			"FBC is a File-Based Catalog file (.json, .yaml) or a directory holding only such files: it is checked as\n" +
			"`almctl catalog render` checks it and its files are pushed unchanged.\n\n" +
			"DIR holding bundle directories (as `catalog render DIR` reads them): each bundle is pushed as a bundle image\n" +
			"to --bundle-repo REPO, tagged REPO/<package>:<version> ('+' in a version becomes '_'), and the catalog is\n" +
			"rendered as one catalog.json whose olm.bundle documents name their bundle image by digest\n" +
			"(REPO/<package>@sha256:…) with olm.package, olm.gvk, olm.gvk.required and olm.csv.metadata properties, as\n" +
			"opm writes catalogs: the manifests are only in the bundle images unless --with-objects adds the\n" +
			"olm.bundle.object properties `catalog render` writes.\n\n" +
			"Problems go to stderr; an error excludes only its bundle, and a catalog that would serve nothing is refused.\n" +
			"Everything is built and checked before the first push. stdout is the catalog image by digest.\n" +
			"Credentials are docker's: `docker login <registry>`.",
		Example: "  almctl catalog push bundles registry.example/catalogs/konnect:latest --bundle-repo registry.example/bundles\n" +
			"  # stderr: each bundle image pushed; stdout: registry.example/catalogs/konnect@sha256:…\n" +
			"  almctl catalog push catalog.json registry.example/catalogs/konnect:latest\n" +
			"  almctl catalog push --insecure my-fbc-dir/ 127.0.0.1:5000/catalogs/konnect:latest",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return p.run(cmd, args[0], args[1])
		},
	}
	p.img.register(cmd.Flags())
	cmd.Flags().StringVar(&p.bundleRepo, "bundle-repo", "", "repository prefix the bundles of DIR are pushed to, as REPO/<package>:<version> (required for bundle directories)")
	cmd.Flags().BoolVar(&p.withObjects, "with-objects", false, "also write each bundle's manifests into the catalog as olm.bundle.object properties")
	return cmd
}

func (p *catalogPush) run(cmd *cobra.Command, src, ref string) error {
	r, err := p.img.parseRef(ref)
	if err != nil {
		return err
	}
	p.ref, p.stderr = r, cmd.ErrOrStderr()
	if p.client, err = p.img.client(); err != nil {
		return err
	}
	bundles, err := holdsBundleDirs(src)
	if err != nil {
		return &exitError{code: 1, msg: err.Error()}
	}
	var digest string
	if bundles {
		digest, err = p.pushBundles(cmd.Context(), src)
	} else {
		digest, err = p.pushFBC(cmd.Context(), src)
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(cmd.OutOrStdout(), digestRef(r, digest))
	return nil
}

// pushFBC checks the File-Based Catalog files of src and pushes them unchanged as a catalog image.
func (p *catalogPush) pushFBC(ctx context.Context, src string) (string, error) {
	if p.bundleRepo != "" || p.withObjects {
		return "", &exitError{code: 1, msg: fmt.Sprintf("%s holds File-Based Catalog files, which are pushed unchanged: "+
			"--bundle-repo and --with-objects apply to a directory of bundle directories", src)}
	}
	files, err := fbcFiles(src, p.stderr)
	if err != nil {
		return "", &exitError{code: 1, msg: err.Error()}
	}
	contents := &fbc.Contents{}
	for _, rel := range sortedFiles(files) {
		shown := src
		if isDir(src) {
			shown = filepath.Join(src, rel)
		}
		contents.Add(fbc.Load(bytes.NewReader(files[rel].Data), shown))
	}
	ix := index.New(index.Catalog{Name: src, Contents: contents})
	if err := p.check(ix, src); err != nil {
		return "", err
	}
	return p.pushCatalog(ctx, files)
}

// pushBundles pushes every bundle of the catalog directory src that the catalog serves as a bundle image, then
// the catalog rendered with those images as a catalog image. Everything is built before the first push.
func (p *catalogPush) pushBundles(ctx context.Context, src string) (string, error) {
	if p.bundleRepo == "" {
		return "", &exitError{code: 1, msg: fmt.Sprintf("%s holds bundle directories: give --bundle-repo REPO (e.g. registry.example/bundles) "+
			"to push each bundle as REPO/<package>:<version>", src)}
	}
	repo, err := name.NewRepository(p.bundleRepo, p.nameOptions()...)
	if err != nil {
		return "", &exitError{code: 1, msg: fmt.Sprintf("--bundle-repo %s: %v; write it as registry.example/bundles", p.bundleRepo, err)}
	}
	ix, err := loadIndex(src, fbc.LoadOptions{ForRender: true})
	if err != nil {
		return "", err
	}
	if err := p.check(ix, src); err != nil {
		return "", err
	}
	built, err := buildBundleImages(ix, repo)
	if err != nil {
		return "", err
	}
	opts := index.RenderOptions{Images: map[string]string{}, OmitObjects: !p.withObjects}
	for _, b := range built {
		opts.Images[b.bundle.Name] = b.digestRef
	}
	var catalog bytes.Buffer
	if err := ix.WriteCatalogWith("", "json", &catalog, opts); err != nil {
		return "", &exitError{code: 1, msg: fmt.Sprintf("rendering %s: %v; nothing pushed", src, err)}
	}
	for _, b := range built {
		if _, err := p.client.Push(ctx, b.image, b.tag); err != nil {
			return "", imageError(b.tag, err)
		}
		fmt.Fprintf(p.stderr, "pushed bundle %s as %s (%s)\n", b.bundle.Name, b.tag, b.digestRef)
	}
	return p.pushCatalog(ctx, fstest.MapFS{"catalog.json": {Data: catalog.Bytes(), Mode: 0o644}})
}

// check prints the catalog's problems and refuses a catalog that would serve no bundle.
func (p *catalogPush) check(ix *index.Index, src string) error {
	printProblems(p.stderr, ix.Problems())
	if servedBundles(ix) == 0 {
		return &exitError{code: 1, msg: fmt.Sprintf("%s would serve no bundle (the problems above exclude every one); nothing pushed", src)}
	}
	return nil
}

// pushCatalog pushes files as a catalog image to the command's reference and returns its digest.
func (p *catalogPush) pushCatalog(ctx context.Context, files fs.FS) (string, error) {
	img, err := image.CatalogImage(files)
	if err != nil {
		return "", &exitError{code: 1, msg: err.Error()}
	}
	digest, err := p.client.Push(ctx, img, p.ref.String())
	if err != nil {
		return "", imageError(p.ref.String(), err)
	}
	return digest, nil
}

func (p *catalogPush) nameOptions() []name.Option {
	if p.img.insecure {
		return []name.Option{name.Insecure}
	}
	return nil
}

// builtBundle is a bundle image built for a catalog push.
type builtBundle struct {
	bundle    *bundle.Bundle
	image     v1.Image
	tag       string // REPO/<package>:<version>
	digestRef string // REPO/<package>@sha256:…
}

// buildBundleImages builds the bundle image of every bundle the catalog serves from a bundle directory.
func buildBundleImages(ix *index.Index, repo name.Repository) ([]builtBundle, error) {
	var out []builtBundle
	for _, pkg := range ix.PackageNames() {
		for _, p := range ix.Package(pkg) {
			for _, b := range p.Bundles {
				if !isBundleDir(b.Path) {
					continue // a File-Based Catalog bundle keeps its image
				}
				img, err := image.BundleImage(b.Path)
				if err != nil {
					return nil, &exitError{code: 1, msg: err.Error()}
				}
				digest, err := img.Digest()
				if err != nil {
					return nil, &exitError{code: 1, msg: fmt.Sprintf("bundle %s: %v", b.Path, err)}
				}
				pkgRepo := repo.Name() + "/" + b.Package
				out = append(out, builtBundle{bundle: b, image: img,
					tag:       pkgRepo + ":" + strings.ReplaceAll(b.Version.String(), "+", "_"),
					digestRef: pkgRepo + "@" + digest.String()})
			}
		}
	}
	return out, nil
}

// servedBundles counts the bundles the index serves.
func servedBundles(ix *index.Index) int {
	n := 0
	for _, pkg := range ix.PackageNames() {
		for _, p := range ix.Package(pkg) {
			n += len(p.Bundles)
		}
	}
	return n
}

// holdsBundleDirs reports whether src is a directory with a bundle directory in it (or is one).
func holdsBundleDirs(src string) (bool, error) {
	fi, err := os.Stat(src)
	if err != nil {
		return false, fmt.Errorf("%w; give a directory of bundle directories, a File-Based Catalog file or a directory of them", err)
	}
	if !fi.IsDir() {
		return false, nil
	}
	found := false
	err = filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case !d.IsDir():
			return nil
		case path != src && strings.HasPrefix(d.Name(), "."):
			return filepath.SkipDir
		case isBundleDir(path):
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	return found, err
}

// fbcFiles reads the File-Based Catalog files of src (a file, or every .json/.yaml/.yml file of a directory but
// hidden ones, by path relative to it); other files are left out with a note on w.
func fbcFiles(src string, w io.Writer) (fstest.MapFS, error) {
	files := fstest.MapFS{}
	if !isDir(src) {
		if !fbc.IsFBCFile(src) {
			return nil, fmt.Errorf("%s is not a File-Based Catalog file (.json, .yaml, .yml) nor a directory", src)
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return nil, err
		}
		files[filepath.Base(src)] = &fstest.MapFile{Data: data, Mode: 0o644}
		return files, nil
	}
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == src {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() || !fbc.IsFBCFile(path) {
			fmt.Fprintf(w, "%s: not a File-Based Catalog file, left out of the image\n", path)
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		files[filepath.ToSlash(rel)] = &fstest.MapFile{Data: data, Mode: 0o644}
		return nil
	})
	return files, err
}

func sortedFiles(files fstest.MapFS) []string {
	out := make([]string, 0, len(files))
	for k := range files {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
