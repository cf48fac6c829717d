package bundlegen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Versions before a crdsBefore entry are generated from its frozen copy of the CRDs: 1.6.0 dropped the rule that
// refused a controlPlaneRef into another namespace (a type every CRD shares), and 1.5.0's bundle still has it, while
// 1.6.0's has not. The entries of crdsSince and fieldsSince are still checked against crdDirectory.
func TestCRDsBeforeKeepsEarlierBundlesAsPublished(t *testing.T) {
	p, err := LoadPackage(filepath.Join(root, "hack/bundles/konnect-operator.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const rule = "cross-namespace references are not supported: leave"
	for version, want := range map[string]bool{"1.5.0": true, "1.6.0": false} {
		dir := filepath.Join(t.TempDir(), version)
		if err := WriteBundle(root, p, *p.Version(version), dir); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(dir, "manifests", "configuration.konghq.com_kongservices.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(data), rule); got != want {
			t.Errorf("%s: KongService CRD refuses a cross-namespace controlPlaneRef: %v, want %v", version, got, want)
		}
		_, err = os.Stat(filepath.Join(dir, "manifests", "configuration.konghq.com_kongreferencegrants.yaml"))
		if got := err == nil; got == want {
			t.Errorf("%s ships the KongReferenceGrant CRD: %v, want %v", version, got, !want)
		}
	}
	p.FieldsSince["kongupstreams.configuration.konghq.com"] = map[string]string{"spec.adopted": "1.6.0"}
	if err := WriteBundle(root, p, *p.Version("1.5.0"), t.TempDir()); err == nil || !strings.Contains(err.Error(), "no property adopted") {
		t.Errorf("a fieldsSince path not in crdDirectory, for a frozen version: %v, want an error naming it", err)
	}
}
