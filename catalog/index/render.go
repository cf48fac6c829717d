package index

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"sort"
	"strings"

	opv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"

	"github.com/almproject/alm/catalog/bundle"
	"github.com/almproject/alm/catalog/fbc"
)

// RenderOptions say how DeclarativeConfigWith and WriteCatalogWith render bundles. The zero value renders as
// DeclarativeConfig and WriteCatalog do.
type RenderOptions struct {
	// Images maps bundle names to bundle image references (by digest: REPO/<package>@sha256:…). A bundle in
	// Images is rendered with that image and with an olm.csv.metadata property built from its
	// ClusterServiceVersion, as opm renders a bundle image. Other bundles keep the image and the olm.csv.metadata
	// their source had (File-Based Catalogs; loaded with fbc.LoadOptions.ForRender to keep olm.csv.metadata whole).
	Images map[string]string
	// OmitObjects leaves out the olm.bundle.object properties, as current opm writes catalogs: a bundle's manifests
	// are then only in its bundle image, so every bundle must have an image.
	OmitObjects bool
}

// DeclarativeConfig renders a catalog of the index as a File-Based Catalog: olm.package, olm.channel and
// olm.bundle documents (with olm.package, olm.gvk, olm.gvk.required and olm.bundle.object properties; CRDs as
// normalized to v1). Excluded bundles are left out. An empty catalog name renders the highest-priority catalog.
// It holds every bundle's manifests at once; WriteCatalog streams them.
func (ix *Index) DeclarativeConfig(catalog string) (*declcfg.DeclarativeConfig, error) {
	return ix.DeclarativeConfigWith(catalog, RenderOptions{})
}

// DeclarativeConfigWith is DeclarativeConfig with options: bundle image references and whether objects are written.
func (ix *Index) DeclarativeConfigWith(catalog string, opts RenderOptions) (*declcfg.DeclarativeConfig, error) {
	cfg := &declcfg.DeclarativeConfig{}
	err := ix.eachPackage(catalog, func(head *declcfg.DeclarativeConfig, bundles []*bundle.Bundle) error {
		cfg.Packages = append(cfg.Packages, head.Packages...)
		cfg.Channels = append(cfg.Channels, head.Channels...)
		cfg.Deprecations = append(cfg.Deprecations, head.Deprecations...)
		for _, b := range bundles {
			db, err := renderBundle(b, opts)
			if err != nil {
				return err
			}
			cfg.Bundles = append(cfg.Bundles, db)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

// WriteCatalog writes a catalog of the index as a File-Based Catalog in format ("json" or "yaml"), like
// DeclarativeConfig and fbc.Write, but streamed: bundles are rendered concurrently (GOMAXPROCS workers) and written in
// order, with at most a few bundles' manifests in memory at once.
func (ix *Index) WriteCatalog(catalog, format string, w io.Writer) error {
	return ix.WriteCatalogWith(catalog, format, w, RenderOptions{})
}

// WriteCatalogWith is WriteCatalog with options, like DeclarativeConfigWith.
func (ix *Index) WriteCatalogWith(catalog, format string, w io.Writer, opts RenderOptions) error {
	if f := strings.ToLower(format); f != "json" && f != "yaml" && f != "yml" && f != "" {
		return fmt.Errorf("unknown output format %q: use json or yaml", format)
	}
	var jobs []renderJob
	err := ix.eachPackage(catalog, func(head *declcfg.DeclarativeConfig, bundles []*bundle.Bundle) error {
		jobs = append(jobs, renderJob{head: head})
		for _, b := range bundles {
			jobs = append(jobs, renderJob{bundle: b, opts: opts})
		}
		return nil
	})
	if err != nil {
		return err
	}
	return writeOrdered(jobs, format, w)
}

// renderJob is one piece of WriteCatalog's output: a package's olm.package and olm.channel documents, or a bundle.
type renderJob struct {
	head   *declcfg.DeclarativeConfig
	bundle *bundle.Bundle
	opts   RenderOptions
}

type rendered struct {
	data []byte
	err  error
}

// render is the job's documents in format.
func (j renderJob) render(format string) rendered {
	if j.bundle != nil && (format == "" || strings.EqualFold(format, "json")) {
		return renderBundleJSON(j.bundle, j.opts)
	}
	cfg := j.head
	if j.bundle != nil {
		db, err := renderBundle(j.bundle, j.opts)
		if err != nil {
			return rendered{err: err}
		}
		cfg = &declcfg.DeclarativeConfig{Bundles: []declcfg.Bundle{db}}
	}
	var buf bytes.Buffer
	err := fbc.Write(cfg, format, &buf)
	return rendered{data: buf.Bytes(), err: err}
}

// objectMark is the start of the stand-in data of an olm.bundle.object property in renderBundleJSON.
const objectMark = "\x00alm-render-object-7c2f9e4b-"

// renderBundleJSON is fbc.Write(json) of one bundle, byte for byte, without passing each object through the JSON
// encoder twice (base64, then compact and indent): the bundle is encoded with short stand-ins for the objects' data,
// whose base64 is then replaced by the objects' base64.
func renderBundleJSON(b *bundle.Bundle, opts RenderOptions) rendered {
	db, objects, err := renderBundleParts(b, opts)
	if err != nil {
		return rendered{err: err}
	}
	marks := make([]string, len(objects))
	for i := range objects {
		mark := fmt.Sprintf("%s%d\x00", objectMark, i)
		marks[i] = `"` + base64.StdEncoding.EncodeToString([]byte(mark)) + `"`
		db.Properties = append(db.Properties, property.MustBuildBundleObject([]byte(mark)))
	}
	var buf bytes.Buffer
	if err := fbc.Write(&declcfg.DeclarativeConfig{Bundles: []declcfg.Bundle{db}}, "json", &buf); err != nil {
		return rendered{err: err}
	}
	encoded := buf.Bytes()
	size := len(encoded)
	for _, o := range objects {
		size += base64.StdEncoding.EncodedLen(len(o))
	}
	out := make([]byte, 0, size)
	for i, o := range objects {
		at := bytes.Index(encoded, []byte(marks[i]))
		if at < 0 {
			return rendered{err: fmt.Errorf("bundle %s: rendering object %d: stand-in not found", b.Name, i)}
		}
		out = append(out, encoded[:at+1]...)
		out = base64.StdEncoding.AppendEncode(out, o)
		encoded = encoded[at+len(marks[i])-1:]
	}
	return rendered{data: append(out, encoded...)}
}

// writeOrdered renders jobs on GOMAXPROCS workers, at most twice as many ahead of the writer, and writes them in
// order.
func writeOrdered(jobs []renderJob, format string, w io.Writer) error {
	results := make([]chan rendered, len(jobs))
	for i := range results {
		results[i] = make(chan rendered, 1)
	}
	ahead := make(chan struct{}, 2*runtime.GOMAXPROCS(0))
	done := make(chan struct{})
	defer close(done)
	go func() {
		for i, j := range jobs {
			select {
			case ahead <- struct{}{}:
			case <-done:
				return
			}
			go func() { results[i] <- j.render(format) }()
		}
	}()
	for i := range jobs {
		r := <-results[i]
		<-ahead
		if r.err != nil {
			return r.err
		}
		if _, err := w.Write(r.data); err != nil {
			return err
		}
	}
	return nil
}

// eachPackage calls fn for each package of a catalog, by name, with its olm.package and olm.channel documents and
// its bundles, oldest first. An empty catalog name is the highest-priority catalog.
func (ix *Index) eachPackage(catalog string, fn func(head *declcfg.DeclarativeConfig, bundles []*bundle.Bundle) error) error {
	if catalog == "" && len(ix.catalogs) > 0 {
		catalog = ix.catalogs[0].Name
	}
	for _, name := range ix.PackageNames() {
		for _, p := range ix.packages[name] {
			if p.Catalog != catalog {
				continue
			}
			head := &declcfg.DeclarativeConfig{Packages: []declcfg.Package{{Schema: declcfg.SchemaPackage, Name: p.Name, DefaultChannel: p.DefaultChannel}},
				Deprecations: p.Deprecations.Docs(p.Name)}
			for _, ch := range p.Channels {
				c := declcfg.Channel{Schema: declcfg.SchemaChannel, Package: p.Name, Name: ch.Name, Entries: []declcfg.ChannelEntry{}}
				// Oldest first, as people write them.
				for i := len(ch.Entries) - 1; i >= 0; i-- {
					e := ch.Entries[i]
					c.Entries = append(c.Entries, declcfg.ChannelEntry{Name: e.Bundle.Name, Replaces: e.Replaces, Skips: e.Skips, SkipRange: e.SkipRange})
				}
				head.Channels = append(head.Channels, c)
			}
			bundles := append([]*bundle.Bundle(nil), p.Bundles...)
			sort.SliceStable(bundles, func(i, j int) bool { return bundles[i].Version.LT(bundles[j].Version) })
			if err := fn(head, bundles); err != nil {
				return err
			}
		}
	}
	return nil
}

func renderBundle(b *bundle.Bundle, opts RenderOptions) (declcfg.Bundle, error) {
	db, objects, err := renderBundleParts(b, opts)
	for _, o := range objects {
		db.Properties = append(db.Properties, property.MustBuildBundleObject(o))
	}
	return db, err
}

// renderBundleParts is the olm.bundle document of b without its olm.bundle.object properties, and the objects
// (none with opts.OmitObjects).
func renderBundleParts(b *bundle.Bundle, opts RenderOptions) (declcfg.Bundle, [][]byte, error) {
	db := declcfg.Bundle{Schema: declcfg.SchemaBundle, Name: b.Name, Package: b.Package, Image: b.Image}
	image, mapped := opts.Images[b.Name]
	if mapped {
		db.Image = image
	}
	db.Properties = append(db.Properties, property.MustBuildPackage(b.Package, b.Version.String()))
	for _, g := range b.Provides {
		db.Properties = append(db.Properties, property.MustBuildGVK(g.Group, g.Version, g.Kind))
	}
	for _, g := range b.Requires {
		db.Properties = append(db.Properties, property.MustBuildGVKRequired(g.Group, g.Version, g.Kind))
	}
	for _, r := range b.RequiresPackages {
		db.Properties = append(db.Properties, property.MustBuildPackageRequired(r.Package, r.Range))
	}
	if opts.OmitObjects && db.Image == "" {
		return db, nil, fmt.Errorf("bundle %s (%s): no bundle image to render it with and its objects are left out: "+
			"push it as a bundle image and name it in RenderOptions.Images, or keep its objects", b.Name, b.Path)
	}
	var raw json.RawMessage
	if b.Metadata != nil {
		raw = b.Metadata.Raw
	}
	var objects [][]byte
	if !opts.OmitObjects || (mapped && raw == nil) {
		var err error
		if objects, err = b.ObjectsJSON(); err != nil {
			return db, nil, err
		}
	}
	if mapped && raw == nil {
		md, err := csvMetadata(b.Name, objects)
		if err != nil {
			return db, nil, err
		}
		db.Properties = append(db.Properties, md)
	} else if raw != nil {
		db.Properties = append(db.Properties, property.Property{Type: property.TypeCSVMetadata, Value: raw})
	}
	if opts.OmitObjects {
		objects = nil
	}
	return db, objects, nil
}

// csvMetadata is the olm.csv.metadata property of the ClusterServiceVersion among a bundle's objects.
func csvMetadata(name string, objects [][]byte) (property.Property, error) {
	for _, o := range objects {
		var head struct {
			Kind string `json:"kind"`
		}
		if err := json.Unmarshal(o, &head); err != nil || head.Kind != opv1alpha1.ClusterServiceVersionKind {
			continue
		}
		var csv opv1alpha1.ClusterServiceVersion
		if err := json.Unmarshal(o, &csv); err != nil {
			return property.Property{}, fmt.Errorf("bundle %s: ClusterServiceVersion: %w", name, err)
		}
		return property.MustBuildCSVMetadata(csv), nil
	}
	return property.Property{}, fmt.Errorf("bundle %s: no ClusterServiceVersion among its objects to build olm.csv.metadata from; "+
		"render it from its bundle directory or from a catalog that holds its objects", name)
}
