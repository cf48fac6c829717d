package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const packageManifests = "../../catalog/testdata/packagemanifests"

// Issue 11: migrate the package-manifest fixtures; the output validates and resolves; a second run is refused
// without --force.
func TestCatalogMigrate(t *testing.T) {
	stdout, _, code := run(t, nil, "catalog", "migrate", "--help")
	for _, s := range []string{"package.yaml", "currentCSV", "replaces", "skips", "--force", "OUT/<package>/<spec.version>"} {
		if code != 0 || !strings.Contains(stdout, s) {
			t.Errorf("migrate --help (exit %d) lacks %q", code, s)
		}
	}
	out := filepath.Join(t.TempDir(), "out")
	stdout, stderr, code := run(t, nil, "catalog", "migrate", packageManifests, out)
	if code != 0 {
		t.Fatalf("migrate: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, s := range []string{
		filepath.Join(out, "widget", "1.2.0") + ": widget 1.2.0 (widget.v1.2.0) channels alpha, default stable",
		filepath.Join(out, "widget", "1.0.0") + ": widget 1.0.0 (widget.v1.0.0) channels alpha,stable, default stable",
		filepath.Join(out, "gadget", "0.1.0") + ": gadget 0.1.0 (gadget.v0.1.0) channels beta, default beta",
		"wrote 5 bundle directories to " + out,
	} {
		if !strings.Contains(stdout, s) {
			t.Errorf("stdout lacks %q:\n%s", s, stdout)
		}
	}
	if stdout, stderr, code := run(t, nil, "bundle", "validate", out); code != 0 {
		t.Errorf("bundle validate of the output: exit %d\n%s\n%s", code, stdout, stderr)
	}
	stdout, _, code = run(t, nil, "catalog", "resolve", out, "--package", "widget", "--channel", "alpha", "--from", "1.1.0")
	if code != 0 || !strings.Contains(stdout, "upgrade path: widget.v1.1.0 -> widget.v1.2.0") {
		t.Errorf("resolve from 1.1.0 in alpha (exit %d):\n%s", code, stdout)
	}
	_, stderr, code = run(t, nil, "catalog", "migrate", packageManifests, out)
	if code != 1 || !strings.Contains(stderr, filepath.Join(out, "widget")+": output-exists") || !strings.Contains(stderr, "--force") {
		t.Errorf("second migrate without --force: exit %d\n%s", code, stderr)
	}
	if _, _, code := run(t, nil, "catalog", "migrate", "--force", packageManifests, out); code != 0 {
		t.Errorf("migrate --force: exit %d", code)
	}
}

// A package directory without its package manifest is refused with the directory and the rule; nothing is written.
func TestCatalogMigrateMissingPackageManifest(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in")
	copyTree(t, packageManifests, in)
	if err := os.Remove(filepath.Join(in, "widget", "widget.package.yaml")); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	_, stderr, code := run(t, nil, "catalog", "migrate", in, out)
	want := filepath.Join(in, "widget") + ": missing-package-manifest: no <package>.package.yaml"
	if code != 1 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "nothing written") {
		t.Errorf("exit %d, stderr lacks %q:\n%s", code, want, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("%s was written", out)
	}
}
