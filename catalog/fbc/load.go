// Package fbc reads and writes catalogs: File-Based Catalog documents (olm.package, olm.channel, olm.bundle) and
// catalog directories (registry+v1 bundle directories and File-Based Catalog files). What a source holds is its
// Contents, which the index takes over.
package fbc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/blang/semver/v4"
	opv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/almproject/alm/catalog/bundle"
	"github.com/almproject/alm/catalog/deprecation"
)

// Contents is what one source holds before it is indexed: File-Based Catalog packages and channels, and bundles
// (from bundle directories, FBC olm.bundle documents or ConfigMaps), with the problems found while reading them.
type Contents struct {
	Packages []PackageDoc
	Channels []ChannelDoc
	Bundles  []*bundle.Bundle
	Problems []bundle.Problem
	// Deprecations are the olm.deprecations documents (deprecation.Index reads them).
	Deprecations []deprecation.Doc
}

// PackageDoc is an olm.package document.
type PackageDoc struct {
	Name           string
	DefaultChannel string
	// Path is the file it came from.
	Path string
}

// ChannelDoc is an olm.channel document: the channel's entries with their upgrade edges.
type ChannelDoc struct {
	Package string
	Name    string
	Entries []declcfg.ChannelEntry
	// Path is the file it came from.
	Path string
}

// Add appends other's documents, bundles and problems to c.
func (c *Contents) Add(other *Contents) {
	c.Packages = append(c.Packages, other.Packages...)
	c.Channels = append(c.Channels, other.Channels...)
	c.Bundles = append(c.Bundles, other.Bundles...)
	c.Problems = append(c.Problems, other.Problems...)
	c.Deprecations = append(c.Deprecations, other.Deprecations...)
}

// LoadDir reads a catalog directory: every registry+v1 bundle directory in it (a directory with manifests/ or
// metadata/annotations.yaml, at any depth, e.g. <package>/<version>/) and every File-Based Catalog file (.json,
// .yaml, .yml) outside bundle directories. Files are read concurrently; the result does not depend on the order.
// Problems are in the result; the error is only for a directory that cannot be read at all.
func LoadDir(dir string) (*Contents, error) {
	return LoadDirWith(dir, LoadOptions{})
}

// LoadOptions tune LoadDirWith.
type LoadOptions struct {
	// ForRender keeps each bundle's objects as compressed JSON, so rendering the catalog (WriteCatalog) does not read
	// and decode the bundle directories a second time, and keeps the olm.csv.metadata property of File-Based
	// Catalog bundles whole (bundle.Metadata.Raw), so rendering writes it back. The index alone (LoadDir) keeps
	// no manifests and only the part of olm.csv.metadata an OperatorVersion shows.
	ForRender bool
	// MaxDocumentBytes bounds one document (0: DefaultMaxDocumentBytes). Decoding holds a whole document and the
	// values made of it in memory, several times its size, so one huge document in a catalog image would take as
	// much memory as it is large: a larger document ends its file with a problem naming the limit.
	MaxDocumentBytes int64
	// MaxDocuments bounds the documents read from one file (Load), or from all files of one catalog (LoadFS): 0
	// means DefaultMaxDocuments. What is made of a document stays in memory (the index holds every bundle), so
	// a catalog of many small documents would otherwise take memory without bound; the documents past the limit are
	// not read, and a problem names the limit.
	MaxDocuments int

	documents *int // documents read so far by the files of one LoadFS
	// total counts the documents read by the files LoadFS parses concurrently, against MaxDocuments; a file stops
	// once it passes it, and sets *cut.
	total *atomic.Int64
	cut   *bool
	// yaml is held by a file of LoadFS while it is decoded as YAML: the Kubernetes decoder holds a document several
	// times over (as YAML, as JSON, decoded), so only one YAML file is decoded at a time.
	yaml chan struct{}
}

// DefaultMaxDocuments is the default of LoadOptions.MaxDocuments: 100,000 documents, ten times a 10,000-bundle
// catalog. The loaded contents of a minimal olm.bundle document take about 2 KB (TestHugeCatalogImageMemoryBounded
// in controllers/catalogsource), so the limit holds them to about 200 MB.
const DefaultMaxDocuments = 100_000

// DefaultMaxDocumentBytes is the default of LoadOptions.MaxDocumentBytes: 16 MiB. The largest real documents are
// olm.bundle documents whose olm.bundle.object properties carry a bundle's manifests (CRDs included) in base64, a
// few MiB.
const DefaultMaxDocumentBytes = 16 << 20

// errDocumentTooLarge ends the reading of a file at a document over the limit.
type errDocumentTooLarge struct{ limit int64 }

func (e *errDocumentTooLarge) Error() string {
	return fmt.Sprintf("a document of more than %d bytes (the limit of one File-Based Catalog document)", e.limit)
}

// docReader counts the bytes read since the last document was decoded and fails once they pass the limit. Reads
// are at most 64 KiB, so the decoder's read-ahead (counted for the next document) stays within that.
// Once tripped, it reads nothing more.
type docReader struct {
	r           io.Reader
	limit, used int64
	tripped     error
}

func (d *docReader) Read(p []byte) (int, error) {
	if d.tripped != nil {
		return 0, d.tripped
	}
	if len(p) > 64<<10 {
		p = p[:64<<10]
	}
	n, err := d.r.Read(p)
	d.used += int64(n)
	if d.used > d.limit {
		d.tripped = &errDocumentTooLarge{limit: d.limit}
		return n, d.tripped
	}
	return n, err
}

// LoadDirWith is LoadDir with options.
func LoadDirWith(dir string, opts LoadOptions) (*Contents, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, err
	}
	var bundleDirs, fbcFiles []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if path != dir && strings.HasPrefix(name, ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if isBundleDir(path) {
				bundleDirs = append(bundleDirs, path)
				return filepath.SkipDir
			}
			return nil
		}
		if IsFBCFile(name) {
			fbcFiles = append(fbcFiles, path)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}

	// One result slot per input, filled concurrently, merged in walk order: deterministic.
	results := make([]*Contents, len(bundleDirs)+len(fbcFiles))
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if i < len(bundleDirs) {
					c := &Contents{}
					load := bundle.Load
					if opts.ForRender {
						load = bundle.LoadForRender
					}
					b, problems := load(bundleDirs[i])
					if b != nil {
						c.Bundles = append(c.Bundles, b)
					}
					c.Problems = problems
					results[i] = c
				} else {
					results[i] = loadFBCFile(fbcFiles[i-len(bundleDirs)], opts)
				}
			}
		}()
	}
	for i := range results {
		work <- i
	}
	close(work)
	wg.Wait()
	out := &Contents{}
	for _, c := range results {
		out.Add(c)
	}
	return out, nil
}

// isBundleDir reports whether dir is a registry+v1 bundle directory.
func isBundleDir(dir string) bool {
	if fi, err := os.Stat(filepath.Join(dir, "manifests")); err == nil && fi.IsDir() {
		return true
	}
	_, err := os.Stat(filepath.Join(dir, "metadata", "annotations.yaml"))
	return err == nil
}

func loadFBCFile(path string, opts LoadOptions) *Contents {
	f, err := os.Open(path)
	if err != nil {
		return &Contents{Problems: []bundle.Problem{bundle.Errorf(path, bundle.RuleLoadFailed, "", "%v", err)}}
	}
	defer f.Close()
	return LoadWith(f, path, opts)
}

// fbcDoc has the fields of every File-Based Catalog schema ALM reads; decoding into it reads a document once.
type fbcDoc struct {
	Schema         string          `json:"schema"`
	Name           string          `json:"name"`
	Package        string          `json:"package"`
	DefaultChannel string          `json:"defaultChannel"`
	Entries        json.RawMessage `json:"entries"` // olm.channel's and olm.deprecations' entries differ
	Image          string          `json:"image"`
	Properties     []fbcProperty   `json:"properties"`
	Kind           string          `json:"kind"`
}

type fbcProperty struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
	// csv is an olm.csv.metadata value decoded as the document was read (readProperty), with the error of a field
	// of the wrong type in csvErr; nil: Value holds it.
	csv    *csvMetadataDoc
	csvErr error
}

// Property types read from olm.bundle documents.
const (
	propPackage     = "olm.package"
	propGVK         = "olm.gvk"
	propGVKRequired = "olm.gvk.required"
	propPkgRequired = "olm.package.required"
	propObject      = "olm.bundle.object"
	propCSVMetadata = "olm.csv.metadata"
)

// Load reads File-Based Catalog documents (JSON or YAML stream) from r; path names r in problems: olm.package,
// olm.channel, olm.bundle and olm.deprecations. Documents of other schemas are skipped; a document that does not parse ends the file with a problem,
// keeping the documents before it.
func Load(r io.Reader, path string) *Contents {
	return LoadWith(r, path, LoadOptions{})
}

// LoadWith is Load with options.
func LoadWith(r io.Reader, path string, opts LoadOptions) *Contents {
	c := &Contents{}
	limit, maxDocs := opts.MaxDocumentBytes, opts.MaxDocuments
	if limit <= 0 {
		limit = DefaultMaxDocumentBytes
	}
	if maxDocs <= 0 {
		maxDocs = DefaultMaxDocuments
	}
	if opts.documents == nil {
		opts.documents = new(int)
	}
	counted := &docReader{r: r, limit: limit}
	dec, yaml := newDocDecoder(counted, opts.ForRender)
	if yaml && opts.yaml != nil {
		opts.yaml <- struct{}{}
		defer func() { <-opts.yaml }()
	}
	for ; ; counted.used = 0 {
		var d fbcDoc
		err := dec(&d)
		switch {
		case counted.tripped != nil: // whatever the decoder made of it (it may retry what it buffered as YAML)
			c.Problems = append(c.Problems, bundle.Errorf(path, bundle.RuleMalformedFBC,
				"split the catalog into smaller documents: one olm.bundle document per bundle", "%v", counted.tripped))
			return c
		case errors.Is(err, io.EOF):
			return c
		case err != nil:
			c.Problems = append(c.Problems, bundle.Errorf(path, bundle.RuleMalformedFBC, "fix the document syntax; `almctl catalog render` writes valid documents",
				"%v", err))
			return c
		}
		if *opts.documents++; *opts.documents > maxDocs {
			c.Problems = append(c.Problems, bundle.Errorf(path, bundle.RuleMalformedFBC, "split the catalog into several CatalogSources",
				"more than %d documents in the catalog; the rest is not read", maxDocs))
			return c
		}
		if opts.total != nil && opts.total.Add(1) > int64(maxDocs) {
			*opts.cut = true
			return c
		}
		c.add(&d, path, opts)
	}
}

// add keeps one decoded document, or the problem it has.
func (c *Contents) add(d *fbcDoc, path string, opts LoadOptions) {
	switch d.Schema {
	case declcfg.SchemaPackage:
		if d.Name == "" {
			c.Problems = append(c.Problems, bundle.Errorf(path, bundle.RuleMalformedFBC, "", "olm.package without a name"))
			return
		}
		c.Packages = append(c.Packages, PackageDoc{Name: d.Name, DefaultChannel: d.DefaultChannel, Path: path})
	case declcfg.SchemaChannel:
		if d.Name == "" || d.Package == "" {
			c.Problems = append(c.Problems, bundle.Errorf(path, bundle.RuleMalformedFBC, "", "olm.channel %q without a name or package", d.Name))
			return
		}
		var entries []declcfg.ChannelEntry
		if err := unmarshalEntries(d.Entries, &entries); err != nil {
			c.Problems = append(c.Problems, bundle.Errorf(path, bundle.RuleMalformedFBC, "", "olm.channel %q: entries: %v", d.Name, err))
			return
		}
		c.Channels = append(c.Channels, ChannelDoc{Package: d.Package, Name: d.Name, Entries: entries, Path: path})
	case declcfg.SchemaDeprecation:
		dep := deprecation.Doc{Deprecation: declcfg.Deprecation{Schema: d.Schema, Package: d.Package}, Path: path}
		if err := unmarshalEntries(d.Entries, &dep.Entries); err != nil {
			c.Problems = append(c.Problems, bundle.Errorf(path, bundle.RuleMalformedFBC, "", "olm.deprecations of %q: entries: %v", d.Package, err))
			return
		}
		c.Deprecations = append(c.Deprecations, dep)
	case declcfg.SchemaBundle:
		b, p := bundleFromDoc(d, path, opts)
		if p != nil {
			c.Problems = append(c.Problems, *p)
			return
		}
		c.Bundles = append(c.Bundles, b)
	case "":
		if d.Kind != "" {
			c.Problems = append(c.Problems, bundle.Warnf(path, bundle.RuleIgnoredDocument,
				"bundle manifests belong in a bundle directory: <bundle>/manifests/ and <bundle>/metadata/annotations.yaml",
				"a %s outside a bundle directory is ignored", d.Kind))
		} else {
			c.Problems = append(c.Problems, bundle.Warnf(path, bundle.RuleIgnoredDocument, "File-Based Catalog documents have a schema field",
				"a document without schema is ignored"))
		}
	}
}

// unmarshalEntries decodes a document's entries; absent entries are none.
func unmarshalEntries(raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return fastJSON.Unmarshal(raw, v)
}

// bundleFromDoc turns an olm.bundle document into a Bundle, or a problem.
func bundleFromDoc(d *fbcDoc, path string, opts LoadOptions) (*bundle.Bundle, *bundle.Problem) {
	fail := func(rule, hint, format string, args ...any) (*bundle.Bundle, *bundle.Problem) {
		p := bundle.Errorf(path, rule, hint, format, args...)
		p.Package, p.Bundle = d.Package, d.Name
		return nil, &p
	}
	if d.Name == "" || d.Package == "" {
		return fail(bundle.RuleMalformedFBC, "", "olm.bundle %q without a name or package", d.Name)
	}
	b := bundle.Bundle{Name: d.Name, Package: d.Package, Path: path, Image: d.Image, ImageDigest: pinnedDigest(d.Image)}
	var objects [][]byte
	versionSeen := false
	for _, p := range d.Properties {
		switch p.Type {
		case propPackage:
			var v struct {
				PackageName string `json:"packageName"`
				Version     string `json:"version"`
			}
			if err := fastJSON.Unmarshal(p.Value, &v); err != nil {
				return fail(bundle.RuleMalformedFBC, "", "bundle %s: olm.package property: %v", d.Name, err)
			}
			ver, err := semver.Parse(v.Version)
			if err != nil {
				return fail(bundle.RuleInvalidSemver, "use a semantic version such as 1.2.3 (no leading v)", "bundle %s: version %q: %v", d.Name, v.Version, err)
			}
			b.Version, versionSeen = ver, true
		case propGVK, propGVKRequired:
			var g struct {
				Group   string `json:"group"`
				Version string `json:"version"`
				Kind    string `json:"kind"`
			}
			if err := fastJSON.Unmarshal(p.Value, &g); err != nil {
				return fail(bundle.RuleMalformedFBC, "", "bundle %s: %s property: %v", d.Name, p.Type, err)
			}
			gvk := schema.GroupVersionKind{Group: g.Group, Version: g.Version, Kind: g.Kind}
			if p.Type == propGVK {
				b.Provides = append(b.Provides, gvk)
			} else {
				b.Requires = append(b.Requires, gvk)
			}
		case propPkgRequired:
			var r struct {
				PackageName  string `json:"packageName"`
				VersionRange string `json:"versionRange"`
			}
			if err := fastJSON.Unmarshal(p.Value, &r); err != nil {
				return fail(bundle.RuleMalformedFBC, "", "bundle %s: %s property: %v", d.Name, p.Type, err)
			}
			if r.PackageName == "" {
				return fail(bundle.RuleInvalidDependency, "name the package: value.packageName", "bundle %s: %s without a packageName", d.Name, p.Type)
			}
			if err := bundle.CheckRange(r.VersionRange); err != nil {
				return fail(bundle.RuleInvalidDependency, "value.versionRange is a semver range such as >=1.2.0 <2.0.0",
					"bundle %s: %s %s: %v", d.Name, p.Type, r.PackageName, err)
			}
			b.RequiresPackages = append(b.RequiresPackages, bundle.PackageRequirement{Package: r.PackageName, Range: r.VersionRange})
		case propObject:
			var o struct {
				Data []byte `json:"data"`
			}
			if err := fastJSON.Unmarshal(p.Value, &o); err != nil {
				return fail(bundle.RuleMalformedFBC, "", "bundle %s: olm.bundle.object property: %v", d.Name, err)
			}
			objects = append(objects, o.Data)
		case propCSVMetadata:
			md, err := csvMetadata(p)
			if err != nil {
				return fail(bundle.RuleMalformedFBC, "", "bundle %s: olm.csv.metadata property: %v", d.Name, err)
			}
			if opts.ForRender {
				md.Raw = append(json.RawMessage(nil), p.Value...)
			}
			b.Metadata = md
		}
	}
	if !versionSeen {
		return fail(bundle.RuleInvalidSemver, "add an olm.package property with the bundle's version", "bundle %s has no version (olm.package property)", d.Name)
	}
	return bundle.FromFBC(b, objects), nil
}

// csvMetadataDoc is the part of an olm.csv.metadata property (property.CSVMetadata) that csvMetadata keeps; the rest
// of the value is skipped, not decoded.
type csvMetadataDoc struct {
	DisplayName               string            `json:"displayName"`
	Annotations               map[string]string `json:"annotations"`
	CustomResourceDefinitions struct {
		Owned    []crdDescriptionDoc `json:"owned"`
		Required []crdDescriptionDoc `json:"required"`
	} `json:"crdDescriptions"`
}

// crdDescriptionDoc is the part of a CRD description an OperatorVersion shows.
type crdDescriptionDoc struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	Kind        string `json:"kind"`
	DisplayName string `json:"displayName"`
}

// csvMetadata keeps what an OperatorVersion shows of an olm.csv.metadata property; descriptions, icons and
// descriptors are dropped (a catalog of thousands of bundles would hold them all in memory).
func csvMetadata(p fbcProperty) (*bundle.Metadata, error) {
	v := p.csv
	if v == nil {
		v = &csvMetadataDoc{}
		if err := fastJSON.Unmarshal(p.Value, v); err != nil {
			return nil, err
		}
	} else if p.csvErr != nil {
		return nil, p.csvErr
	}
	md := &bundle.Metadata{DisplayName: v.DisplayName, SkipRange: v.Annotations[bundle.AnnotationSkipRange], Handoff: v.Annotations[bundle.AnnotationHandoff]}
	if md.Handoff != "" {
		if err := bundle.CheckHandoff(md.Handoff); err != nil {
			return nil, err
		}
	}
	for _, d := range v.CustomResourceDefinitions.Owned {
		md.CRDs.Owned = append(md.CRDs.Owned, opv1alpha1.CRDDescription{Name: d.Name, Version: d.Version, Kind: d.Kind, DisplayName: d.DisplayName})
	}
	for _, d := range v.CustomResourceDefinitions.Required {
		md.CRDs.Required = append(md.CRDs.Required, opv1alpha1.CRDDescription{Name: d.Name, Version: d.Version, Kind: d.Kind, DisplayName: d.DisplayName})
	}
	return md, nil
}

// pinnedDigest is the digest an image reference pins ("repo@sha256:..."), or "".
func pinnedDigest(ref string) string {
	if _, d, ok := strings.Cut(ref, "@"); ok && strings.HasPrefix(d, "sha256:") {
		return d
	}
	return ""
}

// IsFBCFile reports whether a file name is one a File-Based Catalog may be written in (.json, .yaml, .yml): the
// files LoadDir and LoadFS read.
func IsFBCFile(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".json", ".yaml", ".yml":
		return true
	}
	return false
}

// LoadFiles reads the File-Based Catalog files of a map (slash-separated path -> content, e.g. a catalog image's
// configs directory) in lexical path order, like LoadFS, and drops each file from the map once it is read, so a
// large catalog's raw documents and its parsed contents are not held in memory at once.
func LoadFiles(files map[string][]byte, prefix string) *Contents {
	paths := make([]string, 0, len(files))
	for p := range files {
		if IsFBCFile(p) {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	c := &Contents{}
	for _, p := range paths {
		data := files[p]
		delete(files, p)
		c.Add(Load(bytes.NewReader(data), prefix+p))
	}
	return c
}
