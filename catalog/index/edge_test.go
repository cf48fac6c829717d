package index

import (
	"testing"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/lib/version"

	almv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/bundle"
)

// TestEdgeFrom is the upgrade rule's table: the catalog (index, resolver, graph) and the lifecycle loops
// (controllers/internal/versions) all decide "which version replaces which" with it.
func TestEdgeFrom(t *testing.T) {
	r := semver.MustParseRange(">=1.0.0 <1.5.0")
	up := Upgrade{Version: semver.MustParse("1.5.0"), Replaces: "p.v1.4.0", Skips: []string{"p.v1.3.0"}, SkipRange: r}
	tests := []struct {
		desc, name, version string
		up                  Upgrade
		want                EdgeKind
	}{
		{"replaces", "p.v1.4.0", "1.4.0", up, EdgeReplaces},
		{"skips", "p.v1.3.0", "1.3.0", up, EdgeSkips},
		{"skipRange by version", "p.v1.0.7", "1.0.7", up, EdgeSkipRange},
		{"skipRange without a name", "", "1.0.7", up, EdgeSkipRange},
		{"replaces wins over skipRange", "p.v1.4.0", "1.4.0", up, EdgeReplaces},
		{"outside skipRange and not named", "other", "0.9.0", up, ""},
		{"replaces naming a newer version", "p.v1.4.0", "1.6.0", up, ""},
		{"skips naming a newer version", "p.v1.3.0", "2.0.0", up, ""},
		{"the same version", "p.v1.5.0", "1.5.0", up, ""},
		{"replaces naming the same version", "p.v1.4.0", "1.5.0", up, ""},
		{"an empty name never matches replaces", "", "1.4.0", Upgrade{Version: semver.MustParse("1.5.0")}, ""},
		{"no skipRange", "x", "1.0.0", Upgrade{Version: semver.MustParse("2.0.0"), Replaces: "y"}, ""},
		{"skipRange covering a newer version", "", "3.0.0", Upgrade{Version: semver.MustParse("2.0.0"), SkipRange: semver.MustParseRange("<4.0.0")}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			v := semver.MustParse(tt.version)
			if got := tt.up.EdgeFrom(tt.name, v); got != tt.want {
				t.Errorf("EdgeFrom(%q, %s) = %q, want %q", tt.name, tt.version, got, tt.want)
			}
			e := &Entry{Bundle: &bundle.Bundle{Name: "p.v" + tt.up.Version.String(), Version: tt.up.Version}, Replaces: tt.up.Replaces, Skips: tt.up.Skips, skipRange: tt.up.SkipRange}
			if got := e.UpgradesFrom(tt.name, v); got != (tt.want != "") {
				t.Errorf("Entry.UpgradesFrom(%q, %s) = %v, want %v", tt.name, tt.version, got, tt.want != "")
			}
		})
	}
}

func TestUpgradeOf(t *testing.T) {
	ov := &almv1alpha1.OperatorVersion{Spec: almv1alpha1.OperatorVersionSpec{
		Version: version.OperatorVersion{Version: semver.MustParse("2.0.0")}, Replaces: "p.v1", Skips: []string{"p.v1.5"}, SkipRange: "<2.0.0",
	}}
	if got := UpgradeOf(ov).EdgeFrom("", semver.MustParse("1.2.0")); got != EdgeSkipRange {
		t.Errorf("skipRange edge = %q", got)
	}
	if got := UpgradeOf(ov).EdgeFrom("p.v1.5", semver.MustParse("1.5.0")); got != EdgeSkips {
		t.Errorf("skips edge = %q", got)
	}
	ov.Spec.SkipRange = "not a range"
	if got := UpgradeOf(ov).EdgeFrom("", semver.MustParse("1.2.0")); got != "" {
		t.Errorf("an invalid skipRange gave edge %q", got)
	}
}
