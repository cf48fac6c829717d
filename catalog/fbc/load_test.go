package fbc

import (
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/almproject/alm/catalog/bundle"
	"github.com/almproject/alm/catalog/internal/cattest"
)

func TestLoadFBC(t *testing.T) {
	obj := `{"type":"olm.bundle.object","value":{"data":"eyJhcGlWZXJzaW9uIjoidjEiLCJraW5kIjoiU2VydmljZSIsIm1ldGFkYXRhIjp7Im5hbWUiOiJzdmMifX0="}}`
	tests := []struct {
		name     string
		in       string
		packages int
		channels int
		bundles  int
		rule     string // expected problem rule, "" for none
	}{
		{name: "json stream", in: `{"schema":"olm.package","name":"p","defaultChannel":"s"}
{"schema":"olm.channel","package":"p","name":"s","entries":[{"name":"p.v1.0.0"}]}` + "\n" + cattest.BundleDoc("p", "1.0.0"),
			packages: 1, channels: 1, bundles: 1},
		{name: "yaml documents", in: "schema: olm.package\nname: p\ndefaultChannel: s\n---\nschema: olm.channel\npackage: p\nname: s\nentries:\n- name: p.v1.0.0\n  skipRange: '<1.0.0'\n---\n" +
			"schema: olm.bundle\nname: p.v1.0.0\npackage: p\nimage: example.com/p:1.0.0\nproperties:\n- type: olm.package\n  value: {packageName: p, version: 1.0.0}\n",
			packages: 1, channels: 1, bundles: 1},
		{name: "other schemas are skipped", in: `{"schema":"olm.deprecations","package":"p","entries":[]}` + "\n" + `{"schema":"custom.thing","name":"x"}`},
		{name: "bundle with objects", in: `{"schema":"olm.bundle","name":"p.v1.0.0","package":"p","image":"","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}},` + obj + `]}`, bundles: 1},
		{name: "syntax error keeps earlier documents", in: `{"schema":"olm.package","name":"p","defaultChannel":"s"}` + "\n" + `{"schema": "olm.channel", "name": `, packages: 1, rule: bundle.RuleMalformedFBC},
		{name: "bundle without version", in: `{"schema":"olm.bundle","name":"p.v1","package":"p","properties":[]}`, rule: bundle.RuleInvalidSemver},
		{name: "bundle with bad version", in: strings.Replace(cattest.BundleDoc("p", "1.0.0"), `"version":"1.0.0"`, `"version":"v1"`, 1), rule: bundle.RuleInvalidSemver},
		{name: "bundle without package", in: `{"schema":"olm.bundle","name":"x","properties":[]}`, rule: bundle.RuleMalformedFBC},
		{name: "package without name", in: `{"schema":"olm.package"}`, rule: bundle.RuleMalformedFBC},
		{name: "channel without package", in: `{"schema":"olm.channel","name":"s"}`, rule: bundle.RuleMalformedFBC},
		{name: "kubernetes object", in: "apiVersion: v1\nkind: Service\nmetadata:\n  name: x\n", rule: bundle.RuleIgnoredDocument},
		{name: "package dependency", in: strings.Replace(cattest.BundleDoc("p", "1.0.0"), `"properties":[`,
			`"properties":[{"type":"olm.package.required","value":{"packageName":"etcd","versionRange":">=0.9.0 <1.0.0"}},`, 1), bundles: 1},
		{name: "package dependency with a bad range", in: strings.Replace(cattest.BundleDoc("p", "1.0.0"), `"properties":[`,
			`"properties":[{"type":"olm.package.required","value":{"packageName":"etcd","versionRange":"> = one"}},`, 1), rule: bundle.RuleInvalidDependency},
		{name: "package dependency without a package", in: strings.Replace(cattest.BundleDoc("p", "1.0.0"), `"properties":[`,
			`"properties":[{"type":"olm.package.required","value":{"versionRange":">=1.0.0"}},`, 1), rule: bundle.RuleInvalidDependency},
		{name: "bad property value", in: `{"schema":"olm.bundle","name":"p.v1","package":"p","properties":[{"type":"olm.gvk","value":"nope"}]}`, rule: bundle.RuleMalformedFBC},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Load(strings.NewReader(tt.in), "f.json")
			if len(c.Packages) != tt.packages || len(c.Channels) != tt.channels || len(c.Bundles) != tt.bundles {
				t.Errorf("got %d packages, %d channels, %d bundles; want %d, %d, %d (%v)", len(c.Packages), len(c.Channels), len(c.Bundles),
					tt.packages, tt.channels, tt.bundles, c.Problems)
			}
			if tt.rule == "" && len(c.Problems) > 0 {
				t.Errorf("unexpected problems %v", c.Problems)
			}
			for _, b := range c.Bundles {
				if strings.Contains(tt.name, "dependency") && (len(b.RequiresPackages) != 1 || b.RequiresPackages[0] != (bundle.PackageRequirement{Package: "etcd", Range: ">=0.9.0 <1.0.0"})) {
					t.Errorf("RequiresPackages %v, want etcd >=0.9.0 <1.0.0", b.RequiresPackages)
				}
			}
			if tt.rule != "" && (len(c.Problems) != 1 || c.Problems[0].Rule != tt.rule || c.Problems[0].Path != "f.json") {
				t.Errorf("want one %s problem on f.json, got %v", tt.rule, c.Problems)
			}
		})
	}
}

// LoadFiles reads what LoadFS reads, in the same order, and lets each file go once it is read.
func TestLoadFilesMatchesLoadFSAndDrainsTheMap(t *testing.T) {
	files := map[string][]byte{
		"b/catalog.json": []byte(`{"schema":"olm.package","name":"b"}`),
		"a/catalog.yaml": []byte("schema: olm.package\nname: a\n"),
		"a/README.md":    []byte("not a catalog"),
		"c/broken.json":  []byte(`{"schema":`),
	}
	fsys := fstest.MapFS{}
	for p, data := range files {
		fsys[p] = &fstest.MapFile{Data: data}
	}
	want, err := LoadFS(fsys, "img:")
	if err != nil {
		t.Fatal(err)
	}
	got := LoadFiles(files, "img:")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("LoadFiles = %+v\nLoadFS    = %+v", got, want)
	}
	if len(got.Packages) != 2 || got.Packages[0].Name != "a" || len(got.Problems) != 1 {
		t.Errorf("contents %+v: want packages a, b and one problem (the broken file)", got)
	}
	if len(files) != 1 || files["a/README.md"] == nil {
		t.Errorf("files left in the map: %v; want only the file that is not a catalog", files)
	}
}

// A document over LoadOptions.MaxDocumentBytes ends its file with a problem naming the limit; the documents before
// it stay, and documents each under the limit load however long the file is (the count starts again at each one).
func TestLoadDocumentLimit(t *testing.T) {
	pkg := func(name, pad string) string {
		return `{"schema":"olm.package","name":"` + name + `","pad":"` + pad + `"}` + "\n"
	}
	yamlPkg := func(name, pad string) string {
		return "schema: olm.package\nname: " + name + "\npad: " + pad + "\n---\n"
	}
	small, large := strings.Repeat("a", 100<<10), strings.Repeat("a", 300<<10)
	for _, tc := range []struct {
		name     string
		in       string
		packages int
		problem  bool
	}{
		{"json documents under the limit", strings.Repeat(pkg("p", small), 20), 20, false},
		{"json document over the limit", pkg("p", small) + pkg("q", large) + pkg("r", small), 1, true},
		{"yaml documents under the limit", strings.Repeat(yamlPkg("p", small), 20), 20, false},
		{"yaml document over the limit", yamlPkg("p", small) + yamlPkg("q", large) + yamlPkg("r", small), 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := LoadWith(strings.NewReader(tc.in), "f.json", LoadOptions{MaxDocumentBytes: 256 << 10})
			if len(c.Packages) != tc.packages || (len(c.Problems) > 0) != tc.problem {
				t.Fatalf("%d packages, problems %v; want %d packages, problem %v", len(c.Packages), c.Problems, tc.packages, tc.problem)
			}
			if tc.problem && !strings.Contains(c.Problems[0].Detail, "more than 262144 bytes") {
				t.Errorf("problem %q does not name the limit", c.Problems[0].Detail)
			}
		})
	}
}

// MaxDocuments bounds the documents of one file (Load) and of all files of a catalog together (LoadFS); the
// documents past it are not read, and one problem names the limit.
func TestLoadDocumentCount(t *testing.T) {
	two := func(a, b string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte(`{"schema":"olm.package","name":"` + a + `"}` + "\n" + `{"schema":"olm.package","name":"` + b + `"}`)}
	}
	fsys := fstest.MapFS{"a.json": two("a1", "a2"), "b.json": two("b1", "b2"), "c.json": two("c1", "c2")}
	c, err := LoadFSWith(fsys, "img:", LoadOptions{MaxDocuments: 3})
	if err != nil || len(c.Packages) != 3 || len(c.Problems) != 1 || c.Problems[0].Path != "img:b.json" ||
		!strings.Contains(c.Problems[0].Detail, "more than 3 documents") {
		t.Errorf("LoadFS: %+v, %v; want a1 a2 b1 and one problem in b.json", c, err)
	}
	if c, err := LoadFSWith(fsys, "img:", LoadOptions{MaxDocuments: 6}); err != nil || len(c.Packages) != 6 || len(c.Problems) != 0 {
		t.Errorf("LoadFS under the limit: %+v, %v", c, err)
	}
	one := LoadWith(strings.NewReader(strings.Repeat(`{"schema":"olm.package","name":"p"}`+"\n", 5)), "f.json", LoadOptions{MaxDocuments: 2})
	if len(one.Packages) != 2 || len(one.Problems) != 1 {
		t.Errorf("Load: %+v; want 2 packages and a problem", one)
	}
}
