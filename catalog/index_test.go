package catalog

import (
	"reflect"
	"strings"
	"testing"
)

func TestReplacesCycle(t *testing.T) {
	mk := func(spec string) []*Entry {
		// "a<b b<c c" : a replaces b ...
		var out []*Entry
		for _, f := range strings.Fields(spec) {
			name, rep, _ := strings.Cut(f, "<")
			out = append(out, &Entry{Bundle: &Bundle{Name: name}, Replaces: rep})
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
			for _, e := range replacesCycle(mk(tt.spec), map[*Bundle]bool{}) {
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
		severity Severity
		bundles  []string // bundles left in package p, highest first
		channels map[string][]string
	}{
		{name: "clean", docs: pkgDoc + ch("stable", `{"name":"p.v1.0.0"},{"name":"p.v1.1.0","replaces":"p.v1.0.0"}`) + bundleDoc("p", "1.0.0") + bundleDoc("p", "1.1.0"),
			bundles: []string{"p.v1.1.0", "p.v1.0.0"}, channels: map[string][]string{"stable": {"p.v1.1.0", "p.v1.0.0"}}},
		{name: "cycle", docs: pkgDoc + ch("stable", `{"name":"p.v1.0.0"},{"name":"p.v1.1.0","replaces":"p.v1.2.0"},{"name":"p.v1.2.0","replaces":"p.v1.1.0"}`) + bundleDoc("p", "1.0.0") + bundleDoc("p", "1.1.0") + bundleDoc("p", "1.2.0"),
			rule: RuleReplacesCycle, severity: SeverityError, bundles: []string{"p.v1.0.0"}},
		{name: "dangling", docs: pkgDoc + ch("stable", `{"name":"p.v1.1.0","replaces":"p.v1.0.0"}`) + bundleDoc("p", "1.1.0"),
			rule: RuleDanglingReplaces, severity: SeverityWarning, bundles: []string{"p.v1.1.0"}},
		{name: "invalid skipRange", docs: pkgDoc + ch("stable", `{"name":"p.v1.0.0"},{"name":"p.v1.1.0","skipRange":"not a range"}`) + bundleDoc("p", "1.0.0") + bundleDoc("p", "1.1.0"),
			rule: RuleInvalidSkipRange, severity: SeverityError, bundles: []string{"p.v1.0.0"}},
		{name: "missing bundle", docs: pkgDoc + ch("stable", `{"name":"p.v1.0.0"},{"name":"p.v9.0.0"}`) + bundleDoc("p", "1.0.0"),
			rule: RuleMissingBundle, severity: SeverityWarning, bundles: []string{"p.v1.0.0"}, channels: map[string][]string{"stable": {"p.v1.0.0"}}},
		{name: "duplicate version", docs: pkgDoc + ch("stable", `{"name":"p.v1.0.0"}`) + bundleDoc("p", "1.0.0") + strings.Replace(bundleDoc("p", "1.0.0"), `"name":"p.v1.0.0"`, `"name":"p.again"`, 1),
			rule: RuleDuplicateVersion, severity: SeverityError, bundles: []string{"p.v1.0.0"}},
		{name: "duplicate bundle", docs: pkgDoc + ch("stable", `{"name":"p.v1.0.0"}`) + bundleDoc("p", "1.0.0") + strings.Replace(bundleDoc("p", "1.0.0"), `"version":"1.0.0"`, `"version":"1.0.1"`, 1),
			rule: RuleDuplicateBundle, severity: SeverityError, bundles: []string{"p.v1.0.0"}},
		{name: "not in a channel", docs: pkgDoc + ch("stable", `{"name":"p.v1.0.0"}`) + bundleDoc("p", "1.0.0") + bundleDoc("p", "2.0.0"),
			rule: RuleBundleNotInChannel, severity: SeverityWarning, bundles: []string{"p.v2.0.0", "p.v1.0.0"}},
		{name: "replaces a newer version", docs: pkgDoc + ch("stable", `{"name":"p.v2.0.0"},{"name":"p.v1.0.0","replaces":"p.v2.0.0"}`) + bundleDoc("p", "1.0.0") + bundleDoc("p", "2.0.0"),
			rule: RuleReplacesNotLower, severity: SeverityWarning, bundles: []string{"p.v2.0.0", "p.v1.0.0"}},
		{name: "default channel missing", docs: `{"schema":"olm.package","name":"p","defaultChannel":"gone"}` + "\n" + ch("stable", `{"name":"p.v1.0.0"}`) + bundleDoc("p", "1.0.0"),
			rule: RuleDefaultChannel, severity: SeverityWarning, bundles: []string{"p.v1.0.0"}},
		{name: "kind owned by two packages", docs: pkgDoc + ch("stable", `{"name":"p.v1.0.0"}`) + bundleDoc("p", "1.0.0") +
			`{"schema":"olm.package","name":"q","defaultChannel":"stable"}` + "\n" + `{"schema":"olm.channel","package":"q","name":"stable","entries":[{"name":"q.v1.0.0"}]}` + "\n" +
			strings.ReplaceAll(strings.Replace(bundleDoc("q", "1.0.0"), `"group":"q.example.com"`, `"group":"p.example.com"`, 1), "", ""),
			rule: RuleCRDOwnedTwice, severity: SeverityError, bundles: []string{"p.v1.0.0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := LoadFBC(strings.NewReader(tt.docs), "catalog.json")
			ix := NewIndex(Catalog{Name: "c", Contents: c})
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
	dir := copyDir(t, "testdata/etcd")
	writeFile(t, dir+"/extra.yaml", `schema: olm.channel
package: etcd
name: stable
entries:
- name: etcdoperator.v0.9.2
- name: etcdoperator.v0.9.4
  replaces: etcdoperator.v0.9.2
`)
	c, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	ix := NewIndex(Catalog{Name: "c", Contents: c})
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
	c, err := LoadDir("testdata/bad/replaces-cycle")
	if err != nil {
		t.Fatal(err)
	}
	ix := NewIndex(Catalog{Name: "a", Contents: c}, Catalog{Name: "etcd", Contents: mustLoadDir(t, "testdata/etcd")})
	st := ix.Status("a")
	if st.Bundles != 3 || st.RejectedCount != 2 || len(st.Rejected) != 2 || st.Rejected[0].Rule != RuleReplacesCycle || st.Rejected[0].File == "" {
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

func mustLoadDir(t *testing.T, dir string) *Contents {
	t.Helper()
	c, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
