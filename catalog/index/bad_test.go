package index

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/almproject/alm/catalog/bundle"
	"github.com/almproject/alm/catalog/fbc"
	"github.com/almproject/alm/catalog/internal/cattest"
)

// TestBadInput runs the corpus in testdata/bad: each case is a catalog directory with one kind of bad input next to
// a good package. The rule must be reported with the file, the bad bundle excluded (errors) and the good package
// must still resolve, as must the bad package's remaining good bundles.
func TestBadInput(t *testing.T) {
	tests := []struct {
		name     string
		rule     string
		severity bundle.Severity
		file     string            // a substring of the reported path
		resolves map[string]string // package -> bundle it must still resolve to (besides good -> good.v1.1.0)
		prepare  func(t *testing.T, dir string)
	}{
		{name: "malformed-yaml", rule: bundle.RuleMalformedYAML, severity: bundle.SeverityError, file: "manifests/service.yaml"},
		{name: "missing-csv", rule: bundle.RuleMissingCSV, severity: bundle.SeverityError, file: "bad/1.0.0/manifests"},
		{name: "multiple-csvs", rule: bundle.RuleMultipleCSVs, severity: bundle.SeverityError, file: ".clusterserviceversion.yaml"},
		{name: "invalid-semver", rule: bundle.RuleInvalidSemver, severity: bundle.SeverityError, file: "bad.v1.0.clusterserviceversion.yaml"},
		{name: "missing-annotations", rule: bundle.RuleMissingAnnotations, severity: bundle.SeverityError, file: "metadata/annotations.yaml"},
		{name: "missing-package", rule: bundle.RuleMissingPackage, severity: bundle.SeverityError, file: "metadata/annotations.yaml"},
		{name: "missing-channels", rule: bundle.RuleMissingChannels, severity: bundle.SeverityError, file: "metadata/annotations.yaml"},
		{name: "unsupported-mediatype", rule: bundle.RuleUnsupportedMediaType, severity: bundle.SeverityError, file: "metadata/annotations.yaml"},
		{name: "install-strategy", rule: bundle.RuleInstallStrategy, severity: bundle.SeverityError, file: "bad.v1.0.0.clusterserviceversion.yaml"},
		{name: "invalid-skiprange", rule: bundle.RuleInvalidSkipRange, severity: bundle.SeverityError, file: "bad.v1.0.0.clusterserviceversion.yaml"},
		{name: "replaces-self", rule: bundle.RuleReplacesSelf, severity: bundle.SeverityError, file: "bad.v1.0.0.clusterserviceversion.yaml"},
		{name: "nested-directory", rule: bundle.RuleNestedDirectory, severity: bundle.SeverityError, file: "manifests/extra/service.yaml"},
		{name: "invalid-object", rule: bundle.RuleInvalidObject, severity: bundle.SeverityError, file: "manifests/notes.yaml"},
		{name: "bundle-too-large", rule: bundle.RuleBundleTooLarge, severity: bundle.SeverityError, file: "bad/1.0.0",
			prepare: func(t *testing.T, dir string) {
				big := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  big: \"" + strings.Repeat("x", bundle.MaxBundleSize) + "\"\n"
				if err := os.WriteFile(filepath.Join(dir, "bad/1.0.0/manifests/big.yaml"), []byte(big), 0o644); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "olm-owned-crd-missing", rule: bundle.RuleOwnedCRDMissing, severity: bundle.SeverityError, file: "bad"},
		{name: "duplicate-bundle", rule: bundle.RuleDuplicateBundle, severity: bundle.SeverityError, file: "bad/b", resolves: map[string]string{"bad": "bad.v1.0.0"}},
		{name: "duplicate-version", rule: bundle.RuleDuplicateVersion, severity: bundle.SeverityError, file: "bad/b", resolves: map[string]string{"bad": "bad.v1.0.0"}},
		{name: "crd-owned-by-two-packages", rule: bundle.RuleCRDOwnedTwice, severity: bundle.SeverityWarning, file: "other/1.0.0"},
		{name: "replaces-cycle", rule: bundle.RuleReplacesCycle, severity: bundle.SeverityError, file: "fbc/catalog.json", resolves: map[string]string{"cyc": "cyc.v1.0.0"}},
		{name: "dangling-replaces", rule: bundle.RuleDanglingReplaces, severity: bundle.SeverityWarning, file: "fbc/catalog.json", resolves: map[string]string{"dng": "dng.v1.1.0"}},
		{name: "malformed-fbc", rule: bundle.RuleMalformedFBC, severity: bundle.SeverityError, file: "fbc/catalog.json"},
		{name: "fbc-invalid-semver", rule: bundle.RuleInvalidSemver, severity: bundle.SeverityError, file: "fbc/catalog.json", resolves: map[string]string{"sem": "sem.v1.0.0"}},
		{name: "fbc-duplicate-version", rule: bundle.RuleDuplicateVersion, severity: bundle.SeverityError, file: "fbc/catalog.json", resolves: map[string]string{"dup": "dup.v1.0.0"}},
		{name: "missing-bundle", rule: bundle.RuleMissingBundle, severity: bundle.SeverityWarning, file: "fbc/catalog.json", resolves: map[string]string{"mis": "mis.v1.0.0"}},
		{name: "fbc-invalid-skiprange", rule: bundle.RuleInvalidSkipRange, severity: bundle.SeverityError, file: "fbc/catalog.json", resolves: map[string]string{"skr": "skr.v1.0.0"}},
		{name: "default-channel", rule: bundle.RuleDefaultChannel, severity: bundle.SeverityWarning, file: "fbc/catalog.json"},
		{name: "replaces-not-lower", rule: bundle.RuleReplacesNotLower, severity: bundle.SeverityWarning, file: "fbc/catalog.json", resolves: map[string]string{"rnl": "rnl.v2.0.0"}},
		{name: "bundle-not-in-channel", rule: bundle.RuleBundleNotInChannel, severity: bundle.SeverityWarning, file: "fbc/catalog.json", resolves: map[string]string{"orp": "orp.v1.0.0"}},
		{name: "ignored-document", rule: bundle.RuleIgnoredDocument, severity: bundle.SeverityWarning, file: "stray/operator.clusterserviceversion.yaml"},
		{name: "duplicate-package", rule: bundle.RuleDuplicatePackage, severity: bundle.SeverityWarning, file: "fbc/catalog.yaml", resolves: map[string]string{"twice": "twice.v1.0.0"}},
	}
	entries, err := os.ReadDir("../testdata/bad")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(tests) {
		t.Errorf("../testdata/bad has %d cases, the table %d: every case needs a row", len(entries), len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := cattest.CopyDir(t, filepath.Join("../testdata/bad", tt.name))
			if tt.prepare != nil {
				tt.prepare(t, dir)
			}
			contents, err := fbc.LoadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			ix := New(Catalog{Name: "test", Contents: contents})
			var found *bundle.Problem
			for _, p := range ix.Problems() {
				if strings.HasPrefix(p.Rule, tt.rule) && p.Severity == tt.severity {
					found = &p
					break
				}
			}
			if found == nil {
				t.Fatalf("no %s %s problem; got:\n%s", tt.severity, tt.rule, cattest.ProblemLines(ix.Problems()))
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
					t.Fatalf("resolve %s: %v\n%s", pkg, err, cattest.ProblemLines(ix.Problems()))
				}
				if res.Chosen == nil || res.Chosen.Name != name {
					t.Errorf("resolve %s: want %s, got:\n%s", pkg, name, res.Explain())
				}
			}
			if tt.severity == bundle.SeverityError && tt.resolves["bad"] == "" {
				if res, err := ix.Resolve(Request{Package: "bad"}); err == nil && res.Chosen != nil {
					t.Errorf("bad bundle was not excluded:\n%s", res.Explain())
				}
			}
		})
	}
}
