package bundlegen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A version before a field's fieldsSince ships the CRD without the field in its schema; the version named ships it.
// A path that is not in the schema is an error, not a field shipped everywhere.
func TestFieldsSinceFiltersSchemaFields(t *testing.T) {
	p, err := LoadPackage(filepath.Join(root, "hack/bundles/konnect-operator.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	since := p.FieldsSince["kongservices.configuration.konghq.com"]["spec.adopt"]
	if since == "" {
		t.Fatal("the konnect-operator input names no fieldsSince for kongservices spec.adopt")
	}
	for _, tc := range []struct {
		version string
		ships   bool
	}{{"1.4.0", false}, {since, true}} {
		t.Run(tc.version, func(t *testing.T) {
			v := *p.Version("1.2.0")
			v.Version, v.Replaces, v.SkipRange = tc.version, "konnect-operator.v1.2.0", ""
			dir := filepath.Join(t.TempDir(), tc.version)
			if err := WriteBundle(root, p, v, dir); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(filepath.Join(dir, "manifests", "configuration.konghq.com_kongservices.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(string(data), "spec.adopt is immutable"); got != tc.ships {
				t.Errorf("%s ships spec.adopt in its KongService CRD: %t, want %t", tc.version, got, tc.ships)
			}
		})
	}

	p.FieldsSince["kongservices.configuration.konghq.com"] = map[string]string{"spec.adopted": "1.5.0"}
	v := *p.Version("1.2.0")
	if err := WriteBundle(root, p, v, t.TempDir()); err == nil || !strings.Contains(err.Error(), "no property adopted") {
		t.Errorf("a fieldsSince path not in the schema: %v, want an error naming it", err)
	}
}
