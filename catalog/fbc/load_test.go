package fbc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	opv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/operator-framework/operator-registry/alpha/property"

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

// LoadFS parses files concurrently, and its result is the one a parse of the files one after another in lexical
// order gives, whatever the document limit: the same documents, from the same files, in the same order, and the
// problem of the limit in the same file.
func TestLoadFSConcurrentIsSequential(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	fsys, total := fstest.MapFS{}, 0
	for f := range 12 {
		var docs strings.Builder
		for d := range f%5 + 1 {
			fmt.Fprintf(&docs, `{"schema":"olm.package","name":"p%02d-%d"}`+"\n", f, d)
			total++
		}
		fsys[fmt.Sprintf("d%d/f%02d.json", f%3, f)] = &fstest.MapFile{Data: []byte(docs.String())}
	}
	for limit := 1; limit <= total+1; limit++ {
		opts := LoadOptions{MaxDocuments: limit}
		want, n := &Contents{}, 0
		opts.documents = &n
		_ = fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || n > limit {
				return err
			}
			want.Add(LoadWith(bytes.NewReader(fsys[path].Data), "img:"+path, opts))
			return nil
		})
		for range 3 {
			got, err := LoadFSWith(fsys, "img:", LoadOptions{MaxDocuments: limit})
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("limit %d: LoadFS gave %d packages, problems %+v (%v); one file after another: %d packages, problems %+v",
					limit, len(got.Packages), got.Problems, err, len(want.Packages), want.Problems)
			}
		}
	}
}

// JSON documents are decoded in one pass (fastJSON), YAML ones by the Kubernetes decoder (encoding/json after
// conversion): both read the same documents alike, every property ALM keeps included, field names in any case.
func TestLoadJSONAsYAML(t *testing.T) {
	csv := `{"description":"long \"quoted\" text","displayName":"P Operator",` +
		`"annotations":{"olm.skipRange":"<1.1.0","OLM.SKIPRANGE":"x","alm-examples":"[{\"kind\":\"A\"}]"},` +
		`"crdDescriptions":{"owned":[{"name":"as.p.example.com","version":"v1","kind":"A","displayName":"A","description":"x",` +
		`"specDescriptors":[{"path":"size","x-descriptors":["urn:x"]}]}],"required":[{"Name":"bs.q.example.com","version":"v1","kind":"B"}]},` +
		`"installModes":[{"type":"AllNamespaces","supported":true}],"minKubeVersion":"1.25.0"}`
	docs := []string{
		`{"schema":"olm.package","name":"p","defaultChannel":"stable","icon":{"base64data":"aWNvbg==","mediatype":"image/png"},"description":"d"}`,
		`{"Schema":"olm.channel","Package":"p","NAME":"stable","entries":[{"name":"p.v1.0.0"},{"name":"p.v1.1.0","replaces":"p.v1.0.0","skips":["p.v0.9.0"],"skipRange":"<1.1.0"}]}`,
		`{"schema":"olm.bundle","name":"p.v1.1.0","package":"p","image":"example.com/p@sha256:` + strings.Repeat("a", 64) + `","properties":[` +
			`{"type":"olm.package","value":{"packageName":"p","version":"1.1.0"}},` +
			`{"value":{"group":"p.example.com","version":"v1","kind":"A"},"type":"olm.gvk"},` +
			`{"type":"olm.gvk.required","value":{"group":"q.example.com","version":"v1","kind":"B"}},` +
			`{"type":"olm.package.required","value":{"packageName":"q","versionRange":">=1.0.0"}},` +
			`{"type":"olm.bundle.mediatype","value":"plain+v0"},` +
			`{"type":"olm.csv.metadata","value":` + csv + `}],` +
			`"relatedImages":[{"name":"m","image":"example.com/m:1"}]}`,
		`{"schema":"olm.deprecations","package":"p","entries":[{"reference":{"schema":"olm.bundle","name":"p.v1.0.0"},"message":"old"}]}`,
		`{"schema":"example.com.other","name":"x","data":[1,2.5,true,null,{"a":"\u00e9"}]}`,
		`{"schema":"olm.bundle","name":"p.v1.2.0","package":"p","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.2.0"}},` +
			`{"type":"olm.csv.metadata","value":{"displayName":"P","crdDescriptions":{"owned":[{"name":5}]}}}]}`,
		`{"schema":"olm.bundle","name":"p.v1.3.0","package":"p","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.3.0"}},` +
			`{"type":"olm.csv.metadata","value":{"annotations":{"olm.skipRange":true}}}]}`,
		`null`,
		`{"schema":"olm.package","name":"last"}`,
	}
	got := Load(strings.NewReader(strings.Join(docs, "\n")), "f")
	want := Load(strings.NewReader("---\n"+strings.Join(docs, "\n---\n")), "f")
	if len(got.Packages) != 2 || len(got.Bundles) != 1 || got.Bundles[0].Metadata == nil || got.Bundles[0].Metadata.DisplayName != "P Operator" ||
		len(got.Bundles[0].Metadata.CRDs.Owned) != 1 || len(got.Bundles[0].Metadata.CRDs.Required) != 1 || len(got.Channels) != 1 {
		t.Fatalf("JSON documents: %+v", got)
	}
	problems := func(c *Contents) (out []string) { // their details are the decoders' own words
		for _, p := range c.Problems {
			out = append(out, p.Rule+" "+p.Bundle+" "+string(p.Severity))
		}
		return out
	}
	if g, w := problems(got), problems(want); !reflect.DeepEqual(g, w) || len(g) != 3 {
		t.Errorf("JSON documents have the problems %q (%+v), the same as YAML documents %q (%+v)", g, got.Problems, w, want.Problems)
	}
	got.Problems, want.Problems = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("JSON documents read as\n%+v\nthe same as YAML documents as\n%+v", got, want)
	}
	var full property.CSVMetadata // what encoding/json makes of the whole value
	if err := json.Unmarshal([]byte(csv), &full); err != nil {
		t.Fatal(err)
	}
	md := got.Bundles[0].Metadata
	crd := func(d opv1alpha1.CRDDescription) opv1alpha1.CRDDescription {
		return opv1alpha1.CRDDescription{Name: d.Name, Version: d.Version, Kind: d.Kind, DisplayName: d.DisplayName}
	}
	if md.DisplayName != full.DisplayName || md.SkipRange != full.Annotations["olm.skipRange"] ||
		!reflect.DeepEqual(md.CRDs.Owned, []opv1alpha1.CRDDescription{crd(full.CustomResourceDefinitions.Owned[0])}) ||
		!reflect.DeepEqual(md.CRDs.Required, []opv1alpha1.CRDDescription{crd(full.CustomResourceDefinitions.Required[0])}) {
		t.Errorf("olm.csv.metadata kept as %+v; encoding/json reads %+v", md, full)
	}
}

// The files LoadFS parses at once decode one YAML file at a time (LoadOptions.yaml): a YAML file waits while another
// holds the slot; a JSON file does not.
func TestLoadYAMLOneAtATime(t *testing.T) {
	slot := make(chan struct{}, 1)
	slot <- struct{}{} // another file is being decoded as YAML
	load := func(in string) <-chan *Contents {
		done := make(chan *Contents, 1)
		go func() { done <- LoadWith(strings.NewReader(in), "f", LoadOptions{yaml: slot}) }()
		return done
	}
	if c := <-load(`{"schema":"olm.package","name":"j"}`); len(c.Packages) != 1 {
		t.Fatalf("JSON file: %+v", c)
	}
	yaml := load("schema: olm.package\nname: yml\n")
	select {
	case c := <-yaml:
		t.Fatalf("a YAML file was decoded while another held the slot: %+v", c)
	case <-time.After(200 * time.Millisecond):
	}
	<-slot
	if c := <-yaml; len(c.Packages) != 1 {
		t.Fatalf("YAML file: %+v", c)
	}
}
