package installer

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/bundle"
	"github.com/almproject/alm/catalog/policy"
	"github.com/almproject/alm/test/harness"
)

// TestEveryKindTheCatalogAcceptsIsInstalled writes a bundle with one object of every kind the catalog accepts,
// loads it as the catalog does, turns it into an OperatorVersion and plans it: a bundle that validates must install.
func TestEveryKindTheCatalogAcceptsIsInstalled(t *testing.T) {
	var extra []map[string]any
	for _, k := range policy.InstallableKinds() {
		obj := map[string]any{
			"apiVersion": schema.GroupVersion{Group: k.Group, Version: "v1"}.String(),
			"kind":       k.Kind,
			"metadata":   map[string]any{"name": "every-" + strings.ToLower(k.Kind)},
		}
		extra = append(extra, obj)
	}
	dir := harness.WriteBundle(t, t.TempDir(), harness.Demo{Name: "demo.v1.0.0", Version: "1.0.0", ExtraObjects: extra})
	b, problems := bundle.Load(dir)
	if bundle.HasErrors(problems) || b == nil {
		t.Fatalf("the bundle does not load: %v", problems)
	}
	for _, p := range problems {
		if p.Rule == bundle.RuleUnsupportedObject {
			t.Errorf("the catalog drops an installable kind: %v", p)
		}
	}
	ov, err := b.OperatorVersion("ns")
	if err != nil {
		t.Fatal(err)
	}
	served := func(gvk schema.GroupVersionKind) (bool, bool, error) { return true, true, nil }
	p, err := NewPlan(ov, served)
	if err != nil {
		t.Fatalf("a bundle the catalog accepts cannot be planned: %v", err)
	}
	planned := map[schema.GroupKind]bool{}
	for _, o := range p.All() {
		planned[o.GroupVersionKind().GroupKind()] = true
	}
	for _, k := range policy.InstallableKinds() {
		if !planned[k.GroupKind] {
			t.Errorf("%s is accepted by the catalog but not installed", k.GroupKind)
		}
	}
	// What the GC loop and the cleanup finalizer ask the API server about covers every kind the version installs.
	ownable := map[schema.GroupKind]bool{}
	for _, gvk := range OwnableKinds(ov) {
		ownable[gvk.GroupKind()] = true
	}
	for gk := range planned {
		if !ownable[gk] {
			t.Errorf("%s is installed but not in OwnableKinds: a version could own one that nobody looks for", gk)
		}
	}
}

// A version whose plan cannot be told from its spec may own any kind ALM installs: OwnableKinds says nil.
func TestOwnableKindsUnknown(t *testing.T) {
	ov := harness.Demo{Namespace: "ns", Name: "demo.v1.0.0", Version: "1.0.0"}.OperatorVersion()
	if got := OwnableKinds(ov); len(got) == 0 {
		t.Fatalf("OwnableKinds of a version with its content in spec = %v, want its plan's kinds", got)
	}
	image := ov.DeepCopy()
	image.Spec.Bundle = &operatorsv1alpha1.BundleReference{Image: "registry.invalid/demo@sha256:0"}
	invalid := ov.DeepCopy()
	invalid.Spec.Install.StrategySpec.DeploymentSpecs = nil
	for name, v := range map[string]*operatorsv1alpha1.OperatorVersion{"content in a bundle image": image, "plan does not build": invalid} {
		if got := OwnableKinds(v); got != nil {
			t.Errorf("%s: OwnableKinds = %v, want nil (every kind)", name, got)
		}
	}
}
