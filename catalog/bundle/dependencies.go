package bundle

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/blang/semver/v4"
	"sigs.k8s.io/yaml"
)

// RuleInvalidDependency: a dependency (metadata/dependencies.yaml, or an olm.package.required property) that cannot
// be read: no package name, a version range that does not parse, a kind without group, version or kind.
const RuleInvalidDependency = "invalid-dependency"

// RuleUnsupportedDependency: a dependency type ALM does not resolve (olm.label, olm.constraint); the bundle
// installs without it.
const RuleUnsupportedDependency = "unsupported-dependency"

// PackageRequirement is a package a bundle depends on, and the versions of it that satisfy the dependency.
type PackageRequirement struct {
	Package string
	// Range is a semver range (blang/semver syntax, as OLM's); "" is any version.
	Range string
}

// Allows says whether v satisfies the requirement's range.
func (r PackageRequirement) Allows(v semver.Version) bool {
	if r.Range == "" {
		return true
	}
	rng, err := semver.ParseRange(r.Range)
	return err == nil && rng(v)
}

// CheckRange says why a dependency's version range does not parse; nil when it does (or is empty).
func CheckRange(r string) error {
	if r == "" {
		return nil
	}
	if _, err := semver.ParseRange(r); err != nil {
		return fmt.Errorf("version range %q: %w (write e.g. \">=1.2.0 <2.0.0\")", r, err)
	}
	return nil
}

// dependenciesFile is metadata/dependencies.yaml, as operator-sdk writes it.
type dependenciesFile struct {
	Dependencies []struct {
		Type  string `json:"type"`
		Value struct {
			PackageName string `json:"packageName"`
			Version     string `json:"version"`
			Group       string `json:"group"`
			Kind        string `json:"kind"`
		} `json:"value"`
	} `json:"dependencies"`
}

// readDependencies reads the bundle's metadata/dependencies.yaml, if it has one: olm.package entries are package
// requirements. Other types (olm.gvk: the CSV's required CRDs say it with the CRD's name) are warnings; an entry
// that cannot be read is an error.
func readDependencies(dir string, at func(string) string) ([]PackageRequirement, []Problem) {
	const rel = "metadata/dependencies.yaml"
	data, err := os.ReadFile(filepath.Join(dir, rel))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []Problem{Errorf(at(rel), RuleLoadFailed, "", "%v", err)}
	}
	var f dependenciesFile
	if err := yaml.Unmarshal(data, &f); err != nil {
		return nil, []Problem{Errorf(at(rel), RuleMalformedYAML, "fix the YAML syntax", "%v", err)}
	}
	var pkgs []PackageRequirement
	var problems []Problem
	for i, d := range f.Dependencies {
		v := d.Value
		switch d.Type {
		case "olm.package":
			if v.PackageName == "" {
				problems = append(problems, Errorf(at(rel), RuleInvalidDependency, "name the package: value.packageName",
					"dependencies[%d]: olm.package without a packageName", i))
				continue
			}
			if err := CheckRange(v.Version); err != nil {
				problems = append(problems, Errorf(at(rel), RuleInvalidDependency, "value.version is a semver range such as >=1.2.0 <2.0.0",
					"dependencies[%d]: package %s: %v", i, v.PackageName, err))
				continue
			}
			pkgs = append(pkgs, PackageRequirement{Package: v.PackageName, Range: v.Version})
		case "olm.gvk":
			// A kind names no CRD (its plural is not known here); the CSV's required CRDs do, and ALM installs those.
			problems = append(problems, Warnf(at(rel), RuleUnsupportedDependency,
				"list the kind in the CSV's spec.customresourcedefinitions.required (name: <plural>.<group>, version, kind): ALM creates required CRDs from the catalog",
				"dependencies[%d]: olm.gvk %s/%s %s is not resolved from dependencies.yaml", i, v.Group, v.Version, v.Kind))
		default:
			problems = append(problems, Warnf(at(rel), RuleUnsupportedDependency, "ALM resolves olm.package and olm.gvk dependencies",
				"dependencies[%d]: type %q is not resolved; the bundle installs without it", i, d.Type))
		}
	}
	return pkgs, problems
}
