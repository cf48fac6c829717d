package bundlegen

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Bundle annotations (metadata/annotations.yaml).
const (
	AnnotationMediaType      = "operators.operatorframework.io.bundle.mediatype.v1"
	AnnotationManifests      = "operators.operatorframework.io.bundle.manifests.v1"
	AnnotationMetadata       = "operators.operatorframework.io.bundle.metadata.v1"
	AnnotationPackage        = "operators.operatorframework.io.bundle.package.v1"
	AnnotationChannels       = "operators.operatorframework.io.bundle.channels.v1"
	AnnotationDefaultChannel = "operators.operatorframework.io.bundle.channel.default.v1"
	MediaTypeRegistryV1      = "registry+v1"
)

// Generate writes a bundle for every version of every input file (*.yaml in inputDir) into
// outDir/<package>/<version>/, replacing what outDir/<package> held before. root is the repository root the input
// files' paths are relative to. It returns the bundle directories written.
func Generate(root, inputDir, outDir string) ([]string, error) {
	inputs, err := filepath.Glob(filepath.Join(inputDir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(inputs) == 0 {
		return nil, fmt.Errorf("%s: no input files (*.yaml)", inputDir)
	}
	sort.Strings(inputs)
	var written []string
	for _, in := range inputs {
		p, err := LoadPackage(in)
		if err != nil {
			return nil, err
		}
		pkgDir := filepath.Join(outDir, p.Name)
		if err := os.RemoveAll(pkgDir); err != nil {
			return nil, err
		}
		for _, v := range p.Versions {
			dir := filepath.Join(pkgDir, v.Version)
			if err := WriteBundle(root, p, v, dir); err != nil {
				return nil, fmt.Errorf("%s: %w", in, err)
			}
			written = append(written, dir)
		}
	}
	return written, nil
}

// WriteBundle writes the registry+v1 bundle of one version of p into dir (dir/manifests/ with the
// ClusterServiceVersion and the owned CRDs, dir/metadata/annotations.yaml). v need not be one of p.Versions.
func WriteBundle(root string, p *Package, v Version, dir string) error {
	if err := p.checkVersion(v); err != nil {
		return fmt.Errorf("version %s: %w", v.Version, err)
	}
	in := csvInput{}
	crdFiles, leave, err := p.crdsOf(root, v)
	if err != nil {
		return err
	}
	for _, f := range crdFiles {
		in.crds = append(in.crds, f.crd)
	}
	if in.clusterPermissions, err = LoadRules(root, p.ClusterRole); err != nil {
		return err
	}
	if in.permissions, err = LoadRules(root, p.Role); err != nil {
		return err
	}
	in.clusterPermissions = withoutResources(in.clusterPermissions, leave)
	in.permissions = withoutResources(in.permissions, leave)
	in.examples = withoutExamples(p.Examples, leave)
	csv, err := buildCSV(p, v, in)
	if err != nil {
		return fmt.Errorf("%s: %w", p.BundleName(v.Version), err)
	}
	files := map[string]any{
		filepath.Join("manifests", p.Name+".clusterserviceversion.yaml"): csv,
		filepath.Join("metadata", "annotations.yaml"):                    map[string]any{"annotations": annotations(p, v)},
	}
	for _, f := range crdFiles {
		files[filepath.Join("manifests", f.name)] = f.crd
	}
	for name, obj := range files {
		if err := writeObject(filepath.Join(dir, name), obj); err != nil {
			return err
		}
	}
	return nil
}

func annotations(p *Package, v Version) map[string]string {
	return map[string]string{
		AnnotationMediaType:      MediaTypeRegistryV1,
		AnnotationManifests:      "manifests/",
		AnnotationMetadata:       "metadata/",
		AnnotationPackage:        p.Name,
		AnnotationChannels:       strings.Join(v.Channels, ","),
		AnnotationDefaultChannel: p.DefaultChannel,
	}
}

type crdFile struct {
	name string
	crd  *apiextv1.CustomResourceDefinition
}

// loadCRDs reads every CRD file in dir (sorted by name) and adds the printer columns.
func loadCRDs(root, dir string, columns []PrinterColumn) ([]crdFile, error) {
	if dir == "" {
		if len(columns) > 0 {
			return nil, fmt.Errorf("printerColumns: the package owns no CRDs (crdDirectory is empty)")
		}
		return nil, nil
	}
	paths, err := filepath.Glob(filepath.Join(root, dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("crdDirectory %s: no CRD files; run `make manifests`", dir)
	}
	sort.Strings(paths)
	used := map[int]bool{}
	var out []crdFile
	for _, path := range paths {
		crd := &apiextv1.CustomResourceDefinition{}
		if err := decodeFirst(path, crd); err != nil {
			return nil, err
		}
		for i, c := range columns {
			if c.CRD == crd.Name {
				addPrinterColumn(crd, c)
				used[i] = true
			}
		}
		out = append(out, crdFile{name: filepath.Base(path), crd: crd})
	}
	for i, c := range columns {
		if !used[i] {
			return nil, fmt.Errorf("printerColumns[%d]: crd %q is not in %s", i, c.CRD, dir)
		}
	}
	return out, nil
}

// addPrinterColumn adds c to every version of crd, before its Age column (kubectl convention: Age comes last).
func addPrinterColumn(crd *apiextv1.CustomResourceDefinition, c PrinterColumn) {
	col := apiextv1.CustomResourceColumnDefinition{Name: c.Name, Type: c.Type, JSONPath: c.JSONPath, Description: c.Description}
	for i := range crd.Spec.Versions {
		cols := crd.Spec.Versions[i].AdditionalPrinterColumns
		at := len(cols)
		for j, existing := range cols {
			if existing.JSONPath == ".metadata.creationTimestamp" {
				at = j
				break
			}
		}
		cols = append(cols[:at:at], append([]apiextv1.CustomResourceColumnDefinition{col}, cols[at:]...)...)
		crd.Spec.Versions[i].AdditionalPrinterColumns = cols
	}
}

// LoadRules returns the rules of the Role or ClusterRole in file (relative to root); no file, no rules. Rules with
// a wildcard are refused.
func LoadRules(root, file string) ([]rbacv1.PolicyRule, error) {
	if file == "" {
		return nil, nil
	}
	role := &rbacv1.ClusterRole{}
	if err := decodeFirst(filepath.Join(root, file), role); err != nil {
		return nil, err
	}
	if role.Kind != "ClusterRole" && role.Kind != "Role" {
		return nil, fmt.Errorf("%s: kind %q: want ClusterRole or Role", file, role.Kind)
	}
	if len(role.Rules) == 0 {
		return nil, fmt.Errorf("%s: %s %s has no rules", file, role.Kind, role.Name)
	}
	return role.Rules, checkRules(file, role.Rules)
}

// decodeFirst decodes the first YAML document of path into obj.
func decodeFirst(path string, obj any) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := k8syaml.NewYAMLOrJSONDecoder(f, 4096).Decode(obj); err != nil {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%s: empty file", path)
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// writeObject writes obj as YAML without status, null fields and creationTimestamp.
func writeObject(path string, obj any) error {
	var m map[string]any
	if o, ok := obj.(map[string]any); ok {
		m = o
	} else {
		var err error
		if m, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		delete(m, "status")
	}
	data, err := marshalYAML(pruneNulls(m))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// pruneNulls removes null values (e.g. creationTimestamp: null) at any depth.
func pruneNulls(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, val := range t {
			if val == nil {
				delete(t, k)
				continue
			}
			t[k] = pruneNulls(val)
		}
	case []any:
		for i := range t {
			t[i] = pruneNulls(t[i])
		}
	}
	return v
}

func mustQuantity(s string) resource.Quantity { return resource.MustParse(s) }
