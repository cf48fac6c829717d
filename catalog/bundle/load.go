package bundle

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/manifests"
	opv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/almproject/alm/catalog/internal/fastyaml"
)

// manifestDoc is one manifest file, decoded once: its JSON and the fields every step needs.
type manifestDoc struct {
	file string // shown path, for problems
	raw  []byte // compact JSON of the object
	head fastyaml.Head
}

// bundleSource is a bundle directory as read from disk: annotations, decoded manifests and a digest of the files.
type bundleSource struct {
	dir, shown string
	ann        manifests.Annotations
	docs       []manifestDoc
	size       int64
	digest     [sha256.Size]byte
}

// parsedBundle is a bundle's manifests decoded into their types, CRDs normalized to v1.
type parsedBundle struct {
	csv     *opv1alpha1.ClusterServiceVersion
	csvDoc  *manifestDoc
	crds    []*apiextv1.CustomResourceDefinition
	crdDocs []*manifestDoc               // the file of each CRD; nil raw when the CRD was changed by normalization
	crdKeys [][sha256.Size]byte          // a digest of each CRD's file content (the CRD validation cache's key)
	objects []*unstructured.Unstructured // the kinds ALM installs
	objDocs []*manifestDoc
	// unsupported are objects of kinds ALM does not install.
	unsupported []*unstructured.Unstructured
	version     semver.Version
}

// Load loads and validates one registry+v1 bundle directory (manifests/ and metadata/annotations.yaml).
// It returns nil and the problems when the bundle has an error; warnings come with a usable bundle. The bundle
// keeps only what the index needs; Manifests reads the directory again.
func Load(dir string) (*Bundle, []Problem) {
	return loadBundle(dir, dir, false)
}

// LoadInMemory is Load for a bundle whose directory does not stay on disk (a ConfigMap's files unpacked into a
// temporary directory): the bundle keeps its manifests in memory, and problems name its files shown/<relative
// path>.
func LoadInMemory(dir, shown string) (*Bundle, []Problem) {
	return loadBundle(dir, shown, true)
}

// LoadForRender is Load keeping how to render the bundle's objects (ObjectsJSON): objects that normalization
// changed are kept as their rendered JSON, compressed; the others are read again from their files and checked
// against the digest of the JSON they had at load.
func LoadForRender(dir string) (*Bundle, []Problem) {
	b, problems := loadBundle(dir, dir, true)
	if b == nil {
		return b, problems
	}
	plan, err := renderPlan(b.manifests)
	if err != nil {
		return nil, append(problems, Errorf(dir, RuleLoadFailed, "", "%v", err))
	}
	b.plan, b.manifests = plan, nil
	b.source = &diskBundle{dir: dir, digest: b.digest}
	return b, problems
}

// loadBundle loads the bundle in dir, naming files in problems as shown/<relative path>. With keep, the bundle holds
// its manifests in memory (for sources that do not stay on disk, such as ConfigMaps).
func loadBundle(dir, shown string, keep bool) (*Bundle, []Problem) {
	src, problems := readBundle(dir, shown)
	if HasErrors(problems) {
		return nil, withBundle(problems, src.ann.PackageName, src.nameForProblems())
	}
	pb, more := parseBundle(src)
	problems = append(problems, more...)
	if HasErrors(problems) {
		return nil, withBundle(problems, src.ann.PackageName, src.nameForProblems())
	}
	problems = append(problems, validateBundle(src, pb)...)
	problems = withBundle(problems, src.ann.PackageName, pb.csv.Name)
	if HasErrors(problems) {
		return nil, problems
	}
	if _, err := handoffTimeout(pb.csv); err != nil {
		problems = append(problems, withBundle([]Problem{Errorf(shown, RuleInvalidHandoff, `write "true" or a duration such as 5m`, "%v", err)},
			src.ann.PackageName, pb.csv.Name)...)
	}
	pkgs, more := readDependencies(dir, func(rel string) string { return filepath.Join(shown, rel) })
	problems = append(problems, withBundle(more, src.ann.PackageName, pb.csv.Name)...)
	if HasErrors(problems) {
		return nil, problems
	}
	m := pb.manifests()
	b := bundleFromManifests(m, src.ann.PackageName, pb.version, shown)
	b.RequiresPackages = pkgs
	b.channels = splitList(src.ann.Channels)
	b.defaultChannel = src.ann.DefaultChannelName
	b.minKubeVersion = pb.csv.Spec.MinKubeVersion
	b.digest = src.digest
	if !keep {
		b.manifests = nil
		b.source = &diskBundle{dir: dir, digest: src.digest}
	}
	return b, problems
}

// nameForProblems is the CSV's name when the bundle has a readable one, else the directory.
func (s *bundleSource) nameForProblems() string {
	for _, d := range s.docs {
		if d.head.Kind == opv1alpha1.ClusterServiceVersionKind && d.head.Metadata.Name != "" {
			return d.head.Metadata.Name
		}
	}
	return s.shown
}

// diskBundle is where a bundle loaded from a directory reads its manifests again.
type diskBundle struct {
	dir    string
	digest [sha256.Size]byte
}

// load reads the bundle's manifests again; they must be the ones the catalog validated.
func (d *diskBundle) load() (*Manifests, error) {
	src, problems := readBundle(d.dir, d.dir)
	if HasErrors(problems) {
		return nil, fmt.Errorf("bundle %s: %s", d.dir, firstError(problems))
	}
	if src.digest != d.digest {
		return nil, fmt.Errorf("bundle %s changed on disk since the catalog was loaded; it is read again at the next load", d.dir)
	}
	pb, problems := parseBundle(src)
	if HasErrors(problems) {
		return nil, fmt.Errorf("bundle %s: %s", d.dir, firstError(problems))
	}
	return pb.manifests(), nil
}

func firstError(ps []Problem) string {
	for _, p := range ps {
		if p.IsError() {
			return p.String()
		}
	}
	return ""
}

// manifests is the Manifests of a parsed bundle, with the JSON of every object that normalization left unchanged.
func (pb *parsedBundle) manifests() *Manifests {
	m := &Manifests{CSV: pb.csv, CRDs: pb.crds, Objects: pb.objects, raw: map[any][]byte{}, files: map[any]string{}}
	keep := func(v any, d *manifestDoc) {
		if d != nil && len(d.head.Status) == 0 {
			m.raw[v], m.files[v] = d.raw, d.file
		}
	}
	keep(pb.csv, pb.csvDoc)
	for i, crd := range pb.crds {
		keep(crd, pb.crdDocs[i])
	}
	for i, o := range pb.objects {
		keep(o, pb.objDocs[i])
	}
	return m
}

// readBundle reads a bundle directory: size, annotations, and every manifest file decoded once, with the
// problems that make it unreadable.
func readBundle(dir, shown string) (*bundleSource, []Problem) {
	src := &bundleSource{dir: dir, shown: shown}
	at := func(rel string) string { return filepath.Join(shown, rel) }
	files, size, err := Files(dir)
	var irregular *irregularFileError
	if errors.As(err, &irregular) {
		return src, []Problem{Errorf(at(irregular.rel), RuleIrregularFile, "replace links by the files themselves", "%v", err)}
	}
	if err != nil {
		return src, []Problem{Errorf(shown, RuleLoadFailed, "", "%v", err)}
	}
	src.size = size
	if size > MaxBundleSize {
		return src, []Problem{Errorf(shown, RuleBundleTooLarge, "move large documentation or images out of the bundle",
			"bundle is %d bytes; a bundle must fit in one ConfigMap (%d bytes)", size, MaxBundleSize)}
	}
	ann, problems := readAnnotations(dir, at)
	src.ann = ann
	if fi, err := os.Stat(filepath.Join(dir, "manifests")); err != nil || !fi.IsDir() {
		return src, append(problems, Errorf(shown, RuleMissingManifests,
			"a registry+v1 bundle keeps its objects in manifests/ and its annotations in metadata/annotations.yaml",
			"no manifests/ directory"))
	}
	h := sha256.New()
	for _, rel := range files {
		if !strings.HasPrefix(rel, "manifests/") {
			continue
		}
		doc, p := readManifest(dir, rel, at(rel))
		problems = append(problems, p...)
		if doc != nil {
			h.Write([]byte(rel))
			h.Write(doc.raw)
			src.docs = append(src.docs, *doc)
		}
	}
	h.Sum(src.digest[:0])
	return src, problems
}

// readManifest reads and decodes one file of manifests/.
func readManifest(dir, rel, shown string) (*manifestDoc, []Problem) {
	if strings.Count(rel, "/") > 1 {
		return nil, []Problem{Errorf(shown, RuleNestedDirectory, "keep every manifest directly in manifests/",
			"manifests/ must not contain directories")}
	}
	if strings.HasPrefix(filepath.Base(rel), ".") {
		return nil, []Problem{Errorf(shown, RuleNestedDirectory, "remove hidden files from manifests/",
			"manifests/ must not contain hidden files")}
	}
	data, err := readBundleFile(filepath.Join(dir, rel))
	if err != nil {
		return nil, []Problem{Errorf(shown, RuleLoadFailed, "", "%v", err)}
	}
	if raw, head, ok := fastyaml.Manifest(data); ok && head.Kind != "" && head.APIVersion != "" {
		return &manifestDoc{file: shown, raw: raw, head: head}, nil
	}
	raw, more, err := fastyaml.Decode(data)
	if err != nil {
		return nil, []Problem{Errorf(shown, RuleMalformedYAML, "fix the YAML syntax", "%v", err)}
	}
	doc := &manifestDoc{file: shown, raw: raw}
	if raw != nil {
		if err := json.Unmarshal(raw, &doc.head); err != nil {
			return nil, []Problem{Errorf(shown, RuleInvalidObject, "every file in manifests/ holds one Kubernetes object", "%v", err)}
		}
	}
	if raw == nil || doc.head.Kind == "" || doc.head.APIVersion == "" {
		return nil, []Problem{Errorf(shown, RuleInvalidObject, "every file in manifests/ holds one Kubernetes object",
			"no apiVersion and kind")}
	}
	var problems []Problem
	if more {
		problems = append(problems, Warnf(shown, RuleIgnoredDocument, "put one object per file",
			"only the first YAML document of a manifest file is read"))
	}
	return doc, problems
}

// decodeObject decodes the first YAML or JSON document of data; more reports whether another non-empty one follows.
func decodeObject(data []byte) (obj *unstructured.Unstructured, more bool, err error) {
	raw, more, err := fastyaml.Decode(data)
	if err != nil || raw == nil {
		return nil, more, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, more, err
	}
	return &unstructured.Unstructured{Object: m}, more, nil
}

// parseBundle decodes the manifests into their types: exactly one CSV with a semver version, CRDs (v1beta1 ones
// converted to v1, preserveUnknownFields moved into the schema) and the other objects.
func parseBundle(src *bundleSource) (*parsedBundle, []Problem) {
	pb := &parsedBundle{}
	var problems []Problem
	var csvFiles []string
	for i := range src.docs {
		d := &src.docs[i]
		switch d.head.Kind {
		case opv1alpha1.ClusterServiceVersionKind:
			csvFiles = append(csvFiles, d.file)
			pb.csvDoc = d
		case "CustomResourceDefinition":
			problems = append(problems, pb.addCRD(d)...)
		default:
			obj := &unstructured.Unstructured{}
			if err := obj.UnmarshalJSON(d.raw); err != nil {
				problems = append(problems, Errorf(d.file, RuleInvalidObject, "every file in manifests/ holds one Kubernetes object", "%v", err))
				continue
			}
			if !isInstallable(obj) {
				pb.unsupported = append(pb.unsupported, obj)
				continue
			}
			pb.objects = append(pb.objects, obj)
			pb.objDocs = append(pb.objDocs, d)
		}
	}
	switch {
	case len(csvFiles) == 0:
		return pb, append(problems, Errorf(filepath.Join(src.shown, "manifests"), RuleMissingCSV,
			"add the operator's ClusterServiceVersion to manifests/", "no ClusterServiceVersion in manifests/"))
	case len(csvFiles) > 1:
		return pb, append(problems, Errorf(csvFiles[1], RuleMultipleCSVs, "a bundle is one version of one operator",
			"more than one ClusterServiceVersion: %s", strings.Join(csvFiles, ", ")))
	}
	return pb, append(problems, pb.parseCSV()...)
}

// parseCSV decodes the ClusterServiceVersion and its version.
func (pb *parsedBundle) parseCSV() []Problem {
	d := pb.csvDoc
	var v struct {
		Spec struct {
			Version any `json:"version"`
		} `json:"spec"`
	}
	_ = json.Unmarshal(d.raw, &v)
	s, isString := v.Spec.Version.(string)
	ver, err := semver.Parse(s)
	switch {
	case v.Spec.Version != nil && !isString:
		return []Problem{Errorf(d.file, RuleInvalidSemver, "quote the version and use a semantic version such as 1.2.3",
			"spec.version %v is not a string", v.Spec.Version)}
	case err != nil:
		return []Problem{Errorf(d.file, RuleInvalidSemver, "use a semantic version such as 1.2.3 (no leading v)",
			"spec.version %q: %v", s, err)}
	}
	pb.version = ver
	pb.csv = &opv1alpha1.ClusterServiceVersion{}
	if err := json.Unmarshal(d.raw, pb.csv); err != nil {
		return []Problem{Errorf(d.file, RuleInvalidObject, "fix the field named in the message", "ClusterServiceVersion: %v", err)}
	}
	return nil
}

// addCRD decodes a CRD; a v1beta1 one is converted to v1 as the API server does, and preserveUnknownFields moves
// into the schema. Every change is reported as a `normalized` warning.
func (pb *parsedBundle) addCRD(d *manifestDoc) []Problem {
	switch d.head.APIVersion {
	case apiextv1.SchemeGroupVersion.String():
		crd := &apiextv1.CustomResourceDefinition{}
		if err := json.Unmarshal(d.raw, crd); err != nil {
			return []Problem{Errorf(d.file, RuleInvalidObject, "fix the field named in the message", "CustomResourceDefinition: %v", err)}
		}
		doc := d
		var problems []Problem
		if normalizeCRD(crd) {
			doc = nil
			problems = append(problems, Warnf(d.file, RuleNormalized, "set x-kubernetes-preserve-unknown-fields in the version schemas",
				"CRD %s: preserveUnknownFields moved into the schema", crd.Name))
		}
		pb.crds, pb.crdDocs, pb.crdKeys = append(pb.crds, crd), append(pb.crdDocs, doc), append(pb.crdKeys, sha256.Sum256(d.raw))
		return problems
	case apiextv1beta1.SchemeGroupVersion.String():
		old := &apiextv1beta1.CustomResourceDefinition{}
		if err := json.Unmarshal(d.raw, old); err != nil {
			return []Problem{Errorf(d.file, RuleInvalidObject, "fix the field named in the message", "CustomResourceDefinition: %v", err)}
		}
		crd, err := convertCRDToV1(old)
		if err != nil {
			return []Problem{Errorf(d.file, RuleCRDConversion, "ship the CRD as apiextensions.k8s.io/v1",
				"cannot convert v1beta1 CRD %s to v1: %v", old.Name, err)}
		}
		pb.crds, pb.crdDocs, pb.crdKeys = append(pb.crds, crd), append(pb.crdDocs, nil), append(pb.crdKeys, sha256.Sum256(d.raw))
		return []Problem{Warnf(d.file, RuleNormalized, "ship apiextensions.k8s.io/v1 CRDs",
			"CRD %s converted from apiextensions.k8s.io/v1beta1 to v1", old.Name)}
	}
	return []Problem{Errorf(d.file, RuleInvalidObject, "use apiextensions.k8s.io/v1",
		"CustomResourceDefinition %s has unknown apiVersion %s", d.head.Metadata.Name, d.head.APIVersion)}
}

// renderedObject is one object of a bundle loaded for rendering, in objectsJSON order: read again from its file at
// render time and checked against the digest of the JSON it had at load, or, when normalization changed it, kept
// as its rendered JSON, compressed.
type renderedObject struct {
	file   string
	sum    [sha256.Size]byte
	packed []byte
}

// renderPlan is how to render m's objects: most are read again from their files (cheaper than keeping them
// compressed in memory), the normalized ones are kept.
func renderPlan(m *Manifests) ([]renderedObject, error) {
	all := m.ordered()
	plan := make([]renderedObject, 0, len(all))
	for _, v := range all {
		if raw, file := m.raw[v], m.files[v]; raw != nil && file != "" {
			plan = append(plan, renderedObject{file: file, sum: sha256.Sum256(raw)})
			continue
		}
		data, err := m.objectJSON(v)
		if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
		_, _ = zw.Write(data)
		if err := zw.Close(); err != nil {
			return nil, err
		}
		plan = append(plan, renderedObject{packed: buf.Bytes()})
	}
	return plan, nil
}

// plannedObjects are the bundle's objects as rendered, following its renderPlan; a file that changed since the
// load is an error.
func (b *Bundle) plannedObjects() ([][]byte, error) {
	out := make([][]byte, 0, len(b.plan))
	for _, o := range b.plan {
		if o.packed != nil {
			zr, err := gzip.NewReader(bytes.NewReader(o.packed))
			if err != nil {
				return nil, err
			}
			data, err := io.ReadAll(zr)
			if err != nil {
				return nil, err
			}
			out = append(out, data)
			continue
		}
		data, err := os.ReadFile(o.file)
		if err != nil {
			return nil, fmt.Errorf("bundle %s: %w", b.Name, err)
		}
		raw, _, err := fastyaml.Decode(data)
		if err != nil || sha256.Sum256(raw) != o.sum {
			return nil, fmt.Errorf("bundle %s: %s changed on disk since the catalog was loaded; load the catalog again", b.Name, o.file)
		}
		out = append(out, raw)
	}
	return out, nil
}
