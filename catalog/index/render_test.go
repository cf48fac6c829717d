package index

import (
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/operator-framework/operator-registry/alpha/declcfg"

	"github.com/almproject/alm/catalog/fbc"
	"github.com/almproject/alm/catalog/internal/cattest"
)

// TestRenderIsReadByOLM renders the etcd bundles as a File-Based Catalog and reads it back with operator-registry's
// codec and model: what almctl renders, OLM tooling accepts.
func TestRenderIsReadByOLM(t *testing.T) {
	ix := loadEtcdIndex(t)
	cfg, err := ix.DeclarativeConfig("")
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"json", "yaml"} {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			if err := fbc.Write(cfg, format, &buf); err != nil {
				t.Fatal(err)
			}
			back, err := declcfg.LoadReader(&buf)
			if err != nil {
				t.Fatal(err)
			}
			m, err := declcfg.ConvertToModel(*back)
			if err != nil {
				t.Fatalf("operator-registry rejects the rendered catalog: %v", err)
			}
			pkg := m["etcd"]
			if pkg == nil || pkg.DefaultChannel.Name != "singlenamespace-alpha" {
				t.Fatalf("model: %+v", m)
			}
			head, err := pkg.DefaultChannel.Head()
			if err != nil || head.Name != "etcdoperator.v0.9.4" || head.Replaces != "etcdoperator.v0.9.2" {
				t.Errorf("head %v %v", head, err)
			}
			if len(back.Bundles) != 2 || len(back.Bundles[0].Objects) != 4 {
				t.Errorf("bundles %d, objects %d", len(back.Bundles), len(back.Bundles[0].Objects))
			}
		})
	}
	if err := fbc.Write(cfg, "xml", &bytes.Buffer{}); err == nil {
		t.Error("unknown format accepted")
	}
}

func TestWriteMermaid(t *testing.T) {
	ix := New(Catalog{Name: "c", Contents: fbcContents(t, "p", "stable",
		"stable: 1.0.0, 1.1.0<1.0.0, 1.2.0<1.0.0~1.1.0, 2.0.0<1.2.0@>=1.0.0 <2.0.0")})
	var buf bytes.Buffer
	if err := ix.WriteMermaid(&buf, "p"); err != nil {
		t.Fatal(err)
	}
	got := buf.String()
	for _, want := range []string{
		"flowchart LR\n",
		`subgraph c0_0["stable (default)"]`,
		`c0_0_n3["p.v1.0.0 1.0.0"]`,
		"c0_0_n3 -- replaces --> c0_0_n2",                 // 1.1.0 replaces 1.0.0
		"c0_0_n2 -. skips .-> c0_0_n1",                    // 1.2.0 skips 1.1.0
		`c0_0_n3 ==>|"skipRange >=1.0.0 <2.0.0"| c0_0_n0`, // 2.0.0 skipRange covers 1.0.0
	} {
		if !strings.Contains(got, want) {
			t.Errorf("graph lacks %q:\n%s", want, got)
		}
	}
	if err := ix.WriteMermaid(&buf, "nope"); err == nil {
		t.Error("unknown package accepted")
	}
}

// TestWriteCatalogMatchesDeclarativeConfig: WriteCatalog (concurrent, with the fast JSON path for bundle objects)
// writes exactly what fbc.Write writes for DeclarativeConfig, in both formats, on every bundle of testdata.
func TestWriteCatalogMatchesDeclarativeConfig(t *testing.T) {
	for _, dir := range []string{"../testdata/etcd", "../testdata/sdk", "../testdata/realworld"} {
		for _, forRender := range []bool{false, true} {
			contents, err := fbc.LoadDirWith(dir, fbc.LoadOptions{ForRender: forRender})
			if err != nil {
				t.Fatal(err)
			}
			ix := New(Catalog{Name: dir, Contents: contents})
			cfg, err := ix.DeclarativeConfig("")
			if err != nil {
				t.Fatal(err)
			}
			for _, format := range []string{"json", "yaml"} {
				var want, got bytes.Buffer
				if err := fbc.Write(cfg, format, &want); err != nil {
					t.Fatal(err)
				}
				if err := ix.WriteCatalog("", format, &got); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(want.Bytes(), got.Bytes()) || len(cfg.Bundles) == 0 {
					t.Errorf("%s (ForRender %v, %s): WriteCatalog differs from fbc.Write(DeclarativeConfig) (%d bundles)", dir, forRender, format, len(cfg.Bundles))
				}
			}
		}
	}
}

// TestWriteCatalogRefusesChangedFiles: a catalog loaded for rendering reads its bundles' files again; one changed
// since the load is an error naming it, not a catalog that mixes two versions of a file.
func TestWriteCatalogRefusesChangedFiles(t *testing.T) {
	dir := t.TempDir()
	cattest.CopyTree(t, "../testdata/etcd", dir)
	contents, err := fbc.LoadDirWith(dir, fbc.LoadOptions{ForRender: true})
	if err != nil {
		t.Fatal(err)
	}
	ix := New(Catalog{Name: dir, Contents: contents})
	csv := filepath.Join(dir, "0.9.4", "manifests", "etcdoperator.v0.9.4.clusterserviceversion.yaml")
	cattest.ReplaceIn(t, csv, "name: etcdoperator.v0.9.4", "name: etcdoperator.v0.9.5")
	err = ix.WriteCatalog("", "json", io.Discard)
	if err == nil || !strings.Contains(err.Error(), csv+" changed on disk") {
		t.Errorf("err = %v, want %s changed on disk", err, csv)
	}
}

// TestRenderPackageDependencies: a bundle directory's metadata/dependencies.yaml is rendered as an
// olm.package.required property, which loads back as the same requirement.
func TestRenderPackageDependencies(t *testing.T) {
	dir := cattest.CopyDir(t, "../testdata/etcd")
	cattest.WriteFile(t, filepath.Join(dir, "0.9.4", "metadata", "dependencies.yaml"),
		"dependencies:\n- type: olm.package\n  value: {packageName: prometheus, version: \">=0.27.0\"}\n")
	c, err := fbc.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := New(Catalog{Name: "etcd", Contents: c}).WriteCatalog("", "json", &buf); err != nil {
		t.Fatal(err)
	}
	if strings.Count(buf.String(), `"olm.package.required"`) != 1 {
		t.Errorf("rendered catalog has %d olm.package.required properties, want 1", strings.Count(buf.String(), `"olm.package.required"`))
	}
	back := fbc.Load(&buf, "rendered.json")
	for _, b := range back.Bundles {
		want := b.Name == "etcdoperator.v0.9.4"
		if got := len(b.RequiresPackages) == 1 && b.RequiresPackages[0].Package == "prometheus" && b.RequiresPackages[0].Range == ">=0.27.0"; got != want {
			t.Errorf("%s loaded back with RequiresPackages %v", b.Name, b.RequiresPackages)
		}
	}
}
