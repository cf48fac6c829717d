package deprecation

import (
	"strings"
	"testing"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
)

func entry(schema, name, msg string) declcfg.DeprecationEntry {
	return declcfg.DeprecationEntry{Reference: declcfg.PackageScopedReference{Schema: schema, Name: name}, Message: msg}
}

func TestLongMessagesAreCut(t *testing.T) {
	sets, _ := Index([]Doc{{Deprecation: declcfg.Deprecation{Package: "p", Entries: []declcfg.DeprecationEntry{
		entry(declcfg.SchemaPackage, "", strings.Repeat("x", 100000))}}}})
	if got := sets["p"].Package; len(got) > MaxMessage+len(" …") || !strings.HasSuffix(got, " …") {
		t.Errorf("message of %d bytes kept", len(got))
	}
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

// TestDocsReadBack: what Docs renders, Index reads back the same.
func TestDocsReadBack(t *testing.T) {
	s := &Set{Package: "gone", Channels: map[string]string{"b": "2", "a": "1"}, Bundles: map[string]string{"p.v1": "x"}}
	docs := s.Docs("p")
	if len(docs) != 1 || len(docs[0].Entries) != 4 || docs[0].Entries[1].Reference.Name != "a" || docs[0].Schema != declcfg.SchemaDeprecation {
		t.Fatalf("Docs = %+v", docs)
	}
	back, problems := Index([]Doc{{Deprecation: docs[0]}})
	if len(problems) > 0 || back["p"].Of("b", "p.v1").Message() != s.Of("b", "p.v1").Message() {
		t.Errorf("read back %+v (%v)", back["p"], problems)
	}
	if (&Set{}).Docs("p") != nil || (*Set)(nil).Docs("p") != nil {
		t.Error("an empty set renders a document")
	}
}
