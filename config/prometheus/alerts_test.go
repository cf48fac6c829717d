package prometheus_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/almproject/alm/test/promtool"
)

// TestAlertRules runs Prometheus's own rule checks and unit tests on the alerts of prometheusrule.yaml:
// `promtool check rules` (every lint) and `promtool test rules` on tests/*.yaml, with the PrometheusRule's spec as
// the rules file they name. bin/promtool is required (make tools): without it the test fails, it never skips.
func TestAlertRules(t *testing.T) {
	groups, err := promtool.LoadPrometheusRule("prometheusrule.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join("tests", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no promtool test files in tests/ (%v)", err)
	}
	testsEveryAlert(t, groups, files)
	promtool.RunTestFiles(t, groups, files...)
}

// testsEveryAlert fails unless every alert of groups is tested both firing and quiet by files, and every test names
// an alert that exists.
func testsEveryAlert(t *testing.T, groups promtool.RuleGroups, files []string) {
	t.Helper()
	firing, quiet := map[string]bool{}, map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var u promtool.UnitTests
		if err := yaml.UnmarshalStrict(data, &u); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if !slices.Equal(u.RuleFiles, []string{promtool.RulesFile}) {
			t.Errorf("%s: rule_files %v, want [%s] (the PrometheusRule's spec)", f, u.RuleFiles, promtool.RulesFile)
		}
		for _, tg := range u.Tests {
			for _, a := range tg.AlertRuleTests {
				if _, ok := groups.AlertLabels(a.Alertname); !ok {
					t.Errorf("%s: test %q checks alert %s, which prometheusrule.yaml does not have", f, tg.Name, a.Alertname)
				}
				firing[a.Alertname] = firing[a.Alertname] || len(a.ExpAlerts) > 0
				quiet[a.Alertname] = quiet[a.Alertname] || len(a.ExpAlerts) == 0
			}
		}
	}
	for _, alert := range groups.Alerts() {
		if !firing[alert] || !quiet[alert] {
			t.Errorf("alert %s is tested firing: %v, quiet: %v; tests/ must check both", alert, firing[alert], quiet[alert])
		}
	}
}
