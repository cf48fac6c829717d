// Package promtool runs the pinned promtool (Prometheus's CLI, built into bin/promtool from hack/tools/promtool) in
// tests: `promtool check rules` and `promtool test rules`, the way the Prometheus ecosystem unit-tests alerts, on the
// rules of a PrometheusRule manifest (config/prometheus) — Prometheus's own rule evaluation, not a copy of it.
package promtool

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/almproject/alm/test/localkube"
)

// Path returns the promtool binary: $ALM_BIN_DIR/promtool, else <repo>/bin/promtool. It fails the test when the
// binary is missing: the alerts are never left untested.
func Path(t testing.TB) string {
	t.Helper()
	dir, err := localkube.BinDir()
	if err != nil {
		t.Fatalf("finding promtool: %v", err)
	}
	p := filepath.Join(dir, "promtool")
	if fi, err := os.Stat(p); err != nil || fi.IsDir() {
		t.Fatalf("promtool not found at %s: run make tools (it builds bin/promtool from hack/tools/promtool), or set ALM_BIN_DIR", p)
	}
	return p
}

// Run runs promtool with args in dir (relative paths in args and in test files are resolved there) and returns its
// combined output; a failure's error carries it too.
func Run(t testing.TB, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), Path(t), args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("promtool %s: %w\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String(), nil
}

// RuleGroups is a Prometheus rules file: what a PrometheusRule's spec holds.
type RuleGroups struct {
	Groups []map[string]any `json:"groups"`
}

// LoadPrometheusRule reads the rule groups of the PrometheusRule manifest at path.
func LoadPrometheusRule(path string) (RuleGroups, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return RuleGroups{}, err
	}
	var doc struct {
		Kind string     `json:"kind"`
		Spec RuleGroups `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return RuleGroups{}, fmt.Errorf("%s: %w", path, err)
	}
	if doc.Kind != "PrometheusRule" || len(doc.Spec.Groups) == 0 {
		return RuleGroups{}, fmt.Errorf("%s: kind %q with %d rule groups, want a PrometheusRule with groups", path, doc.Kind, len(doc.Spec.Groups))
	}
	return doc.Spec, nil
}

// WithoutAnnotations returns the groups with every rule's annotations removed, for tests that check when and for
// which series alerts fire (promtool compares an alert's annotations too when they are present).
func (g RuleGroups) WithoutAnnotations() RuleGroups {
	out := RuleGroups{}
	for _, group := range g.Groups {
		copied := map[string]any{}
		for k, v := range group {
			copied[k] = v
		}
		rules, _ := group["rules"].([]any)
		var stripped []any
		for _, r := range rules {
			rule := map[string]any{}
			for k, v := range r.(map[string]any) {
				if k != "annotations" {
					rule[k] = v
				}
			}
			stripped = append(stripped, rule)
		}
		copied["rules"] = stripped
		out.Groups = append(out.Groups, copied)
	}
	return out
}

// AlertLabels returns the labels the rule of alert adds to its alerts (e.g. severity).
func (g RuleGroups) AlertLabels(alert string) (map[string]string, bool) {
	for _, group := range g.Groups {
		rules, _ := group["rules"].([]any)
		for _, r := range rules {
			rule, _ := r.(map[string]any)
			if rule["alert"] != alert {
				continue
			}
			out := map[string]string{}
			labels, _ := rule["labels"].(map[string]any)
			for k, v := range labels {
				out[k] = fmt.Sprint(v)
			}
			return out, true
		}
	}
	return nil, false
}

// Write writes the groups as a Prometheus rules file at path.
func (g RuleGroups) Write(path string) error {
	data, err := yaml.Marshal(g)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// Alerts lists the names of the alerting rules of g, in order.
func (g RuleGroups) Alerts() []string {
	var out []string
	for _, group := range g.Groups {
		rules, _ := group["rules"].([]any)
		for _, r := range rules {
			if rule, _ := r.(map[string]any); rule["alert"] != nil {
				out = append(out, fmt.Sprint(rule["alert"]))
			}
		}
	}
	return out
}
