package bundle

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/lib/version"
	"github.com/operator-framework/api/pkg/manifests"
	opv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	almv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/policy"
)

// MaxBundleSize is the largest bundle (the sum of its manifests/ and metadata/ files) a catalog accepts: a bundle must
// fit in one ConfigMap, and ConfigMaps hold at most 1 MiB.
const MaxBundleSize = 1 << 20

// AnnotationSkipRange is the CSV annotation that holds a bundle's skipRange.
const AnnotationSkipRange = "olm.skipRange"

// Bundle is one operator bundle in a catalog: what the index and the resolver need, and the bundle's manifests when
// the source holds them (bundle directories, ConfigMaps, File-Based Catalogs with olm.bundle.object properties).
// A Bundle is read-only once indexed.
type Bundle struct {
	// Name is the bundle name, the ClusterServiceVersion's metadata.name (e.g. etcdoperator.v0.9.4).
	Name string
	// Package is the package (AppType) it belongs to.
	Package string
	// Version is the operator version.
	Version semver.Version
	// Catalog is the name of the catalog it was loaded from (set by index.New).
	Catalog string
	// Path is the directory, file or ConfigMap it came from.
	Path string
	// Provides are the kinds it owns (owned CRDs; olm.gvk properties).
	Provides []schema.GroupVersionKind
	// Requires are the kinds it needs from other bundles (required CRDs; olm.gvk.required properties).
	Requires []schema.GroupVersionKind
	// RequiresPackages are the packages it depends on (olm.package.required properties; olm.package entries of
	// metadata/dependencies.yaml).
	RequiresPackages []PackageRequirement
	// Image is the bundle image as the catalog names it (a File-Based Catalog's olm.bundle image), or "".
	Image string
	// ImageDigest is the bundle image's manifest digest: the digest Image pins, or the one its tag pointed at when the
	// catalog was loaded (set by the image source).
	ImageDigest string
	// Metadata is what an olm.csv.metadata property says of a bundle whose manifests the catalog does not carry:
	// enough to create its OperatorVersion, whose install strategy is then read from the bundle image.
	Metadata *Metadata

	// channels, replaces, skips and skipRange as the bundle itself declares them (bundle directories); File-Based
	// Catalogs declare them on channel entries instead.
	channels       []string
	defaultChannel string
	replaces       string
	skips          []string
	skipRange      string

	manifests      *Manifests  // kept in memory (ConfigMaps); nil for bundle directories, read again on demand
	source         *diskBundle // the directory a bundle's manifests are read from again
	objects        [][]byte    // olm.bundle.object data from a File-Based Catalog, decoded on demand
	minKubeVersion string
	plan           []renderedObject  // how to render the objects (LoadOptions.ForRender)
	digest         [sha256.Size]byte // of the bundle directory's manifests
}

// Manifests is a bundle's content, normalized: every CRD is apiextensions.k8s.io/v1.
type Manifests struct {
	// CSV is the ClusterServiceVersion.
	CSV *opv1alpha1.ClusterServiceVersion
	// CRDs are the bundle's CustomResourceDefinitions (v1beta1 ones converted to v1).
	CRDs []*apiextv1.CustomResourceDefinition
	// Objects are the other objects ALM installs with the operator (Services, ConfigMaps, Secrets, RBAC,
	// PodDisruptionBudgets, PriorityClasses, ServiceMonitors, PrometheusRules ...), in file order.
	Objects []*unstructured.Unstructured

	raw   map[any][]byte // the JSON an object was read from, when normalization did not change it
	files map[any]string // the file it was read from, for the objects in raw
}

// ErrNoManifests is returned for a bundle whose catalog lists only its metadata (a File-Based Catalog without
// olm.bundle.object properties): the catalog can resolve it but not install it.
var ErrNoManifests = errors.New("the catalog holds no manifests for this bundle")

// Manifests returns the bundle's content, or ErrNoManifests.
func (b *Bundle) Manifests() (*Manifests, error) {
	if b.manifests != nil {
		return b.manifests, nil
	}
	if b.source != nil {
		return b.source.load()
	}
	if len(b.objects) == 0 {
		return nil, fmt.Errorf("bundle %s: %w", b.Name, ErrNoManifests)
	}
	return manifestsFromObjects(b.objects)
}

// Metadata is the part of a bundle's ClusterServiceVersion that a File-Based Catalog's olm.csv.metadata property
// carries and an OperatorVersion shows: display name, CRD descriptions (names, versions, kinds) and annotations that
// decide upgrades (olm.skipRange).
type Metadata struct {
	DisplayName string
	CRDs        opv1alpha1.CustomResourceDefinitions
	SkipRange   string
	// Handoff is the CSV's operators.alm.dev/handoff annotation, checked (CheckHandoff).
	Handoff string
	// Raw is the property's whole value as the catalog wrote it, kept only when the catalog is loaded for rendering
	// (fbc.LoadOptions.ForRender), so that rendering writes it back unchanged; nil otherwise.
	Raw json.RawMessage
}

// FromFBC is the Bundle an olm.bundle document of a File-Based Catalog describes: b's exported fields (name,
// package, version, path, provided and required kinds) and the data of its olm.bundle.object properties, decoded
// when Manifests is called (none: the catalog installs it from its bundle image, b.Image).
func FromFBC(b Bundle, objects [][]byte) *Bundle {
	return &Bundle{Name: b.Name, Package: b.Package, Version: b.Version, Catalog: b.Catalog, Path: b.Path,
		Provides: b.Provides, Requires: b.Requires, RequiresPackages: b.RequiresPackages, Image: b.Image, ImageDigest: b.ImageDigest, Metadata: b.Metadata,
		objects: objects}
}

// Channels are the channels the bundle declares it is in (metadata/annotations.yaml); none for a bundle of a
// File-Based Catalog, whose olm.channel documents list it instead.
func (b *Bundle) Channels() []string { return b.channels }

// DefaultChannel is the package's default channel as the bundle declares it, or "".
func (b *Bundle) DefaultChannel() string { return b.defaultChannel }

// ChannelEntry is the bundle's entry in each of its Channels: its name and the replaces, skips and skipRange its
// ClusterServiceVersion declares.
func (b *Bundle) ChannelEntry() declcfg.ChannelEntry {
	return declcfg.ChannelEntry{Name: b.Name, Replaces: b.replaces, Skips: b.skips, SkipRange: b.skipRange}
}

// HasManifests reports whether Manifests can return the bundle's content.
func (b *Bundle) HasManifests() bool {
	return b.manifests != nil || b.source != nil || len(b.objects) > 0
}

// OwnedCRD returns the bundle's CRD for the group and kind, or nil.
func (m *Manifests) OwnedCRD(group, kind string) *apiextv1.CustomResourceDefinition {
	for _, crd := range m.CRDs {
		if crd.Spec.Group == group && crd.Spec.Names.Kind == kind {
			return crd
		}
	}
	return nil
}

// OperatorVersion returns the OperatorVersion template for the bundle in a namespace: name, package, version,
// replaces, skips, skipRange, CRD descriptions and the install strategy from its ClusterServiceVersion, in
// spec.objects the bundle's CRDs (v1) followed by its other installable objects, and in spec.bundle the digest of
// that content (ContentDigest). A bundle the catalog holds only as an image (olm.csv.metadata, no objects) gets
// spec.bundle.image and the image's digest instead, and no install strategy: the install loop reads it from the
// image. Callers set spec.source; Result.OperatorVersion also sets spec.channel and the channel entry's upgrade
// edges.
func (b *Bundle) OperatorVersion(namespace string) (*almv1alpha1.OperatorVersion, error) {
	if !b.HasManifests() && b.Image != "" {
		return b.imageOperatorVersion(namespace)
	}
	m, err := b.Manifests()
	if err != nil {
		return nil, err
	}
	ov := b.operatorVersion(namespace)
	csv := m.CSV
	ov.Spec.Replaces, ov.Spec.Skips = csv.Spec.Replaces, append([]string(nil), csv.Spec.Skips...)
	ov.Spec.SkipRange, ov.Spec.DisplayName = csv.Annotations[AnnotationSkipRange], csv.Spec.DisplayName
	ov.Spec.CustomResourceDefinitions = *csv.Spec.CustomResourceDefinitions.DeepCopy()
	ov.Spec.Install = *csv.Spec.InstallStrategy.DeepCopy()
	if err := addHandoff(ov, csv); err != nil {
		return nil, fmt.Errorf("bundle %s: %w", b.Name, err)
	}
	for _, w := range csv.Spec.WebhookDefinitions {
		ov.Spec.WebhookDefinitions = append(ov.Spec.WebhookDefinitions, *w.DeepCopy())
	}
	if ov.Spec.Objects, err = specObjects(b.Name, m); err != nil {
		return nil, err
	}
	digest, err := ContentDigest(&ov.Spec)
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", b.Name, err)
	}
	ov.Spec.Bundle = &almv1alpha1.BundleReference{Digest: digest}
	return ov, nil
}

// imageOperatorVersion is the OperatorVersion of a bundle whose content is in its image only.
func (b *Bundle) imageOperatorVersion(namespace string) (*almv1alpha1.OperatorVersion, error) {
	if b.ImageDigest == "" {
		return nil, fmt.Errorf("bundle %s: %w, and the digest of its image %s is not known: reference bundle images by digest in the catalog",
			b.Name, ErrNoManifests, b.Image)
	}
	ov := b.operatorVersion(namespace)
	if md := b.Metadata; md != nil {
		ov.Spec.DisplayName, ov.Spec.SkipRange = md.DisplayName, md.SkipRange
		ov.Spec.CustomResourceDefinitions = *md.CRDs.DeepCopy()
		if md.Handoff != "" {
			// The rule that lets the operator answer comes with the install strategy, read from the image.
			timeout, err := parseHandoff(md.Handoff)
			if err != nil {
				return nil, fmt.Errorf("bundle %s: %w", b.Name, err)
			}
			ov.Spec.Handoff = &almv1alpha1.HandoffSpec{Timeout: metav1.Duration{Duration: timeout}}
		}
	}
	ov.Spec.Bundle = &almv1alpha1.BundleReference{Image: b.Image, Digest: b.ImageDigest}
	return ov, nil
}

func (b *Bundle) operatorVersion(namespace string) *almv1alpha1.OperatorVersion {
	return &almv1alpha1.OperatorVersion{
		TypeMeta:   metav1.TypeMeta{APIVersion: almv1alpha1.GroupVersion.String(), Kind: "OperatorVersion"},
		ObjectMeta: metav1.ObjectMeta{Name: b.Name, Namespace: namespace},
		Spec: almv1alpha1.OperatorVersionSpec{
			PackageName:      b.Package,
			Version:          version.OperatorVersion{Version: b.Version},
			RequiredPackages: b.requiredPackages(),
		},
	}
}

// requiredPackages is RequiresPackages as an OperatorVersion lists them: one entry per package, the ranges of a
// package named twice joined (both must hold).
func (b *Bundle) requiredPackages() []almv1alpha1.RequiredPackage {
	var out []almv1alpha1.RequiredPackage
	index := map[string]int{}
	for _, r := range b.RequiresPackages {
		i, seen := index[r.Package]
		switch {
		case !seen:
			index[r.Package] = len(out)
			out = append(out, almv1alpha1.RequiredPackage{Name: r.Package, VersionRange: r.Range})
		case r.Range != "" && out[i].VersionRange != "":
			out[i].VersionRange += " " + r.Range
		case r.Range != "":
			out[i].VersionRange = r.Range
		}
	}
	return out
}

// specObjects are spec.objects: the CRDs, then the other objects, as the bundle ships them (without status).
func specObjects(name string, m *Manifests) ([]runtime.RawExtension, error) {
	var out []runtime.RawExtension
	for _, crd := range m.CRDs {
		raw, err := manifestJSON(crd)
		if err != nil {
			return nil, fmt.Errorf("bundle %s: CRD %s: %w", name, crd.Name, err)
		}
		out = append(out, runtime.RawExtension{Raw: raw})
	}
	for _, obj := range m.Objects {
		raw, err := manifestJSON(obj.Object)
		if err != nil {
			return nil, fmt.Errorf("bundle %s: %s %s: %w", name, obj.GetKind(), obj.GetName(), err)
		}
		out = append(out, runtime.RawExtension{Raw: raw})
	}
	return out, nil
}

// bundleFromManifests builds the catalog record of a loaded bundle.
func bundleFromManifests(m *Manifests, pkg string, ver semver.Version, path string) *Bundle {
	csv := m.CSV
	b := &Bundle{
		Name: csv.Name, Package: pkg, Version: ver, Path: path, manifests: m,
		replaces: csv.Spec.Replaces, skips: csv.Spec.Skips, skipRange: csv.Annotations[AnnotationSkipRange],
	}
	for _, d := range csv.Spec.CustomResourceDefinitions.Owned {
		b.Provides = append(b.Provides, crdGVK(d))
	}
	for _, d := range csv.Spec.CustomResourceDefinitions.Required {
		b.Requires = append(b.Requires, crdGVK(d))
	}
	return b
}

// crdGVK is the kind a CSV's CRD description names; the group is the CRD name after the plural.
func crdGVK(d opv1alpha1.CRDDescription) schema.GroupVersionKind {
	group := ""
	if i := strings.IndexByte(d.Name, '.'); i >= 0 {
		group = d.Name[i+1:]
	}
	return schema.GroupVersionKind{Group: group, Version: d.Version, Kind: d.Kind}
}

// Files lists the files of the bundle directory dir under manifests/ and metadata/ (relative, slash-separated,
// sorted) and their total size. A file that is not a regular file (a symlink, device, socket or pipe) is an error.
func Files(dir string) ([]string, int64, error) {
	var files []string
	var size int64
	for _, sub := range []string{"manifests", "metadata"} {
		root := filepath.Join(dir, sub)
		if _, err := os.Stat(root); err != nil {
			continue
		}
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				return nil
			}
			if !d.Type().IsRegular() {
				rel, _ := filepath.Rel(dir, path)
				return &irregularFileError{rel: filepath.ToSlash(rel), mode: d.Type()}
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			size += info.Size()
			rel, _ := filepath.Rel(dir, path)
			files = append(files, filepath.ToSlash(rel))
			return nil
		})
		if err != nil {
			return nil, 0, err
		}
	}
	sort.Strings(files)
	return files, size, nil
}

// irregularFileError is a symlink, device, socket or pipe in a bundle: a bundle holds regular files only, so that
// it cannot make ALM read outside its directory or read without end.
type irregularFileError struct {
	rel  string
	mode os.FileMode
}

func (e *irregularFileError) Error() string {
	what := e.mode.Type().String()
	switch {
	case e.mode&os.ModeSymlink != 0:
		what = "a symbolic link"
	case e.mode&os.ModeNamedPipe != 0:
		what = "a named pipe"
	case e.mode&os.ModeSocket != 0:
		what = "a socket"
	case e.mode&os.ModeDevice != 0:
		what = "a device"
	}
	return fmt.Sprintf("%s is %s; a bundle holds regular files only", e.rel, what)
}

// readBundleFile reads a file of a bundle, refusing one larger than MaxBundleSize: the bundle's size is checked
// before its files are read, and a file that grows in between is not read whole.
func readBundleFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxBundleSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxBundleSize {
		return nil, &os.PathError{Op: "read", Path: path, Err: fmt.Errorf("more than %d bytes", MaxBundleSize)}
	}
	return data, nil
}

// readAnnotations reads metadata/annotations.yaml.
func readAnnotations(dir string, at func(string) string) (manifests.Annotations, []Problem) {
	const rel = "metadata/annotations.yaml"
	data, err := readBundleFile(filepath.Join(dir, rel))
	if err != nil {
		return manifests.Annotations{}, []Problem{Errorf(at(rel), RuleMissingAnnotations,
			"add metadata/annotations.yaml with operators.operatorframework.io.bundle.package.v1 and .channels.v1",
			"cannot read the bundle annotations: %v", errors.Unwrap(err))}
	}
	var f struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(data, &f); err != nil {
		return manifests.Annotations{}, []Problem{Errorf(at(rel), RuleMalformedYAML, "fix the YAML syntax", "%v", err)}
	}
	a := manifests.Annotations{
		PackageName:        f.Annotations["operators.operatorframework.io.bundle.package.v1"],
		Channels:           f.Annotations["operators.operatorframework.io.bundle.channels.v1"],
		DefaultChannelName: f.Annotations["operators.operatorframework.io.bundle.channel.default.v1"],
	}
	var problems []Problem
	if a.PackageName == "" {
		problems = append(problems, Errorf(at(rel), RuleMissingPackage, "set operators.operatorframework.io.bundle.package.v1",
			"the bundle names no package"))
	}
	if a.Channels == "" {
		problems = append(problems, Errorf(at(rel), RuleMissingChannels, "set operators.operatorframework.io.bundle.channels.v1, e.g. stable",
			"the bundle names no channel"))
	}
	if mt := f.Annotations["operators.operatorframework.io.bundle.mediatype.v1"]; mt != "" && mt != "registry+v1" {
		problems = append(problems, Errorf(at(rel), RuleUnsupportedMediaType, "ALM reads registry+v1 bundles",
			"media type %q is not supported", mt))
	}
	return a, problems
}

// manifestsFromObjects decodes olm.bundle.object data (JSON or YAML objects) into Manifests.
func manifestsFromObjects(objects [][]byte) (*Manifests, error) {
	m := &Manifests{}
	for i, data := range objects {
		obj, _, err := decodeObject(data)
		if err != nil || obj == nil {
			return nil, fmt.Errorf("bundle object %d: %w", i, err)
		}
		js, err := json.Marshal(obj.Object)
		if err != nil {
			return nil, err
		}
		switch obj.GetKind() {
		case opv1alpha1.ClusterServiceVersionKind:
			csv := &opv1alpha1.ClusterServiceVersion{}
			if err := json.Unmarshal(js, csv); err != nil {
				return nil, fmt.Errorf("bundle object %d: ClusterServiceVersion: %w", i, err)
			}
			m.CSV = csv
		case "CustomResourceDefinition":
			crd := &apiextv1.CustomResourceDefinition{}
			if err := json.Unmarshal(js, crd); err != nil {
				return nil, fmt.Errorf("bundle object %d: CustomResourceDefinition: %w", i, err)
			}
			m.CRDs = append(m.CRDs, crd)
		default:
			if isInstallable(obj) {
				m.Objects = append(m.Objects, obj)
			}
		}
	}
	if m.CSV == nil {
		return nil, errors.New("no ClusterServiceVersion among the bundle objects")
	}
	return m, nil
}

func withBundle(ps []Problem, pkg, name string) []Problem {
	for i := range ps {
		if ps[i].Package == "" {
			ps[i].Package = pkg
		}
		if ps[i].Bundle == "" {
			ps[i].Bundle = name
		}
	}
	return ps
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func isInstallable(obj *unstructured.Unstructured) bool {
	_, ok := policy.Installable(obj.GroupVersionKind().GroupKind())
	return ok
}
