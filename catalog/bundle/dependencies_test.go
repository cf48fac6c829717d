package bundle

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/blang/semver/v4"

	almv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/internal/cattest"
)

// TestDependenciesFile: metadata/dependencies.yaml as operator-sdk writes it becomes package requirements and
// required kinds, and the OperatorVersion lists the packages; an entry that cannot be read excludes the bundle with
// a problem naming the entry, and a type ALM does not resolve is a warning.
func TestDependenciesFile(t *testing.T) {
	load := func(t *testing.T, deps string) (*Bundle, []Problem) {
		t.Helper()
		dir := cattest.CopyDir(t, "../testdata/bad/install-strategy/good/1.0.0")
		cattest.WriteFile(t, filepath.Join(dir, "metadata", "dependencies.yaml"), deps)
		return Load(dir)
	}
	b, problems := load(t, `dependencies:
- type: olm.package
  value: {packageName: etcd, version: ">=0.9.0 <1.0.0"}
- type: olm.package
  value: {packageName: etcd, version: "!=0.9.2"}
- type: olm.package
  value: {packageName: prometheus}
- type: olm.gvk
  value: {group: etcd.database.coreos.com, kind: EtcdCluster, version: v1beta2}
- type: olm.label
  value: {label: x}
`)
	if b == nil {
		t.Fatalf("bundle excluded: %v", problems)
	}
	want := []PackageRequirement{{"etcd", ">=0.9.0 <1.0.0"}, {"etcd", "!=0.9.2"}, {"prometheus", ""}}
	if !reflect.DeepEqual(b.RequiresPackages, want) {
		t.Errorf("RequiresPackages %v, want %v", b.RequiresPackages, want)
	}
	if len(problems) != 2 || problems[0].Rule != RuleUnsupportedDependency || problems[1].Rule != RuleUnsupportedDependency ||
		problems[0].Severity != SeverityWarning || !strings.Contains(problems[0].String(), "spec.customresourcedefinitions.required") {
		t.Errorf("problems %v, want two %s warnings (olm.gvk, saying where a kind is required; olm.label)", problems, RuleUnsupportedDependency)
	}
	ov, err := b.OperatorVersion("ns")
	if err != nil {
		t.Fatal(err)
	}
	wantOV := []almv1alpha1.RequiredPackage{{Name: "etcd", VersionRange: ">=0.9.0 <1.0.0 !=0.9.2"}, {Name: "prometheus"}}
	if !reflect.DeepEqual(ov.Spec.RequiredPackages, wantOV) {
		t.Errorf("spec.requiredPackages %v, want %v", ov.Spec.RequiredPackages, wantOV)
	}
	etcd := PackageRequirement{Package: "etcd", Range: ov.Spec.RequiredPackages[0].VersionRange}
	for v, ok := range map[string]bool{"0.9.4": true, "0.9.2": false, "1.0.0": false} {
		if etcd.Allows(semver.MustParse(v)) != ok {
			t.Errorf("%s allows %s: %v, want %v", etcd.Range, v, !ok, ok)
		}
	}

	for name, deps := range map[string]string{
		"bad range":       "dependencies:\n- type: olm.package\n  value: {packageName: etcd, version: \"> = one\"}\n",
		"no package name": "dependencies:\n- type: olm.package\n  value: {version: \">=1.0.0\"}\n",
	} {
		t.Run(name, func(t *testing.T) {
			b, problems := load(t, deps)
			if b != nil || !strings.Contains(cattest.ProblemLines(problems), RuleInvalidDependency) || !strings.Contains(cattest.ProblemLines(problems), "metadata/dependencies.yaml") {
				t.Errorf("bundle %v, problems %v; want it excluded with %s naming metadata/dependencies.yaml", b != nil, problems, RuleInvalidDependency)
			}
		})
	}
}
