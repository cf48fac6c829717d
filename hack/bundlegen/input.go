// Package bundlegen writes the registry+v1 bundles of our own operators (bundles/<package>/<version>/) from a small
// per-package input file (hack/bundles/<package>.yaml), the generated CRDs and the generated RBAC in config/.
//
// `make bundles` runs it over every input file; the output is deterministic and never edited by hand. End-to-end
// tests call WriteBundle to write a bundle for any version into a temporary directory, e.g. a crashing 1.3.0:
//
//	pkg, err := bundlegen.LoadPackage(filepath.Join(root, "hack/bundles/konnect-operator.yaml"))
//	v := *pkg.Version("1.2.0")
//	v.Version, v.Replaces, v.SkipRange = "1.3.0", "konnect-operator.v1.2.0", ""
//	v.Args = append(v.Args, "--no-such-flag")
//	err = bundlegen.WriteBundle(root, pkg, v, filepath.Join(t.TempDir(), "konnect-operator", "1.3.0"))
package bundlegen

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/blang/semver/v4"
	"sigs.k8s.io/yaml"

	"github.com/almproject/alm/catalog/bundle"
)

// Package is one input file: a package's fixed facts and its versions.
type Package struct {
	// Name is the package name (operators.operatorframework.io.bundle.package.v1), also the name of the operator's
	// Deployment and ServiceAccount.
	Name string `json:"package"`
	// DisplayName and Description go into every ClusterServiceVersion.
	DisplayName string `json:"displayName"`
	Description string `json:"description"`
	// DefaultChannel is the package's default channel; every version must be in it.
	DefaultChannel string `json:"defaultChannel"`
	// MinKubeVersion is the CSV's spec.minKubeVersion.
	MinKubeVersion string `json:"minKubeVersion"`
	// ImageRepository is the image name without a tag (e.g. alm.local/konnect-operator); the tag is the version.
	ImageRepository string `json:"imageRepository"`
	// ProbePort serves /healthz and /readyz; MetricsPort serves /metrics (0: none).
	ProbePort   int32 `json:"probePort"`
	MetricsPort int32 `json:"metricsPort,omitempty"`
	// CRDDirectory holds the CRDs the package owns (relative to the repository root); every file becomes part of
	// every bundle and an owned CRD of its CSV.
	CRDDirectory string `json:"crdDirectory,omitempty"`
	// CRDsSince names CRDs of CRDDirectory (<plural>.<group>) that only versions from the given one on ship, with
	// their RBAC rules and examples: CRDs added after a version was published, so its bundle stays as published.
	CRDsSince map[string]string `json:"crdsSince,omitempty"`
	// FieldsSince names fields of CRDs of CRDDirectory (<plural>.<group> -> a dotted path in the schema of every
	// served version, e.g. spec.adopt -> version) that only versions from the given one on ship: fields added to a
	// published CRD, so its bundle stays as published (fields.go).
	FieldsSince map[string]map[string]string `json:"fieldsSince,omitempty"`
	// CRDsBefore are copies of CRDDirectory that the bundles of earlier versions are generated from (frozen.go).
	CRDsBefore []FrozenCRDs `json:"crdsBefore,omitempty"`
	// ClusterRole is a generated ClusterRole file whose rules become the CSV's clusterPermissions.
	ClusterRole string `json:"clusterRole,omitempty"`
	// Role is a generated (Cluster)Role file whose rules become the CSV's namespaced permissions: what the operator
	// may do in the namespace it is installed in.
	Role string `json:"role,omitempty"`
	// Required are the kinds the operator needs from other packages (spec.customresourcedefinitions.required).
	Required []RequiredCRD `json:"required,omitempty"`
	// InstallModes are the supported install modes (AllNamespaces, OwnNamespace, ...); the others are unsupported.
	InstallModes []string `json:"installModes"`
	// Examples are example objects of the owned kinds (the CSV's alm-examples annotation, shown by UIs and checked
	// by the bundle validators).
	Examples []map[string]any `json:"examples,omitempty"`
	// Keywords go into the CSV.
	Keywords []string `json:"keywords,omitempty"`
	// Versions are the bundles to write.
	Versions []Version `json:"versions"`
}

// RequiredCRD names a kind another package provides.
type RequiredCRD struct {
	// Name is the CRD name, <plural>.<group>.
	Name    string `json:"name"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
	// Description says what the operator uses it for.
	Description string `json:"description,omitempty"`
}

// Version is one bundle.
type Version struct {
	// Version is the semver version; the bundle is named <package>.v<version>.
	Version string `json:"version"`
	// Replaces, Skips and SkipRange are the upgrade edges (CSV spec.replaces, spec.skips, olm.skipRange).
	Replaces  string   `json:"replaces,omitempty"`
	Skips     []string `json:"skips,omitempty"`
	SkipRange string   `json:"skipRange,omitempty"`
	// Channels the bundle is in.
	Channels []string `json:"channels"`
	// Image overrides <imageRepository>:<version>.
	Image string `json:"image,omitempty"`
	// Args are the container's arguments; the image's entrypoint is the operator binary.
	Args []string `json:"args,omitempty"`
	// ProgressDeadlineSeconds is the Deployment's progress deadline (Kubernetes' default, 600, when unset): how long
	// its pods may take to become available before the rollout, and so the install, counts as failed.
	ProgressDeadlineSeconds *int32 `json:"progressDeadlineSeconds,omitempty"`
	// LogsOnError sets the container's terminationMessagePolicy to FallbackToLogsOnError: when the operator exits
	// with an error, the kubelet keeps its last log lines as the termination message, which ALM quotes in the
	// OperatorVersion's status (CrashLoopBackOff).
	LogsOnError bool `json:"logsOnError,omitempty"`
	// Handoff makes the version take part in its upgrade: the CSV annotation operators.alm.dev/handoff, "true" or
	// how long ALM waits for the operator's answer (e.g. "5m"). See the README, "The hand-over".
	Handoff string `json:"handoff,omitempty"`
	// PrinterColumns are added to owned CRDs in this version's bundle (before the Age column).
	PrinterColumns []PrinterColumn `json:"printerColumns,omitempty"`
	// Changes says what a user notices compared with the version it replaces; it ends the CSV description.
	Changes string `json:"changes,omitempty"`
}

// PrinterColumn is an additional printer column for one owned CRD.
type PrinterColumn struct {
	// CRD is the CRD name, <plural>.<group>.
	CRD         string `json:"crd"`
	Name        string `json:"name"`
	Type        string `json:"type"`
	JSONPath    string `json:"jsonPath"`
	Description string `json:"description,omitempty"`
}

// LoadPackage reads and checks an input file.
func LoadPackage(path string) (*Package, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p := &Package{}
	if err := yaml.UnmarshalStrict(data, p); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := p.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// Version returns the version's entry, or nil.
func (p *Package) Version(v string) *Version {
	for i := range p.Versions {
		if p.Versions[i].Version == v {
			return &p.Versions[i]
		}
	}
	return nil
}

// BundleName is the bundle (CSV) name of a version: <package>.v<version>.
func (p *Package) BundleName(version string) string { return p.Name + ".v" + version }

// ImageFor is the image reference of a version.
func (p *Package) ImageFor(v Version) string {
	if v.Image != "" {
		return v.Image
	}
	return p.ImageRepository + ":" + v.Version
}

func (p *Package) check() error {
	switch {
	case p.Name == "":
		return fmt.Errorf("package: required")
	case p.DefaultChannel == "":
		return fmt.Errorf("defaultChannel: required")
	case p.ImageRepository == "":
		return fmt.Errorf("imageRepository: required")
	case p.ProbePort == 0:
		return fmt.Errorf("probePort: required (the readiness and liveness probes use it)")
	case len(p.Versions) == 0:
		return fmt.Errorf("versions: at least one is required")
	}
	if _, err := semver.ParseTolerant(p.MinKubeVersion); err != nil {
		return fmt.Errorf("minKubeVersion %q: %w", p.MinKubeVersion, err)
	}
	if err := p.checkFieldsSince(); err != nil {
		return err
	}
	if err := p.checkSince(); err != nil {
		return err
	}
	if err := p.checkFrozen(); err != nil {
		return err
	}
	seen := map[string]bool{}
	for i, v := range p.Versions {
		if err := p.checkVersion(v); err != nil {
			return fmt.Errorf("versions[%d] (%s): %w", i, v.Version, err)
		}
		if seen[v.Version] {
			return fmt.Errorf("versions[%d]: version %s is listed twice", i, v.Version)
		}
		seen[v.Version] = true
	}
	return nil
}

// checkVersion checks one version on its own; WriteBundle calls it for versions that come from tests.
func (p *Package) checkVersion(v Version) error {
	if _, err := semver.Parse(v.Version); err != nil {
		return fmt.Errorf("version: %w", err)
	}
	if v.SkipRange != "" {
		if _, err := semver.ParseRange(v.SkipRange); err != nil {
			return fmt.Errorf("skipRange %q: %w", v.SkipRange, err)
		}
	}
	if v.Handoff != "" {
		if err := bundle.CheckHandoff(v.Handoff); err != nil {
			return fmt.Errorf("handoff: %w", err)
		}
	}
	if v.Replaces != "" && !strings.HasPrefix(v.Replaces, p.Name+".v") {
		return fmt.Errorf("replaces %q: must name a bundle of this package (%s.v<version>)", v.Replaces, p.Name)
	}
	if !contains(v.Channels, p.DefaultChannel) {
		return fmt.Errorf("channels %v: must include the default channel %q", v.Channels, p.DefaultChannel)
	}
	probeArg := fmt.Sprintf("--health-probe-bind-address=:%d", p.ProbePort)
	for _, a := range v.Args {
		if strings.HasPrefix(a, "--health-probe-bind-address=") && a != probeArg {
			return fmt.Errorf("args: %q disagrees with probePort %d (the probes would fail)", a, p.ProbePort)
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// marshalYAML marshals v as YAML with a trailing newline.
func marshalYAML(v any) ([]byte, error) {
	data, err := yaml.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(bytes.TrimRight(data, "\n"), '\n'), nil
}
