package migrate

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blang/semver/v4"

	"github.com/almproject/alm/catalog/bundle"
	"github.com/almproject/alm/catalog/fbc"
	"github.com/almproject/alm/catalog/index"
)

const packageManifests = "../testdata/packagemanifests"

// TestMigrate migrates testdata/packagemanifests and loads the result: channels, edges, default channels and the
// v1beta1 CRDs normalized, with no errors.
func TestMigrate(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	res, err := PackageManifests(packageManifests, out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Bundles) != 5 {
		t.Fatalf("wrote %d bundles, want 5: %+v", len(res.Bundles), res.Bundles)
	}
	contents, err := fbc.LoadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	ix := index.New(index.Catalog{Name: "migrated", Contents: contents})
	if bundle.HasErrors(ix.Problems()) {
		t.Fatalf("migrated catalog has errors: %v", ix.Problems())
	}
	assertChannels(t, ix, "widget", "stable", map[string][]string{
		"alpha":  {"widget.v1.2.0", "widget.v1.1.0", "widget.v1.0.0"},
		"stable": {"widget.v1.1.0", "widget.v1.0.0"},
	})
	assertChannels(t, ix, "gadget", "beta", map[string][]string{"beta": {"gadget.v0.2.0", "gadget.v0.1.0"}})

	// 1.1.0 upgrades to 1.2.0 by the skips edge, 1.0.0 by replaces; the multi-document file became two objects.
	edges := ix.UpgradesFrom("widget", semver.MustParse("1.1.0"), "")
	if len(edges) != 1 || edges[0].Kind != index.EdgeSkips || edges[0].Entry.Bundle.Name != "widget.v1.2.0" || edges[0].Channel != "alpha" {
		t.Errorf("upgrades from widget 1.1.0: %+v", edges)
	}
	edges = ix.UpgradesFrom("widget", semver.MustParse("1.0.0"), "")
	if len(edges) != 3 {
		t.Errorf("upgrades from widget 1.0.0: %+v, want 1.1.0 (stable and alpha) and 1.2.0 (alpha)", edges)
	}
	m, err := ix.Bundle("widget", "widget.v1.1.0").Manifests()
	if err != nil || len(m.Objects) != 2 {
		t.Fatalf("widget 1.1.0 manifests: %v, %+v", err, m)
	}
	m, err = ix.Bundle("gadget", "gadget.v0.2.0").Manifests()
	if err != nil || len(m.CRDs) != 1 || m.CRDs[0].APIVersion != "apiextensions.k8s.io/v1" {
		t.Fatalf("gadget 0.2.0 CRDs: %v, %+v", err, m)
	}
}

func assertChannels(t *testing.T, ix *index.Index, pkg, def string, want map[string][]string) {
	t.Helper()
	ps := ix.Package(pkg)
	if len(ps) != 1 {
		t.Fatalf("package %s: %d in the index", pkg, len(ps))
	}
	if ps[0].DefaultChannel != def {
		t.Errorf("package %s: default channel %q, want %q", pkg, ps[0].DefaultChannel, def)
	}
	if len(ps[0].Channels) != len(want) {
		t.Errorf("package %s: channels %v, want %v", pkg, ps[0].ChannelNames(), want)
	}
	for name, bundles := range want {
		ch := ps[0].Channel(name)
		if ch == nil {
			t.Errorf("package %s: no channel %s", pkg, name)
			continue
		}
		var got []string
		for _, e := range ch.Entries {
			got = append(got, e.Bundle.Name)
		}
		if strings.Join(got, " ") != strings.Join(bundles, " ") {
			t.Errorf("package %s channel %s: %v, want %v", pkg, name, got, bundles)
		}
	}
}

// TestMigrateRefuses checks each refusal names the file and the rule, and that nothing is written.
func TestMigrateRefuses(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(t *testing.T, dir string) // on a copy of testdata/packagemanifests
		rule   string
		path   string // suffix of the problem's path
		detail string
	}{
		{name: "missing package manifest", rule: RuleMissingPackageManifest, path: "/widget",
			edit: func(t *testing.T, dir string) { remove(t, dir, "widget/widget.package.yaml") }},
		{name: "currentCSV does not exist", rule: RuleMissingCurrentCSV, path: "widget.package.yaml", detail: "widget.v9.9.9",
			edit: func(t *testing.T, dir string) {
				replaceIn(t, filepath.Join(dir, "widget/widget.package.yaml"), "currentCSV: widget.v1.2.0", "currentCSV: widget.v9.9.9")
			}},
		{name: "two CSVs with one version", rule: RuleDuplicateCSV, path: "widget.v1.2.0.clusterserviceversion.yaml", detail: "version 1.1.0",
			edit: func(t *testing.T, dir string) {
				replaceIn(t, filepath.Join(dir, "widget/1.2.0/widget.v1.2.0.clusterserviceversion.yaml"), "version: 1.2.0", "version: 1.1.0")
			}},
		{name: "default channel not declared", rule: RuleInvalidPackageManifest, path: "widget.package.yaml", detail: "defaultChannel",
			edit: func(t *testing.T, dir string) {
				replaceIn(t, filepath.Join(dir, "widget/widget.package.yaml"), "defaultChannel: stable", "defaultChannel: fast")
			}},
		{name: "version directory without CSV", rule: bundle.RuleMissingCSV, path: "widget/1.0.0",
			edit: func(t *testing.T, dir string) {
				remove(t, dir, "widget/1.0.0/widget.v1.0.0.clusterserviceversion.yaml")
			}},
		{name: "package directory without its manifest", rule: RuleMissingPackageManifest, path: "/in",
			edit: func(t *testing.T, dir string) {
				remove(t, dir, "gadget")
				remove(t, dir, "widget/widget.package.yaml")
				remove(t, dir, "README.md")
				for _, e := range []string{"1.0.0", "1.1.0", "1.2.0"} {
					if err := os.Rename(filepath.Join(dir, "widget", e), filepath.Join(dir, e)); err != nil {
						t.Fatal(err)
					}
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := filepath.Join(t.TempDir(), "in")
			copyTree(t, packageManifests, in)
			tt.edit(t, in)
			out := filepath.Join(t.TempDir(), "out")
			_, err := PackageManifests(in, out, Options{})
			var me *Error
			if !errors.As(err, &me) {
				t.Fatalf("err = %v, want a Error", err)
			}
			found := false
			for _, p := range me.Problems {
				found = found || (p.Rule == tt.rule && strings.HasSuffix(p.Path, tt.path) && strings.Contains(p.Detail, tt.detail) && p.Hint != "")
			}
			if !found {
				t.Errorf("no %s problem at *%s mentioning %q with a hint: %v", tt.rule, tt.path, tt.detail, err)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("%s was written", out)
			}
		})
	}
}

// TestMigrateForce: an existing OUT/<package> is refused, then replaced with --force (stale files removed).
func TestMigrateForce(t *testing.T) {
	out := t.TempDir()
	stale := filepath.Join(out, "widget", "0.0.1", "manifests", "stale.yaml")
	if err := writeMigrated(stale, []byte("kind: x\n")); err != nil {
		t.Fatal(err)
	}
	_, err := PackageManifests(packageManifests, out, Options{})
	if err == nil || !strings.Contains(err.Error(), RuleOutputExists) || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("err = %v, want %s", err, RuleOutputExists)
	}
	if _, err := PackageManifests(packageManifests, out, Options{Force: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("--force kept %s", stale)
	}
	if _, err := PackageManifests(packageManifests, filepath.Join(packageManifests, "out"), Options{Force: true}); err == nil ||
		!strings.Contains(err.Error(), "overlap") {
		t.Errorf("OUT inside DIR: err = %v", err)
	}
}

// TestMigrateNotInChannel: a CSV no channel reaches is left out with a warning.
func TestMigrateNotInChannel(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in")
	copyTree(t, packageManifests+"/gadget", in)
	replaceIn(t, filepath.Join(in, "0.2.0/gadget.v0.2.0.clusterserviceversion.yaml"), "replaces: gadget.v0.1.0", "replaces: gadget.v0.0.9")
	res, err := PackageManifests(in, filepath.Join(t.TempDir(), "out"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Bundles) != 1 || len(res.Problems) != 1 || res.Problems[0].Rule != RuleNotInChannel ||
		!strings.HasSuffix(res.Problems[0].Path, "gadget.v0.1.0.clusterserviceversion.yaml") {
		t.Errorf("bundles %+v, problems %v", res.Bundles, res.Problems)
	}
}

func remove(t *testing.T, dir, rel string) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(dir, rel)); err != nil {
		t.Fatal(err)
	}
}

func replaceIn(t *testing.T, path, old, replacement string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(data), old) {
		t.Fatalf("%s: %v (or no %q in it)", path, err, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), old, replacement, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return writeMigrated(filepath.Join(to, rel), data)
	})
	if err != nil {
		t.Fatal(err)
	}
}
