package bundlegen

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blang/semver/v4"
	opv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/almproject/alm/catalog/bundle"
	"github.com/almproject/alm/catalog/fbc"
	"github.com/almproject/alm/catalog/index"
)

// root is the repository root, relative to this package.
const root = "../.."

// generate writes every bundle into a temporary directory and indexes it.
func generate(t *testing.T) (string, *index.Index) {
	t.Helper()
	out := t.TempDir()
	if _, err := Generate(root, filepath.Join(root, "hack/bundles"), out); err != nil {
		t.Fatal(err)
	}
	contents, err := fbc.LoadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	ix := index.New(index.Catalog{Name: "bundles", Contents: contents})
	for _, p := range ix.Problems() {
		t.Errorf("problem: %s", p.String())
	}
	return out, ix
}

func TestGeneratedBundlesLoadWithTheExpectedGraph(t *testing.T) {
	_, ix := generate(t)
	if got, want := ix.PackageNames(), []string{"gateway-config", "konnect-operator"}; !slices.Equal(got, want) {
		t.Fatalf("packages = %v, want %v", got, want)
	}
	pkg := ix.Package("konnect-operator")[0]
	if pkg.DefaultChannel != "stable" || !slices.Equal(pkg.ChannelNames(), []string{"fast", "stable"}) {
		t.Errorf("default channel %q, channels %v; want stable of [fast stable]", pkg.DefaultChannel, pkg.ChannelNames())
	}
	for _, ch := range pkg.Channels {
		e11, e12 := ch.Entry("konnect-operator.v1.1.0"), ch.Entry("konnect-operator.v1.2.0")
		if ch.Entry("konnect-operator.v1.0.0") == nil || e11 == nil || e12 == nil {
			t.Fatalf("channel %s lacks a version: %d entries", ch.Name, len(ch.Entries))
		}
		if e11.Replaces != "konnect-operator.v1.0.0" {
			t.Errorf("channel %s: 1.1.0 replaces %q, want konnect-operator.v1.0.0", ch.Name, e11.Replaces)
		}
		if e12.SkipRange != ">=1.0.0 <1.2.0" || e12.Replaces != "konnect-operator.v1.1.0" {
			t.Errorf("channel %s: 1.2.0 skipRange %q replaces %q", ch.Name, e12.SkipRange, e12.Replaces)
		}
	}
	// From 1.0.0 the stable channel offers 1.1.0 (replaces) and 1.2.0 (skipRange).
	kinds := map[string]index.EdgeKind{}
	for _, e := range ix.UpgradesFrom("konnect-operator", semver.MustParse("1.0.0"), "") {
		if e.Channel == "stable" {
			kinds[e.Entry.Bundle.Version.String()] = e.Kind
		}
	}
	if want := map[string]index.EdgeKind{"1.1.0": index.EdgeReplaces, "1.2.0": index.EdgeSkipRange}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("upgrades from 1.0.0 = %v, want %v", kinds, want)
	}
	// The newest version is reachable from 1.0.0 (through 1.2.0, then each version replaced by the next).
	p, err := LoadPackage(filepath.Join(root, "hack/bundles/konnect-operator.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	newest := p.Versions[len(p.Versions)-1].Version
	res, err := ix.Resolve(index.Request{Package: "konnect-operator", From: "1.0.0"})
	if err != nil || res.Chosen == nil || res.Chosen.Bundle.Version.String() != newest {
		t.Errorf("resolve from 1.0.0: %v, %v; want %s", res.Chosen, err, newest)
	}
}

func TestGatewayConfigRequiresKongServiceFromKonnectOperator(t *testing.T) {
	_, ix := generate(t)
	gc := ix.Bundle("gateway-config", "gateway-config.v0.1.0")
	if gc == nil {
		t.Fatal("gateway-config.v0.1.0 not in the catalog")
	}
	ks := schema.GroupVersionKind{Group: "configuration.konghq.com", Version: "v1alpha1", Kind: "KongService"}
	if !slices.Equal(gc.Requires, []schema.GroupVersionKind{ks}) {
		t.Errorf("gateway-config requires %v, want [%v]", gc.Requires, ks)
	}
	if got := ix.OwnerPackages(ks); !slices.Equal(got, []string{"konnect-operator"}) {
		t.Errorf("owners of %v = %v, want [konnect-operator]", ks, got)
	}
}

func TestPermissionsEqualGeneratedRoles(t *testing.T) {
	_, ix := generate(t)
	for _, tc := range []struct {
		pkg, bundle, roleFile string
		cluster               bool
	}{
		{"konnect-operator", "konnect-operator.v1.0.0", "config/konnect-operator/rbac/role.yaml", true},
		{"konnect-operator", "konnect-operator.v1.2.0", "config/konnect-operator/rbac/role.yaml", true},
		{"gateway-config", "gateway-config.v0.1.0", "config/gateway-config/rbac/role.yaml", false},
	} {
		t.Run(tc.bundle, func(t *testing.T) {
			want, err := LoadRules(root, tc.roleFile)
			if err != nil {
				t.Fatal(err)
			}
			if tc.pkg == "konnect-operator" {
				want = rulesWithout(rulesWithout(rulesWithout(rulesWithout(want, "kongplugins", "kongpluginbindings", "kongconsumergroups"), gatewayKinds...), "kongreferencegrants"), credentialKinds...)
			}
			strategy := installStrategy(t, ix, tc.pkg, tc.bundle)
			granted, other := strategy.Permissions, strategy.ClusterPermissions
			if tc.cluster {
				granted, other = other, granted
			}
			if len(granted) != 1 || len(other) != 0 {
				t.Fatalf("%d permissions and %d of the other scope, want 1 and 0", len(granted), len(other))
			}
			if granted[0].ServiceAccountName != tc.pkg || !reflect.DeepEqual(granted[0].Rules, want) {
				t.Errorf("service account %q rules\n%v\nwant the rules of %s\n%v", granted[0].ServiceAccountName,
					granted[0].Rules, tc.roleFile, want)
			}
		})
	}
}

// rulesWithout is rules without the resources (and subresources) named, and without rules left empty: what a
// version that does not ship those kinds is granted.
func rulesWithout(rules []rbacv1.PolicyRule, plurals ...string) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for _, r := range rules {
		var kept []string
		for _, res := range r.Resources {
			if !slices.Contains(plurals, strings.Split(res, "/")[0]) {
				kept = append(kept, res)
			}
		}
		if len(kept) > 0 {
			r.Resources = kept
			out = append(out, r)
		}
	}
	return out
}

func installStrategy(t *testing.T, ix *index.Index, pkg, name string) opv1alpha1.StrategyDetailsDeployment {
	t.Helper()
	b := ix.Bundle(pkg, name)
	if b == nil {
		t.Fatalf("%s not in the catalog", name)
	}
	m, err := b.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	return m.CSV.Spec.InstallStrategy.StrategySpec
}

func TestVersion110ShowsTheServiceColumn(t *testing.T) {
	_, ix := generate(t)
	columns := func(name string) []string {
		m, err := ix.Bundle("konnect-operator", name).Manifests()
		if err != nil {
			t.Fatal(err)
		}
		crd := m.OwnedCRD("configuration.konghq.com", "KongRoute")
		var out []string
		for _, c := range crd.Spec.Versions[0].AdditionalPrinterColumns {
			out = append(out, c.Name)
		}
		return out
	}
	if got := columns("konnect-operator.v1.0.0"); slices.Contains(got, "Service") {
		t.Errorf("1.0.0 KongRoute columns %v already have Service", got)
	}
	for _, name := range []string{"konnect-operator.v1.1.0", "konnect-operator.v1.2.0"} {
		if got := columns(name); len(got) < 2 || got[len(got)-2] != "Service" || got[len(got)-1] != "Age" {
			t.Errorf("%s KongRoute columns = %v, want Service just before Age", name, got)
		}
	}
}

func TestCommittedBundlesAreUpToDate(t *testing.T) {
	out, _ := generate(t)
	err := filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(out, path)
		want, _ := os.ReadFile(path)
		got, err := os.ReadFile(filepath.Join(root, "bundles", rel))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("bundles/%s is stale or missing; run `make bundles`", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestWriteBundleForAnArbitraryVersion(t *testing.T) {
	p, err := LoadPackage(filepath.Join(root, "hack/bundles/konnect-operator.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	v := *p.Version("1.2.0")
	v.Version, v.Replaces, v.SkipRange = "1.3.0", "konnect-operator.v1.2.0", ""
	v.Args = append(slices.Clone(v.Args), "--no-such-flag")
	dir := filepath.Join(t.TempDir(), "konnect-operator", "1.3.0")
	if err := WriteBundle(root, p, v, dir); err != nil {
		t.Fatal(err)
	}
	b, problems := bundle.Load(dir)
	if bundle.HasErrors(problems) || b == nil {
		t.Fatalf("problems: %v", problems)
	}
	m, _ := b.Manifests()
	c := m.CSV.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Spec.Template.Spec.Containers[0]
	if c.Image != "alm.local/konnect-operator:1.3.0" || !slices.Contains(c.Args, "--no-such-flag") {
		t.Errorf("container image %s args %v", c.Image, c.Args)
	}
	if m.CSV.Spec.Replaces != "konnect-operator.v1.2.0" || m.CSV.Spec.Version.String() != "1.3.0" {
		t.Errorf("replaces %q version %s", m.CSV.Spec.Replaces, m.CSV.Spec.Version.String())
	}
	if p.Version("1.2.0").Version != "1.2.0" || slices.Contains(p.Version("1.2.0").Args, "--no-such-flag") {
		t.Error("WriteBundle's caller changed the loaded package")
	}
}

func TestCheckRulesRefusesWildcards(t *testing.T) {
	err := checkRules("role.yaml", []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"*"}},
	})
	if err == nil || !strings.Contains(err.Error(), "role.yaml: rules[1]") {
		t.Errorf("err = %v, want one naming role.yaml rules[1]", err)
	}
}

func TestVersionChecksNameTheField(t *testing.T) {
	p := &Package{Name: "x", DefaultChannel: "stable", ProbePort: 8081}
	for _, tc := range []struct {
		v    Version
		want string
	}{
		{Version{Version: "1.0", Channels: []string{"stable"}}, "version:"},
		{Version{Version: "1.0.0", Channels: []string{"fast"}}, "channels"},
		{Version{Version: "1.0.0", Channels: []string{"stable"}, Replaces: "y.v0.9.0"}, "replaces"},
		{Version{Version: "1.0.0", Channels: []string{"stable"}, SkipRange: "<<1"}, "skipRange"},
		{Version{Version: "1.0.0", Channels: []string{"stable"}, Args: []string{"--health-probe-bind-address=:9"}}, "probePort"},
		{Version{Version: "1.0.0", Channels: []string{"stable"}, Handoff: "soon"}, "handoff"},
	} {
		if err := p.checkVersion(tc.v); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want one mentioning %q", tc.v, err, tc.want)
		}
	}
}

// TestKonnectOperator130TakesPartInItsUpgrade: 1.3.0 replaces 1.2.0 (the only upgrade to it), its CSV carries the
// handoff annotation, which gives its OperatorVersion spec.handoff with the bounded timeout, and it runs with tag
// scheme v2.
func TestKonnectOperator130TakesPartInItsUpgrade(t *testing.T) {
	out, ix := generate(t)
	var to []string
	for _, e := range ix.UpgradesFrom("konnect-operator", semver.MustParse("1.2.0"), "") {
		to = append(to, e.Channel+":"+e.Entry.Bundle.Version.String()+":"+string(e.Kind))
	}
	if want := []string{"fast:1.3.0:replaces", "stable:1.3.0:replaces"}; !slices.Equal(slices.Sorted(slices.Values(to)), want) {
		t.Errorf("upgrades from 1.2.0 = %v, want %v", to, want)
	}
	b, problems := bundle.Load(filepath.Join(out, "konnect-operator", "1.3.0"))
	if bundle.HasErrors(problems) || b == nil {
		t.Fatalf("problems: %v", problems)
	}
	ov, err := b.OperatorVersion("konnect-system")
	if err != nil {
		t.Fatal(err)
	}
	if ov.Spec.Handoff == nil || ov.Spec.Handoff.Timeout.Duration != 5*time.Minute {
		t.Errorf("spec.handoff = %+v, want a 5m timeout", ov.Spec.Handoff)
	}
	args := ov.Spec.Install.StrategySpec.DeploymentSpecs[0].Spec.Template.Spec.Containers[0].Args
	if !slices.Contains(args, "--tag-scheme=v2") || !slices.Contains(args, "--leader-elect") {
		t.Errorf("1.3.0 args = %v, want --tag-scheme=v2 with --leader-elect", args)
	}
}
