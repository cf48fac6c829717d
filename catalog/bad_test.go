package catalog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyDir copies a testdata directory into a temporary one, so cases can be changed (e.g. made too large).
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestBadInput runs the corpus in testdata/bad: each case is a catalog directory with one kind of bad input next to
// a good package. The rule must be reported with the file, the bad bundle excluded (errors) and the good package
// must still resolve, as must the bad package's remaining good bundles.
func TestBadInput(t *testing.T) {
	tests := []struct {
		name     string
		rule     string
		severity Severity
		file     string            // a substring of the reported path
		resolves map[string]string // package -> bundle it must still resolve to (besides good -> good.v1.1.0)
		prepare  func(t *testing.T, dir string)
	}{
		{name: "malformed-yaml", rule: RuleMalformedYAML, severity: SeverityError, file: "manifests/service.yaml"},
		{name: "missing-csv", rule: RuleMissingCSV, severity: SeverityError, file: "bad/1.0.0/manifests"},
		{name: "multiple-csvs", rule: RuleMultipleCSVs, severity: SeverityError, file: ".clusterserviceversion.yaml"},
		{name: "invalid-semver", rule: RuleInvalidSemver, severity: SeverityError, file: "bad.v1.0.clusterserviceversion.yaml"},
		{name: "missing-annotations", rule: RuleMissingAnnotations, severity: SeverityError, file: "metadata/annotations.yaml"},
		{name: "missing-package", rule: RuleMissingPackage, severity: SeverityError, file: "metadata/annotations.yaml"},
		{name: "missing-channels", rule: RuleMissingChannels, severity: SeverityError, file: "metadata/annotations.yaml"},
		{name: "unsupported-mediatype", rule: RuleUnsupportedMediaType, severity: SeverityError, file: "metadata/annotations.yaml"},
		{name: "install-strategy", rule: RuleInstallStrategy, severity: SeverityError, file: "bad.v1.0.0.clusterserviceversion.yaml"},
		{name: "invalid-skiprange", rule: RuleInvalidSkipRange, severity: SeverityError, file: "bad.v1.0.0.clusterserviceversion.yaml"},
		{name: "replaces-self", rule: RuleReplacesSelf, severity: SeverityError, file: "bad.v1.0.0.clusterserviceversion.yaml"},
		{name: "nested-directory", rule: RuleNestedDirectory, severity: SeverityError, file: "manifests/extra/service.yaml"},
		{name: "invalid-object", rule: RuleInvalidObject, severity: SeverityError, file: "manifests/notes.yaml"},
		{name: "bundle-too-large", rule: RuleBundleTooLarge, severity: SeverityError, file: "bad/1.0.0",
			prepare: func(t *testing.T, dir string) {
				big := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  big: \"" + strings.Repeat("x", MaxBundleSize) + "\"\n"
				if err := os.WriteFile(filepath.Join(dir, "bad/1.0.0/manifests/big.yaml"), []byte(big), 0o644); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "olm-owned-crd-missing", rule: RuleOwnedCRDMissing, severity: SeverityError, file: "bad"},
		{name: "duplicate-bundle", rule: RuleDuplicateBundle, severity: SeverityError, file: "bad/b", resolves: map[string]string{"bad": "bad.v1.0.0"}},
		{name: "duplicate-version", rule: RuleDuplicateVersion, severity: SeverityError, file: "bad/b", resolves: map[string]string{"bad": "bad.v1.0.0"}},
		{name: "crd-owned-by-two-packages", rule: RuleCRDOwnedTwice, severity: SeverityError, file: "other/1.0.0"},
		{name: "replaces-cycle", rule: RuleReplacesCycle, severity: SeverityError, file: "fbc/catalog.json", resolves: map[string]string{"cyc": "cyc.v1.0.0"}},
		{name: "dangling-replaces", rule: RuleDanglingReplaces, severity: SeverityWarning, file: "fbc/catalog.json", resolves: map[string]string{"dng": "dng.v1.1.0"}},
		{name: "malformed-fbc", rule: RuleMalformedFBC, severity: SeverityError, file: "fbc/catalog.json"},
		{name: "fbc-invalid-semver", rule: RuleInvalidSemver, severity: SeverityError, file: "fbc/catalog.json", resolves: map[string]string{"sem": "sem.v1.0.0"}},
		{name: "fbc-duplicate-version", rule: RuleDuplicateVersion, severity: SeverityError, file: "fbc/catalog.json", resolves: map[string]string{"dup": "dup.v1.0.0"}},
		{name: "missing-bundle", rule: RuleMissingBundle, severity: SeverityWarning, file: "fbc/catalog.json", resolves: map[string]string{"mis": "mis.v1.0.0"}},
		{name: "fbc-invalid-skiprange", rule: RuleInvalidSkipRange, severity: SeverityError, file: "fbc/catalog.json", resolves: map[string]string{"skr": "skr.v1.0.0"}},
		{name: "default-channel", rule: RuleDefaultChannel, severity: SeverityWarning, file: "fbc/catalog.json"},
		{name: "replaces-not-lower", rule: RuleReplacesNotLower, severity: SeverityWarning, file: "fbc/catalog.json", resolves: map[string]string{"rnl": "rnl.v2.0.0"}},
		{name: "bundle-not-in-channel", rule: RuleBundleNotInChannel, severity: SeverityWarning, file: "fbc/catalog.json", resolves: map[string]string{"orp": "orp.v1.0.0"}},
		{name: "ignored-document", rule: RuleIgnoredDocument, severity: SeverityWarning, file: "stray/operator.clusterserviceversion.yaml"},
		{name: "duplicate-package", rule: RuleDuplicatePackage, severity: SeverityWarning, file: "fbc/catalog.yaml", resolves: map[string]string{"twice": "twice.v1.0.0"}},
	}
	entries, err := os.ReadDir("testdata/bad")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(tests) {
		t.Errorf("testdata/bad has %d cases, the table %d: every case needs a row", len(entries), len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyDir(t, filepath.Join("testdata/bad", tt.name))
			if tt.prepare != nil {
				tt.prepare(t, dir)
			}
			contents, err := LoadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			ix := NewIndex(Catalog{Name: "test", Contents: contents})
			var found *Problem
			for _, p := range ix.Problems() {
				if strings.HasPrefix(p.Rule, tt.rule) && p.Severity == tt.severity {
					found = &p
					break
				}
			}
			if found == nil {
				t.Fatalf("no %s %s problem; got:\n%s", tt.severity, tt.rule, problemLines(ix.Problems()))
			}
			if !strings.Contains(found.Path, tt.file) || !strings.HasPrefix(found.Path, dir) {
				t.Errorf("problem path %q does not name %q", found.Path, tt.file)
			}
			if found.Detail == "" {
				t.Errorf("problem without detail: %s", found)
			}
			want := map[string]string{"good": "good.v1.1.0"}
			for k, v := range tt.resolves {
				want[k] = v
			}
			for pkg, name := range want {
				res, err := ix.Resolve(Request{Package: pkg})
				if err != nil {
					t.Fatalf("resolve %s: %v\n%s", pkg, err, problemLines(ix.Problems()))
				}
				if res.Chosen == nil || res.Chosen.Name != name {
					t.Errorf("resolve %s: want %s, got:\n%s", pkg, name, res.Explain())
				}
			}
			if tt.severity == SeverityError && tt.resolves["bad"] == "" {
				if res, err := ix.Resolve(Request{Package: "bad"}); err == nil && res.Chosen != nil {
					t.Errorf("bad bundle was not excluded:\n%s", res.Explain())
				}
			}
		})
	}
}

func problemLines(ps []Problem) string {
	var sb strings.Builder
	for _, p := range ps {
		sb.WriteString("  " + p.String() + "\n")
	}
	return sb.String()
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
