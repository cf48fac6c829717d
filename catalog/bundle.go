package catalog

import (
	"bytes"
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
	"github.com/operator-framework/api/pkg/validation"
	valerrors "github.com/operator-framework/api/pkg/validation/errors"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	almv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
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
	// Catalog is the name of the catalog it was loaded from (set by NewIndex).
	Catalog string
	// Path is the directory, file or ConfigMap it came from.
	Path string
	// Provides are the kinds it owns (owned CRDs; olm.gvk properties).
	Provides []schema.GroupVersionKind
	// Requires are the kinds it needs from other bundles (required CRDs; olm.gvk.required properties).
	Requires []schema.GroupVersionKind

	// channels, replaces, skips and skipRange as the bundle itself declares them (bundle directories); File-Based
	// Catalogs declare them on channel entries instead.
	channels       []string
	defaultChannel string
	replaces       string
	skips          []string
	skipRange      string

	manifests *Manifests
	objects   [][]byte // olm.bundle.object data from a File-Based Catalog, decoded on demand
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
}

// ErrNoManifests is returned for a bundle whose catalog lists only its metadata (a File-Based Catalog without
// olm.bundle.object properties): the catalog can resolve it but not install it.
var ErrNoManifests = errors.New("the catalog holds no manifests for this bundle")

// Manifests returns the bundle's content, or ErrNoManifests.
func (b *Bundle) Manifests() (*Manifests, error) {
	if b.manifests != nil {
		return b.manifests, nil
	}
	if len(b.objects) == 0 {
		return nil, fmt.Errorf("bundle %s: %w", b.Name, ErrNoManifests)
	}
	return manifestsFromObjects(b.objects)
}

// HasManifests reports whether Manifests can return the bundle's content.
func (b *Bundle) HasManifests() bool { return b.manifests != nil || len(b.objects) > 0 }

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
// replaces, skips, skipRange, CRD descriptions and the install strategy from its ClusterServiceVersion, and in
// spec.objects the bundle's CRDs (v1) followed by its other installable objects. Callers set spec.source;
// Result.OperatorVersion also sets spec.channel and the channel entry's upgrade edges.
func (b *Bundle) OperatorVersion(namespace string) (*almv1alpha1.OperatorVersion, error) {
	m, err := b.Manifests()
	if err != nil {
		return nil, err
	}
	csv := m.CSV
	ov := &almv1alpha1.OperatorVersion{
		TypeMeta:   metav1.TypeMeta{APIVersion: almv1alpha1.GroupVersion.String(), Kind: "OperatorVersion"},
		ObjectMeta: metav1.ObjectMeta{Name: b.Name, Namespace: namespace},
		Spec: almv1alpha1.OperatorVersionSpec{
			PackageName:               b.Package,
			Version:                   version.OperatorVersion{Version: b.Version},
			Replaces:                  csv.Spec.Replaces,
			Skips:                     append([]string(nil), csv.Spec.Skips...),
			SkipRange:                 csv.Annotations[AnnotationSkipRange],
			DisplayName:               csv.Spec.DisplayName,
			CustomResourceDefinitions: *csv.Spec.CustomResourceDefinitions.DeepCopy(),
			Install:                   *csv.Spec.InstallStrategy.DeepCopy(),
		},
	}
	// spec.objects: the CRDs, then the other objects, as the bundle ships them (without status).
	for _, crd := range m.CRDs {
		raw, err := manifestJSON(crd)
		if err != nil {
			return nil, fmt.Errorf("bundle %s: CRD %s: %w", b.Name, crd.Name, err)
		}
		ov.Spec.Objects = append(ov.Spec.Objects, runtime.RawExtension{Raw: raw})
	}
	for _, obj := range m.Objects {
		raw, err := manifestJSON(obj.Object)
		if err != nil {
			return nil, fmt.Errorf("bundle %s: %s %s: %w", b.Name, obj.GetKind(), obj.GetName(), err)
		}
		ov.Spec.Objects = append(ov.Spec.Objects, runtime.RawExtension{Raw: raw})
	}
	return ov, nil
}

// LoadBundle loads and validates one registry+v1 bundle directory (manifests/ and metadata/annotations.yaml).
// It returns nil and the problems when the bundle has an error; warnings come with a usable bundle.
func LoadBundle(dir string) (*Bundle, []Problem) {
	return loadBundle(dir, dir)
}

// loadBundle loads the bundle in dir, naming files in problems as shown/<relative path>.
func loadBundle(dir, shown string) (*Bundle, []Problem) {
	var problems []Problem
	at := func(rel string) string { return filepath.Join(shown, rel) }
	files, size, err := bundleFiles(dir)
	if err != nil {
		return nil, []Problem{errorf(shown, RuleLoadFailed, "", "%v", err)}
	}
	if size > MaxBundleSize {
		return nil, []Problem{errorf(shown, RuleBundleTooLarge, "move large documentation or images out of the bundle",
			"bundle is %d bytes; a bundle must fit in one ConfigMap (%d bytes)", size, MaxBundleSize)}
	}

	// metadata/annotations.yaml
	ann, annProblems := readAnnotations(dir, at)
	problems = append(problems, annProblems...)

	// manifests/: every file must parse and hold one object; exactly one ClusterServiceVersion.
	var manifestFiles []string
	for _, f := range files {
		if strings.HasPrefix(f, "manifests/") {
			manifestFiles = append(manifestFiles, f)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "manifests")); err != nil {
		problems = append(problems, errorf(shown, RuleMissingManifests,
			"a registry+v1 bundle keeps its objects in manifests/ and its annotations in metadata/annotations.yaml",
			"no manifests/ directory"))
		return nil, problems
	}
	fileOf := map[string]string{} // "Kind/name" -> file, to place validator results
	var csvFiles []string
	var csvObj *unstructured.Unstructured
	for _, rel := range manifestFiles {
		if strings.Count(rel, "/") > 1 {
			problems = append(problems, errorf(at(rel), RuleNestedDirectory, "keep every manifest directly in manifests/",
				"manifests/ must not contain directories"))
			continue
		}
		if strings.HasPrefix(filepath.Base(rel), ".") {
			problems = append(problems, errorf(at(rel), RuleNestedDirectory, "remove hidden files from manifests/",
				"manifests/ must not contain hidden files"))
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			problems = append(problems, errorf(at(rel), RuleLoadFailed, "", "%v", err))
			continue
		}
		obj, more, err := decodeObject(data)
		if err != nil {
			problems = append(problems, errorf(at(rel), RuleMalformedYAML, "fix the YAML syntax", "%v", err))
			continue
		}
		if obj == nil || obj.GetKind() == "" || obj.GetAPIVersion() == "" {
			problems = append(problems, errorf(at(rel), RuleInvalidObject, "every file in manifests/ holds one Kubernetes object",
				"no apiVersion and kind"))
			continue
		}
		if more {
			problems = append(problems, warnf(at(rel), RuleIgnoredDocument, "put one object per file",
				"only the first YAML document of a manifest file is read"))
		}
		fileOf[obj.GetKind()+"/"+obj.GetName()] = at(rel)
		if obj.GetKind() == opv1alpha1.ClusterServiceVersionKind {
			csvFiles = append(csvFiles, at(rel))
			csvObj = obj
		}
	}
	switch {
	case len(csvFiles) == 0 && !HasErrors(problems):
		problems = append(problems, errorf(at("manifests"), RuleMissingCSV, "add the operator's ClusterServiceVersion to manifests/",
			"no ClusterServiceVersion in manifests/"))
	case len(csvFiles) > 1:
		problems = append(problems, errorf(csvFiles[1], RuleMultipleCSVs, "a bundle is one version of one operator",
			"more than one ClusterServiceVersion: %s", strings.Join(csvFiles, ", ")))
	}
	var ver semver.Version
	var csvFile string
	if len(csvFiles) == 1 {
		csvFile = csvFiles[0]
		raw, _, _ := unstructured.NestedFieldNoCopy(csvObj.Object, "spec", "version")
		s, isString := raw.(string)
		v, err := semver.Parse(s)
		switch {
		case raw != nil && !isString:
			problems = append(problems, errorf(csvFile, RuleInvalidSemver, "quote the version and use a semantic version such as 1.2.3",
				"spec.version %v is not a string", raw))
		case err != nil:
			problems = append(problems, errorf(csvFile, RuleInvalidSemver, "use a semantic version such as 1.2.3 (no leading v)",
				"spec.version %q: %v", s, err))
		}
		ver = v
	}
	if HasErrors(problems) {
		name := shown // the bundle has no readable name: its directory names it
		if len(csvFiles) == 1 && csvObj.GetName() != "" {
			name = csvObj.GetName()
		}
		return nil, withBundle(problems, ann.PackageName, name)
	}

	mb, err := manifests.GetBundleFromDir(dir)
	if err != nil || mb == nil || mb.CSV == nil {
		problems = append(problems, errorf(shown, RuleLoadFailed, "", "operator-framework bundle loader: %v", err))
		return nil, withBundle(problems, ann.PackageName, csvObj.GetName())
	}
	mb.Package = ann.PackageName

	// Normalize what is safe: v1beta1 CRDs to v1, preserveUnknownFields into the schema.
	for _, old := range mb.V1beta1CRDs {
		crd, err := convertCRDToV1(old)
		if err != nil {
			problems = append(problems, errorf(fileOf["CustomResourceDefinition/"+old.Name], RuleCRDConversion,
				"ship the CRD as apiextensions.k8s.io/v1", "cannot convert v1beta1 CRD %s to v1: %v", old.Name, err))
			continue
		}
		mb.V1CRDs = append(mb.V1CRDs, crd)
		problems = append(problems, warnf(fileOf["CustomResourceDefinition/"+old.Name], RuleNormalized,
			"ship apiextensions.k8s.io/v1 CRDs", "CRD %s converted from apiextensions.k8s.io/v1beta1 to v1", old.Name))
	}
	nativeV1 := len(mb.V1CRDs) - len(mb.V1beta1CRDs) // the converted ones come after
	mb.V1beta1CRDs = nil
	for i, crd := range mb.V1CRDs {
		if normalizeCRD(crd) && i < nativeV1 {
			problems = append(problems, warnf(fileOf["CustomResourceDefinition/"+crd.Name], RuleNormalized,
				"set x-kubernetes-preserve-unknown-fields in the version schemas", "CRD %s: preserveUnknownFields moved into the schema", crd.Name))
		}
	}
	problems = append(problems, validateWithOLM(mb, fileOf, shown)...)
	problems = append(problems, ownChecks(mb.CSV, csvFile)...)

	m := &Manifests{CSV: mb.CSV, CRDs: mb.V1CRDs}
	for _, obj := range mb.Objects {
		switch kind := obj.GetKind(); {
		case kind == opv1alpha1.ClusterServiceVersionKind || kind == "CustomResourceDefinition":
		case isInstallable(obj):
			m.Objects = append(m.Objects, obj)
		default:
			problems = append(problems, warnf(fileOf[kind+"/"+obj.GetName()], RuleUnsupportedObject,
				"ALM installs CRDs and "+InstallableKindNames(),
				"%s %s (%s) is not installed by ALM", kind, obj.GetName(), obj.GroupVersionKind().GroupVersion()))
		}
	}
	problems = withBundle(problems, ann.PackageName, mb.CSV.Name)
	if HasErrors(problems) {
		return nil, problems
	}
	b := bundleFromManifests(m, ann.PackageName, ver, shown)
	b.channels = splitList(ann.Channels)
	b.defaultChannel = ann.DefaultChannelName
	return b, problems
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

// bundleFiles lists the files under manifests/ and metadata/ (relative, slash-separated, sorted) and their total size.
func bundleFiles(dir string) ([]string, int64, error) {
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

// readAnnotations reads metadata/annotations.yaml.
func readAnnotations(dir string, at func(string) string) (manifests.Annotations, []Problem) {
	const rel = "metadata/annotations.yaml"
	data, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		return manifests.Annotations{}, []Problem{errorf(at(rel), RuleMissingAnnotations,
			"add metadata/annotations.yaml with operators.operatorframework.io.bundle.package.v1 and .channels.v1",
			"cannot read the bundle annotations: %v", errors.Unwrap(err))}
	}
	var f struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(data, &f); err != nil {
		return manifests.Annotations{}, []Problem{errorf(at(rel), RuleMalformedYAML, "fix the YAML syntax", "%v", err)}
	}
	a := manifests.Annotations{
		PackageName:        f.Annotations["operators.operatorframework.io.bundle.package.v1"],
		Channels:           f.Annotations["operators.operatorframework.io.bundle.channels.v1"],
		DefaultChannelName: f.Annotations["operators.operatorframework.io.bundle.channel.default.v1"],
	}
	var problems []Problem
	if a.PackageName == "" {
		problems = append(problems, errorf(at(rel), RuleMissingPackage, "set operators.operatorframework.io.bundle.package.v1",
			"the bundle names no package"))
	}
	if a.Channels == "" {
		problems = append(problems, errorf(at(rel), RuleMissingChannels, "set operators.operatorframework.io.bundle.channels.v1, e.g. stable",
			"the bundle names no channel"))
	}
	if mt := f.Annotations["operators.operatorframework.io.bundle.mediatype.v1"]; mt != "" && mt != "registry+v1" {
		problems = append(problems, errorf(at(rel), RuleUnsupportedMediaType, "ALM reads registry+v1 bundles",
			"media type %q is not supported", mt))
	}
	return a, problems
}

// decodeObject decodes the first YAML or JSON document of data; more reports whether another non-empty one follows.
func decodeObject(data []byte) (obj *unstructured.Unstructured, more bool, err error) {
	dec := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, false, nil
		}
		return nil, false, err
	}
	var next map[string]any
	if err := dec.Decode(&next); err == nil && len(next) > 0 {
		more = true
	}
	if m == nil {
		return nil, more, nil
	}
	return &unstructured.Unstructured{Object: m}, more, nil
}

// validateWithOLM runs the operator-framework DefaultBundleValidators and turns their results into problems,
// dropping what does not apply to ALM (install modes: ALM has no OperatorGroups).
func validateWithOLM(b *manifests.Bundle, fileOf map[string]string, dir string) []Problem {
	var problems []Problem
	for _, r := range validation.DefaultBundleValidators.Validate(b.ObjectsToValidate()...) {
		path := dir
		for _, k := range []string{"ClusterServiceVersion/" + r.Name, "CustomResourceDefinition/" + r.Name} {
			if f, ok := fileOf[k]; ok {
				path = f
			}
		}
		add := func(list []validationError, sev Severity) {
			for _, e := range list {
				msg := e.Error()
				low := strings.ToLower(msg)
				if strings.Contains(low, "install mode") || strings.Contains(low, "installmode") {
					continue
				}
				problems = append(problems, Problem{Path: path, Rule: "olm-" + string(e.Type), Detail: msg, Severity: sev})
			}
		}
		add(r.Errors, SeverityError)
		add(r.Warnings, SeverityWarning)
	}
	return problems
}

// ownChecks are ALM's checks on top of the operator-framework validators.
func ownChecks(csv *opv1alpha1.ClusterServiceVersion, file string) []Problem {
	var problems []Problem
	is := csv.Spec.InstallStrategy
	if is.StrategyName != opv1alpha1.InstallStrategyNameDeployment || len(is.StrategySpec.DeploymentSpecs) == 0 {
		problems = append(problems, errorf(file, RuleInstallStrategy, "use spec.install.strategy: deployment with at least one deployment",
			"install strategy %q with %d deployments cannot be installed", is.StrategyName, len(is.StrategySpec.DeploymentSpecs)))
	}
	if r := csv.Annotations[AnnotationSkipRange]; r != "" {
		if _, err := semver.ParseRange(r); err != nil {
			problems = append(problems, errorf(file, RuleInvalidSkipRange, "use a semver range such as '>=1.0.0 <1.2.0'",
				"olm.skipRange %q: %v", r, err))
		}
	}
	if csv.Spec.Replaces != "" && csv.Spec.Replaces == csv.Name {
		problems = append(problems, errorf(file, RuleReplacesSelf, "replaces names the previous version's bundle",
			"bundle %s replaces itself", csv.Name))
	}
	return problems
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

type validationError = valerrors.Error

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
	_, ok := Installable(obj.GroupVersionKind().GroupKind())
	return ok
}
