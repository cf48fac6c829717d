package bundlegen

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/almproject/alm/catalog/bundle"
)

// newKinds are the CRDs the konnect-operator input ships only from 1.4.0 on.
var newKinds = []string{
	"kongconsumergroups.configuration.konghq.com",
	"kongpluginbindings.configuration.konghq.com",
	"kongplugins.configuration.konghq.com",
}

// gatewayKinds are the CRDs the konnect-operator input ships only from 1.5.0 on: upstreams, TLS material, keys and
// vaults.
var gatewayKinds = []string{
	"kongupstreams", "kongtargets", "kongcertificates", "kongcacertificates", "kongsnis",
	"kongdataplaneclientcertificates", "kongkeys", "kongkeysets", "kongvaults",
}

// credentialKinds are the CRDs the konnect-operator input ships only from 1.8.0 on.
var credentialKinds = []string{
	"kongcredentialapikeys", "kongcredentialbasicauths", "kongcredentialacls", "kongcredentialjwts", "kongcredentialhmacs",
	// and, from the same version, the Dedicated Cloud Gateway kinds
	"konnectcloudgatewaynetworks", "konnectcloudgatewaytransitgateways", "konnectcloudgatewaydataplanegroupconfigurations",
}

// writeVersion writes the bundle of a copy of 1.2.0 numbered version and returns what it holds.
func writeVersion(t *testing.T, p *Package, version string) (*bundle.Bundle, []string) {
	t.Helper()
	v := *p.Version("1.2.0")
	v.Version, v.Replaces, v.SkipRange = version, "konnect-operator.v1.2.0", ""
	dir := filepath.Join(t.TempDir(), "konnect-operator", version)
	if err := WriteBundle(root, p, v, dir); err != nil {
		t.Fatal(err)
	}
	b, problems := bundle.Load(dir)
	if bundle.HasErrors(problems) || b == nil {
		t.Fatalf("%s: problems: %v", version, problems)
	}
	entries, err := os.ReadDir(filepath.Join(dir, "manifests"))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		files = append(files, e.Name())
	}
	return b, files
}

// A version before a CRD's crdsSince leaves out the CRD, its RBAC and its examples; the version named (and later
// ones) ship them with the generated role's rules in full.
func TestCRDsSinceFiltersCRDsRulesAndExamples(t *testing.T) {
	p, err := LoadPackage(filepath.Join(root, "hack/bundles/konnect-operator.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	role, err := LoadRules(root, p.ClusterRole)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		version      string
		ships        bool
		shipsGateway bool
	}{{"1.3.0", false, false}, {"1.4.0", true, false}, {"1.5.0", true, true}} {
		t.Run(tc.version, func(t *testing.T) {
			b, files := writeVersion(t, p, tc.version)
			m, err := b.Manifests()
			if err != nil {
				t.Fatal(err)
			}
			var owned []string
			for _, d := range m.CSV.Spec.CustomResourceDefinitions.Owned {
				owned = append(owned, d.Name)
			}
			rules := m.CSV.Spec.InstallStrategy.StrategySpec.ClusterPermissions[0].Rules
			examples := m.CSV.Annotations["alm-examples"]
			for _, crd := range newKinds {
				file := "configuration.konghq.com_" + strings.Split(crd, ".")[0] + ".yaml"
				if got := slices.Contains(files, file); got != tc.ships {
					t.Errorf("file %s in the bundle: %v, want %v (files %v)", file, got, tc.ships, files)
				}
				if got := slices.Contains(owned, crd); got != tc.ships {
					t.Errorf("%s owned by the CSV: %v, want %v", crd, got, tc.ships)
				}
			}
			for _, plural := range gatewayKinds {
				file := "configuration.konghq.com_" + plural + ".yaml"
				if got := slices.Contains(files, file); got != tc.shipsGateway {
					t.Errorf("file %s in the bundle: %v, want %v", file, got, tc.shipsGateway)
				}
			}
			// KongReferenceGrant ships from 1.6.0 on, the credential kinds from 1.8.0 on.
			want := rulesWithout(rulesWithout(role, "kongreferencegrants"), credentialKinds...)
			if !tc.ships {
				want = rulesWithout(want, "kongplugins", "kongpluginbindings", "kongconsumergroups")
			}
			if !tc.shipsGateway {
				want = rulesWithout(want, gatewayKinds...)
			}
			if !reflect.DeepEqual(rules, want) {
				t.Errorf("cluster permissions\n%v\nwant\n%v", rules, want)
			}
			if got := strings.Contains(examples, `"kind": "KongPluginBinding"`); got != tc.ships {
				t.Errorf("KongPluginBinding example in alm-examples: %v, want %v", got, tc.ships)
			}
			if !strings.Contains(examples, `"kind": "KongService"`) {
				t.Error("the KongService example is missing")
			}
		})
	}
}

func TestCRDsSinceMustNameACRDOfTheDirectory(t *testing.T) {
	p, err := LoadPackage(filepath.Join(root, "hack/bundles/konnect-operator.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p.CRDsSince = map[string]string{"kongplugin.configuration.konghq.com": "1.4.0"}
	err = WriteBundle(root, p, *p.Version("1.2.0"), filepath.Join(t.TempDir(), "b"))
	if err == nil || !strings.Contains(err.Error(), "crdsSince: CRD kongplugin.configuration.konghq.com is not in") {
		t.Errorf("err = %v, want one naming the unknown CRD", err)
	}
	p.CRDsSince = map[string]string{"kongplugins.configuration.konghq.com": "next"}
	if err := p.check(); err == nil || !strings.Contains(err.Error(), "crdsSince[kongplugins.configuration.konghq.com]") {
		t.Errorf("check() = %v, want an error naming the entry", err)
	}
}
