package deprecation

import (
	"strings"
	"testing"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
)

func entry(schema, name, msg string) declcfg.DeprecationEntry {
	return declcfg.DeprecationEntry{Reference: declcfg.PackageScopedReference{Schema: schema, Name: name}, Message: msg}
}

func TestOf(t *testing.T) {
	sets, problems := Index([]Doc{
		{Deprecation: declcfg.Deprecation{Package: "p", Entries: []declcfg.DeprecationEntry{
			entry(declcfg.SchemaChannel, "alpha", "alpha ends"), entry(declcfg.SchemaBundle, "p.v1", "p.v1 is broken"),
			entry("olm.bogus", "x", ""), entry(declcfg.SchemaBundle, "", "no name"),
		}}, Path: "d.yaml"},
		{Deprecation: declcfg.Deprecation{Package: "p", Entries: []declcfg.DeprecationEntry{entry(declcfg.SchemaPackage, "", "")}}, Path: "e.yaml"},
		{Deprecation: declcfg.Deprecation{Package: "q"}, Path: "f.yaml"},
		{Deprecation: declcfg.Deprecation{}, Path: "g.yaml"},
	})
	if len(problems) != 3 || !strings.Contains(problems[0].String(), "entries[2] is ignored") || !strings.Contains(problems[1].String(), "entries[3] is ignored: reference olm.bundle names nothing") ||
		!strings.Contains(problems[2].String(), "without a package") {
		t.Errorf("problems: %v", problems)
	}
	for _, tc := range []struct {
		pkg, channel, bundle string
		want                 string
	}{
		{"p", "alpha", "p.v1", "bundle p.v1 deprecated: p.v1 is broken; channel alpha deprecated: alpha ends; package deprecated: deprecated"},
		{"p", "stable", "p.v2", "package deprecated: deprecated"},
		{"q", "stable", "q.v1", ""},
		{"r", "stable", "r.v1", ""}, // no deprecations at all: a nil Set
	} {
		if got := sets[tc.pkg].Of(tc.channel, tc.bundle).Message(); got != tc.want {
			t.Errorf("%s %s %s: %q, want %q", tc.pkg, tc.channel, tc.bundle, got, tc.want)
		}
	}
}
