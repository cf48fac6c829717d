package localenv

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/almproject/alm/catalog/bundle"
	"github.com/almproject/alm/catalog/fbc"
	"github.com/almproject/alm/catalog/image"
	"github.com/almproject/alm/catalog/index"
)

// Where the story publishes on the environment's registry: bundle images to <registry>/bundles/<package>:<version>,
// the catalog image of every bundle published so far to the one tag <registry>/catalogs/alm:latest.
const (
	BundleRepository  = "bundles"
	CatalogRepository = "catalogs/alm"
	CatalogTag        = "latest"
)

// CatalogWithObjects says whether the story also writes each bundle's manifests into the catalog image
// (olm.bundle.object properties), as `almctl catalog push --with-objects` does. false is what current opm writes and
// what a real cluster sees: the manifests exist only in the bundle images, which ALM's installer pulls by digest
// (and OperatorVersions name them in spec.bundle.image).
const CatalogWithObjects = false

// Published is what one publish pushed.
type Published struct {
	// Bundle is the bundle's name (its ClusterServiceVersion's, e.g. konnect-operator.v1.1.0).
	Bundle string
	// BundleTag is the bundle image's tag, <registry>/bundles/<package>:<version>; BundleImage the image by digest,
	// <registry>/bundles/<package>@sha256:…, as the catalog names it.
	BundleTag, BundleImage string
	// CatalogDigest is the digest the catalog tag points at now.
	CatalogDigest string
}

// Publisher publishes bundle directories the way a publisher does for a real cluster: each as a registry+v1 bundle
// image, then a File-Based Catalog image of every bundle published so far, pushed to one tag that image
// CatalogSources poll.
type Publisher struct {
	// Registry is the registry's host:port: HTTPS with a certificate of CA, or plain HTTP on loopback when CA is
	// empty.
	Registry string
	CA       []byte
	// Dir receives catalog.json, the content of the catalog image pushed last.
	Dir string

	mu        sync.Mutex
	published map[string]publishedBundle // by bundle name; a bundle published again replaces itself
}

// publishedBundle is a bundle directory and its bundle image by digest.
type publishedBundle struct {
	dir, image string
}

// CatalogRef is the catalog image's tag.
func (p *Publisher) CatalogRef() string {
	return p.Registry + "/" + CatalogRepository + ":" + CatalogTag
}

// Publish pushes the bundle in dir as a bundle image, then the catalog image holding it and every bundle published
// before, to CatalogRef.
func (p *Publisher) Publish(ctx context.Context, dir string) (Published, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	b, problems := bundle.Load(dir)
	if b == nil {
		return Published{}, fmt.Errorf("bundle %s: %v", dir, problems)
	}
	img, err := image.BundleImage(dir)
	if err != nil {
		return Published{}, err
	}
	repo := p.Registry + "/" + BundleRepository + "/" + b.Package
	out := Published{Bundle: b.Name, BundleTag: repo + ":" + strings.ReplaceAll(b.Version.String(), "+", "_")}
	digest, err := image.Push(ctx, img, out.BundleTag, p.imageOptions())
	if err != nil {
		return Published{}, err
	}
	out.BundleImage = repo + "@" + digest
	if p.published == nil {
		p.published = map[string]publishedBundle{}
	}
	p.published[b.Name] = publishedBundle{dir: dir, image: out.BundleImage}
	catalog, err := renderCatalog(p.published, b.Package, b.Name)
	if err != nil {
		return Published{}, err
	}
	if err := os.MkdirAll(p.Dir, 0o755); err != nil {
		return Published{}, err
	}
	if err := os.WriteFile(filepath.Join(p.Dir, "catalog.json"), catalog, 0o644); err != nil {
		return Published{}, err
	}
	catImg, err := image.CatalogImage(os.DirFS(p.Dir))
	if err != nil {
		return Published{}, err
	}
	out.CatalogDigest, err = image.Push(ctx, catImg, p.CatalogRef(), p.imageOptions())
	return out, err
}

func (p *Publisher) imageOptions() image.Options {
	if len(p.CA) == 0 {
		return image.Options{Insecure: true}
	}
	return image.Options{CABundle: p.CA}
}

// renderCatalog renders the published bundles as a File-Based Catalog, as `almctl catalog push` does: olm.package,
// olm.channel with the upgrade edges, and olm.bundle documents naming the bundle image by digest with
// olm.csv.metadata (and no olm.bundle.object unless CatalogWithObjects). It fails unless bundle mustServe of
// package pkg is in it.
func renderCatalog(published map[string]publishedBundle, pkg, mustServe string) ([]byte, error) {
	names := make([]string, 0, len(published))
	for n := range published {
		names = append(names, n)
	}
	sort.Strings(names)
	contents := &fbc.Contents{}
	opts := index.RenderOptions{Images: map[string]string{}, OmitObjects: !CatalogWithObjects}
	for _, n := range names {
		c, err := fbc.LoadDirWith(published[n].dir, fbc.LoadOptions{ForRender: true})
		if err != nil {
			return nil, err
		}
		contents.Add(c)
		opts.Images[n] = published[n].image
	}
	ix := index.New(index.Catalog{Name: CatalogRepository, Contents: contents})
	if ix.Bundle(pkg, mustServe) == nil {
		return nil, fmt.Errorf("the catalog would not serve %s: %v", mustServe, ix.Problems())
	}
	var out bytes.Buffer
	if err := ix.WriteCatalogWith("", "json", &out, opts); err != nil {
		return nil, fmt.Errorf("rendering the catalog: %w", err)
	}
	return out.Bytes(), nil
}
