package catalogsource

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"

	opv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/almproject/alm/test/corpus"
)

// The catalog of the image benchmarks: a File-Based Catalog of 500 packages x 20 versions as current opm writes one
// for bundle images (declcfg.WriteFS, one <package>/catalog.json each): olm.package with an icon, olm.channel with
// replaces chains, skips and skipRanges, and olm.bundle documents naming their bundle image by digest, with
// olm.package, olm.gvk, olm.gvk.required and olm.csv.metadata properties (description, CRD descriptions with
// descriptors, annotations with alm-examples) and no olm.bundle.object.

const (
	imgBenchPackages = 500
	imgBenchVersions = 20
	imgBenchLayout   = "v2" // bump when the generator changes, so the cached directory is regenerated
	imgBenchCRDs     = 3    // CRDs each bundle owns
)

// imageBenchDir is where the catalog's configs are cached: in the temporary directory, kept across runs.
func imageBenchDir() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("alm-image-catalog-bench-%d-%d-%s", imgBenchPackages, imgBenchVersions, imgBenchLayout), "configs")
}

// imageBenchCatalog writes the catalog into imageBenchDir unless it is there already (deterministic: the same files
// every time), and returns the directory.
func imageBenchCatalog() (string, error) {
	dir := imageBenchDir()
	done := filepath.Join(filepath.Dir(dir), "done")
	if _, err := os.Stat(done); err == nil {
		return dir, nil
	}
	_ = os.RemoveAll(filepath.Dir(dir))
	if err := declcfg.WriteFS(genImageCatalog(imgBenchPackages, imgBenchVersions), dir, declcfg.WriteJSON, ".json"); err != nil {
		return "", err
	}
	return dir, os.WriteFile(done, nil, 0o644)
}

// genImageCatalog is the catalog: per package a stable channel with a replaces chain (every new minor version
// skipRanges the previous minor; every x.y.3 hotfix replaces x.y.1 and skips x.y.2) and a fast channel with the
// newest five versions. Each bundle owns three kinds; every other package requires the previous package's first kind.
func genImageCatalog(packages, versions int) declcfg.DeclarativeConfig {
	r := rand.New(rand.NewSource(1))
	var cfg declcfg.DeclarativeConfig
	for p := 0; p < packages; p++ {
		pkg := fmt.Sprintf("op-%03d", p)
		icon := make([]byte, 8_000)
		r.Read(icon)
		cfg.Packages = append(cfg.Packages, declcfg.Package{Schema: declcfg.SchemaPackage, Name: pkg, DefaultChannel: "stable",
			Description: corpus.Words(r, 60), Icon: &declcfg.Icon{Data: icon, MediaType: "image/png"}})
		stable, fast := corpus.Channels(pkg, versions, func(i int) string { return pkg + ".v" + benchVersion(i) })
		cfg.Channels = append(cfg.Channels, stable, fast)
		for i, e := range stable.Entries {
			cfg.Bundles = append(cfg.Bundles, imageBenchBundle(r, p, i, e))
		}
	}
	return cfg
}

func benchVersion(i int) string { return fmt.Sprintf("1.%d.%d", i/5, i%5) }

// benchDigest is a fixed, made-up digest for a name.
func benchDigest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// imageBenchBundle is version i of package p, as opm renders it from its bundle image.
func imageBenchBundle(r *rand.Rand, p, i int, e declcfg.ChannelEntry) declcfg.Bundle {
	pkg := fmt.Sprintf("op-%03d", p)
	ver := benchVersion(i)
	img := fmt.Sprintf("registry.example.com/ops/%s-bundle@%s", pkg, benchDigest(e.Name))
	manager := fmt.Sprintf("registry.example.com/ops/%s@%s", pkg, benchDigest(e.Name+"-manager"))
	group := pkg + ".example.com"
	props := []property.Property{property.MustBuildPackage(pkg, ver)}
	for c := 0; c < imgBenchCRDs; c++ {
		props = append(props, property.MustBuildGVK(group, "v1", fmt.Sprintf("Kind%d", c)))
	}
	if p%2 == 1 {
		props = append(props, property.MustBuildGVKRequired(fmt.Sprintf("op-%03d.example.com", p-1), "v1", "Kind0"))
	}
	props = append(props, property.MustBuild(imageBenchCSVMetadata(r, pkg, group, manager, e)))
	return declcfg.Bundle{Schema: declcfg.SchemaBundle, Name: e.Name, Package: pkg, Image: img, Properties: props,
		RelatedImages: []declcfg.RelatedImage{{Image: img}, {Name: "manager", Image: manager}}}
}

// imageBenchCSVMetadata is the olm.csv.metadata of a bundle: what opm copies from its ClusterServiceVersion.
func imageBenchCSVMetadata(r *rand.Rand, pkg, group, manager string, e declcfg.ChannelEntry) *property.CSVMetadata {
	var owned []opv1alpha1.CRDDescription
	var examples []string
	for c := 0; c < imgBenchCRDs; c++ {
		kind := fmt.Sprintf("Kind%d", c)
		owned = append(owned, imageBenchCRD(r, group, kind))
		examples = append(examples, fmt.Sprintf(`{"apiVersion":"%s/v1","kind":"%s","metadata":{"name":"example-%s"},`+
			`"spec":{"replicas":3,"version":"%s","storage":{"size":"10Gi","class":"standard"},"backup":{"enabled":true,"schedule":"0 2 * * *",`+
			`"secretRef":{"name":"backup-credentials"}},"config":{"level":"info","format":"json"}}}`, group, kind, strings.ToLower(kind), e.Name))
	}
	annotations := map[string]string{
		"alm-examples": "[" + strings.Join(examples, ",") + "]", "capabilities": "Full Lifecycle", "categories": "Database,Storage",
		"containerImage": manager, "createdAt": "2024-05-01T12:00:00Z", "description": corpus.Words(r, 20),
		"repository": "https://example.com/" + pkg, "support": "Example", "operators.operatorframework.io/builder": "operator-sdk-v1.34.1",
		"operators.operatorframework.io/project_layout": "go.kubebuilder.io/v4", "features.operators.openshift.io/disconnected": "true",
	}
	if e.SkipRange != "" {
		annotations["olm.skipRange"] = e.SkipRange
	}
	return &property.CSVMetadata{Annotations: annotations, CustomResourceDefinitions: opv1alpha1.CustomResourceDefinitions{Owned: owned},
		Description: "## About\n\n" + corpus.Words(r, 250) + "\n\n## Features\n\n" + corpus.Words(r, 150) + "\n\n## Prerequisites\n\n" + corpus.Words(r, 40),
		DisplayName: strings.ToUpper(pkg[:1]) + pkg[1:] + " Operator",
		InstallModes: []opv1alpha1.InstallMode{{Type: opv1alpha1.InstallModeTypeOwnNamespace, Supported: true},
			{Type: opv1alpha1.InstallModeTypeSingleNamespace, Supported: true}, {Type: opv1alpha1.InstallModeTypeMultiNamespace},
			{Type: opv1alpha1.InstallModeTypeAllNamespaces, Supported: true}},
		Keywords: []string{"database", "storage", pkg}, Labels: map[string]string{"operatorframework.io/arch.amd64": "supported"},
		Links:       []opv1alpha1.AppLink{{Name: "Documentation", URL: "https://example.com/" + pkg + "/docs"}},
		Maintainers: []opv1alpha1.Maintainer{{Name: "Maintainers", Email: "maintainers@example.com"}},
		Maturity:    "stable", MinKubeVersion: "1.25.0", Provider: opv1alpha1.AppLink{Name: "Example", URL: "https://example.com"},
		NativeAPIs: []metav1.GroupVersionKind{{Version: "v1", Kind: "Secret"}},
	}
}

// imageBenchCRD describes one owned CRD with spec and status descriptors, as a CSV's customresourcedefinitions.owned.
func imageBenchCRD(r *rand.Rand, group, kind string) opv1alpha1.CRDDescription {
	d := opv1alpha1.CRDDescription{Name: strings.ToLower(kind) + "s." + group, Version: "v1", Kind: kind, DisplayName: kind,
		Description: corpus.Words(r, 25), Resources: []opv1alpha1.APIResourceReference{{Name: "", Kind: "StatefulSet", Version: "v1"},
			{Kind: "Service", Version: "v1"}, {Kind: "Secret", Version: "v1"}}}
	for _, f := range []string{"replicas", "version", "storage.size", "backup.enabled"} {
		d.SpecDescriptors = append(d.SpecDescriptors, opv1alpha1.SpecDescriptor{Path: f, DisplayName: f, Description: corpus.Words(r, 8),
			XDescriptors: []string{"urn:alm:descriptor:com.tectonic.ui:fieldGroup:" + strings.Split(f, ".")[0]}})
	}
	for _, f := range []string{"phase", "conditions"} {
		d.StatusDescriptors = append(d.StatusDescriptors, opv1alpha1.StatusDescriptor{Path: f, DisplayName: f, Description: corpus.Words(r, 8),
			XDescriptors: []string{"urn:alm:descriptor:io.kubernetes." + f}})
	}
	return d
}
