package index

import (
	"reflect"
	"strings"
	"testing"

	"github.com/almproject/alm/catalog/bundle"
	"github.com/almproject/alm/catalog/fbc"
	"github.com/almproject/alm/catalog/internal/cattest"
)

func TestReplacesCycle(t *testing.T) {
	mk := func(spec string) []*Entry {
		// "a<b b<c c" : a replaces b ...
		var out []*Entry
		for _, f := range strings.Fields(spec) {
			name, rep, _ := strings.Cut(f, "<")
			out = append(out, &Entry{Bundle: &bundle.Bundle{Name: name}, Replaces: rep})
		}
		return out
	}
	tests := []struct {
		spec string
		want []string
	}{
		{"a<b b<c c", nil},
		{"a<b b<a", []string{"a", "b"}},
		{"a<a", []string{"a"}},
		{"x<a a<b b<c c<a", []string{"a", "b", "c"}},
		{"a<b b<c c<b d<missing", []string{"b", "c"}},
		{"", nil},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			var got []string
			for _, e := range replacesCycle(mk(tt.spec), map[*bundle.Bundle]bool{}) {
				got = append(got, e.Bundle.Name)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestGraphRules checks each catalog rule on a small File-Based Catalog: the rule, its severity, and what stays.
func TestGraphRules(t *testing.T) {
	pkgDoc := `{"schema":"olm.package","name":"p","defaultChannel":"stable"}` + "\n"
	ch := func(name, entries string) string {
		return `{"schema":"olm.channel","package":"p","name":"` + name + `","entries":[` + entries + `]}` + "\n"
	}
	tests := []struct {
		name     string
		docs     string
		rule     string
		severity bundle.Severity
		bundles  []string // bundles left in package p, highest first
		channels map[string][]string
	}{
		{name: "clean", docs: pkgDoc + ch("stable", `{"name":"p.v1.0.0"},{"name":"p.v1.1.0","replaces":"p.v1.0.0"}`) + cattest.BundleDoc("p", "1.0.0") + cattest.BundleDoc("p", "1.1.0"),
			bundles: []string{"p.v1.1.0", "p.v1.0.0"}, channels: map[string][]string{"stable": {"p.v1.1.0", "p.v1.0.0"}}},
		{name: "cycle", docs: pkgDoc + ch("stable", `{"name":"p.v1.0.0"},{"name":"p.v1.1.0","replaces":"p.v1.2.0"},{"name":"p.v1.2.0","replaces":"p.v1.1.0"}`) + cattest.BundleDoc("p", "1.0.0") + cattest.BundleDoc("p", "1.1.0") + cattest.BundleDoc("p", "1.2.0"),
			rule: bundle.RuleReplacesCycle, severity: bundle.SeverityError, bundles: []string{"p.v1.0.0"}},
		{name: "dangling", docs: pkgDoc + ch("stable", `{"name":"p.v1.1.0","replaces":"p.v1.0.0"}`) + cattest.BundleDoc("p", "1.1.0"),
			rule: bundle.RuleDanglingReplaces, severity: bundle.SeverityWarning, bundles: []string{"p.v1.1.0"}},
		{name: "invalid skipRange", docs: pkgDoc + ch("stable", `{"name":"p.v1.0.0"},{"name":"p.v1.1.0","skipRange":"not a range"}`) + cattest.BundleDoc("p", "1.0.0") + cattest.BundleDoc("p", "1.1.0"),
			rule: bundle.RuleInvalidSkipRange, severity: bundle.SeverityError, bundles: []string{"p.v1.0.0"}},
		{name: "missing bundle", docs: pkgDoc + ch("stable", `{"name":"p.v1.0.0"},{"name":"p.v9.0.0"}`) + cattest.BundleDoc("p", "1.0.0"),
			rule: bundle.RuleMissingBundle, severity: bundle.SeverityWarning, bundles: []string{"p.v1.0.0"}, channels: map[string][]string{"stable": {"p.v1.0.0"}}},
		{name: "duplicate version", docs: pkgDoc + ch("stable", `{"name":"p.v1.0.0"}`) + cattest.BundleDoc("p", "1.0.0") + strings.Replace(cattest.BundleDoc("p", "1.0.0"), `"name":"p.v1.0.0"`, `"name":"p.again"`, 1),
			rule: bundle.RuleDuplicateVersion, severity: bundle.SeverityError, bundles: []string{"p.v1.0.0"}},
		{name: "duplicate bundle", docs: pkgDoc + ch("stable", `{"name":"p.v1.0.0"}`) + cattest.BundleDoc("p", "1.0.0") + strings.Replace(cattest.BundleDoc("p", "1.0.0"), `"version":"1.0.0"`, `"version":"1.0.1"`, 1),
			rule: bundle.RuleDuplicateBundle, severity: bundle.SeverityError, bundles: []string{"p.v1.0.0"}},
		{name: "not in a channel", docs: pkgDoc + ch("stable", `{"name":"p.v1.0.0"}`) + cattest.BundleDoc("p", "1.0.0") + cattest.BundleDoc("p", "2.0.0"),
			rule: bundle.RuleBundleNotInChannel, severity: bundle.SeverityWarning, bundles: []string{"p.v2.0.0", "p.v1.0.0"}},
		{name: "replaces a newer version", docs: pkgDoc + ch("stable", `{"name":"p.v2.0.0"},{"name":"p.v1.0.0","replaces":"p.v2.0.0"}`) + cattest.BundleDoc("p", "1.0.0") + cattest.BundleDoc("p", "2.0.0"),
			rule: bundle.RuleReplacesNotLower, severity: bundle.SeverityWarning, bundles: []string{"p.v2.0.0", "p.v1.0.0"}},
		{name: "default channel missing", docs: `{"schema":"olm.package","name":"p","defaultChannel":"gone"}` + "\n" + ch("stable", `{"name":"p.v1.0.0"}`) + cattest.BundleDoc("p", "1.0.0"),
			rule: bundle.RuleDefaultChannel, severity: bundle.SeverityWarning, bundles: []string{"p.v1.0.0"}},
		{name: "kind owned by two packages", docs: pkgDoc + ch("stable", `{"name":"p.v1.0.0"}`) + cattest.BundleDoc("p", "1.0.0") +
			`{"schema":"olm.package","name":"q","defaultChannel":"stable"}` + "\n" + `{"schema":"olm.channel","package":"q","name":"stable","entries":[{"name":"q.v1.0.0"}]}` + "\n" +
			strings.ReplaceAll(strings.Replace(cattest.BundleDoc("q", "1.0.0"), `"group":"q.example.com"`, `"group":"p.example.com"`, 1), "", ""),
			rule: bundle.RuleCRDOwnedTwice, severity: bundle.SeverityWarning, bundles: []string{"p.v1.0.0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fbc.Load(strings.NewReader(tt.docs), "catalog.json")
			ix := New(Catalog{Name: "c", Contents: c})
			if tt.rule == "" && len(ix.Problems()) > 0 {
				t.Fatalf("unexpected problems: %v", ix.Problems())
			}
			if tt.rule != "" {
				found := false
				for _, p := range ix.Problems() {
					found = found || p.Rule == tt.rule && p.Severity == tt.severity && p.Path == "catalog.json"
				}
				if !found {
					t.Fatalf("no %s %s on catalog.json in %v", tt.severity, tt.rule, ix.Problems())
				}
			}
			pkgs := ix.Package("p")
			if len(pkgs) != 1 {
				t.Fatalf("package p: %v", pkgs)
			}
			var names []string
			for _, b := range pkgs[0].Bundles {
				names = append(names, b.Name)
			}
			if !reflect.DeepEqual(names, tt.bundles) {
				t.Errorf("bundles %v, want %v", names, tt.bundles)
			}
			for chName, want := range tt.channels {
				var got []string
				for _, e := range pkgs[0].Channel(chName).Entries {
					got = append(got, e.Bundle.Name)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("channel %s: %v, want %v", chName, got, want)
				}
			}
		})
	}
}

// TestBundleDirAndFBCTogether: bundle directories and File-Based Catalog files in one catalog directory merge into
// one package; a channel entry from FBC adds upgrade edges to directory bundles.
func TestBundleDirAndFBCTogether(t *testing.T) {
	dir := cattest.CopyDir(t, "../testdata/etcd")
	cattest.WriteFile(t, dir+"/extra.yaml", `schema: olm.channel
package: etcd
name: stable
entries:
- name: etcdoperator.v0.9.2
- name: etcdoperator.v0.9.4
  replaces: etcdoperator.v0.9.2
`)
	c, err := fbc.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	ix := New(Catalog{Name: "c", Contents: c})
	p := ix.Package("etcd")[0]
	if got := p.ChannelNames(); !reflect.DeepEqual(got, []string{"singlenamespace-alpha", "stable"}) {
		t.Fatalf("channels %v", got)
	}
	if p.DefaultChannel != "singlenamespace-alpha" {
		t.Errorf("default channel %q", p.DefaultChannel)
	}
	res, err := ix.Resolve(Request{Package: "etcd", Channel: "stable", From: "0.9.2"})
	if err != nil || res.Chosen == nil || res.Chosen.Name != "etcdoperator.v0.9.4" {
		t.Fatalf("%v\n%s", err, res.Explain())
	}
}

func TestStatus(t *testing.T) {
	c, err := fbc.LoadDir("../testdata/bad/replaces-cycle")
	if err != nil {
		t.Fatal(err)
	}
	ix := New(Catalog{Name: "a", Contents: c}, Catalog{Name: "etcd", Contents: mustLoadDir(t, "../testdata/etcd")})
	st := ix.Status("a")
	if st.Bundles != 3 || st.RejectedCount != 2 || len(st.Rejected) != 2 || st.Rejected[0].Rule != bundle.RuleReplacesCycle || st.Rejected[0].File == "" {
		t.Errorf("status: %+v", st)
	}
	var names []string
	for _, p := range st.Packages {
		names = append(names, p.Name+"@"+p.LatestVersion)
	}
	if !reflect.DeepEqual(names, []string{"cyc@1.0.0", "good@1.1.0"}) {
		t.Errorf("packages %v", names)
	}
	if st := ix.Status("etcd"); st.Bundles != 2 || st.RejectedCount != 0 || len(st.Packages) != 1 || st.Packages[0].LatestVersion != "0.9.4" {
		t.Errorf("etcd status: %+v", st)
	}
}

func mustLoadDir(t *testing.T, dir string) *fbc.Contents {
	t.Helper()
	c, err := fbc.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
