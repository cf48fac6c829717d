package promtool

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"sigs.k8s.io/yaml"

	"github.com/almproject/alm/test/metricstest"
)

// UnitTests is a `promtool test rules` file (Prometheus's "unit testing for rules" format).
type UnitTests struct {
	RuleFiles          []string `json:"rule_files"`
	EvaluationInterval string   `json:"evaluation_interval,omitempty"`
	Tests              []Test   `json:"tests"`
}

// Test is one test group: input series and the alerts expected at given times.
type Test struct {
	Name           string      `json:"name,omitempty"`
	Interval       string      `json:"interval,omitempty"`
	InputSeries    []Series    `json:"input_series"`
	AlertRuleTests []AlertTest `json:"alert_rule_test,omitempty"`
}

// Series is one input series in promtool's expanding notation (values separated by spaces; "_" is no sample,
// "stale" a staleness marker).
type Series struct {
	Series string `json:"series"`
	Values string `json:"values"`
}

// AlertTest lists the alerts of alertname firing at eval_time: all of them, with all their labels.
type AlertTest struct {
	EvalTime  string     `json:"eval_time"`
	Alertname string     `json:"alertname"`
	ExpAlerts []ExpAlert `json:"exp_alerts"`
}

// ExpAlert is one expected alert. Its labels include the rule's own (e.g. severity), not alertname.
type ExpAlert struct {
	ExpLabels      map[string]string `json:"exp_labels,omitempty"`
	ExpAnnotations map[string]string `json:"exp_annotations,omitempty"`
}

// RunUnitTests runs promtool on groups and tests as RunTestFiles does, tests written as a file of their own.
func RunUnitTests(t testing.TB, groups RuleGroups, tests UnitTests) {
	t.Helper()
	tests.RuleFiles = []string{RulesFile}
	data, err := yaml.Marshal(tests)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tests.yaml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	RunTestFiles(t, groups, path)
}

// RulesFile is the name under which RunTestFiles writes the rules, next to the test files that name it in rule_files.
const RulesFile = "rules.yaml"

// RunTestFiles writes groups as RulesFile into a temporary directory with copies of the test files, runs
// `promtool check rules` on the rules (every lint, fatal) and `promtool test rules` on the test files there, and
// fails the test with promtool's output (which names the test group, alert and time) on any failure.
func RunTestFiles(t testing.TB, groups RuleGroups, files ...string) {
	t.Helper()
	dir := t.TempDir()
	if err := groups.Write(filepath.Join(dir, RulesFile)); err != nil {
		t.Fatal(err)
	}
	args := []string{"test", "rules"}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, filepath.Base(f))
	}
	out, err := Run(t, dir, "check", "rules", "--lint=all", "--lint-fatal", RulesFile)
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Logf("promtool check rules: %s", strings.TrimSpace(out))
	if out, err = Run(t, dir, args...); err != nil {
		t.Errorf("%v", err)
		return
	}
	t.Logf("promtool %s: %s", strings.Join(args, " "), strings.TrimSpace(out))
}

// InputSeries turns scrapes, one per interval (the first at 0), into promtool input series: every series keep
// accepts (given its metric name and labels), stored as Prometheus stores what it scrapes — counters, gauges and
// untyped values under their name, histograms as _bucket (with le), _sum and _count, summaries as their quantiles,
// _sum and _count. A series has no sample before its first scrape and a staleness marker in each scrape it is missing
// from afterwards, as Prometheus writes when a target stops exposing a series.
func InputSeries(scrapes []metricstest.Families, keep func(name string, labels map[string]string) bool) []Series {
	values := map[string][]string{}
	for i, f := range scrapes {
		for _, s := range samples(f) {
			if !keep(s.name, s.labels) {
				continue
			}
			key := s.name
			if len(s.labels) > 0 {
				key += metricstest.Format(s.labels)
			}
			if values[key] == nil {
				values[key] = make([]string, len(scrapes))
				for j := range i {
					values[key][j] = "_"
				}
			}
			values[key][i] = strconv.FormatFloat(s.value, 'g', -1, 64)
		}
		for _, v := range values {
			if v[i] == "" {
				v[i] = "stale"
			}
		}
	}
	out := make([]Series, 0, len(values))
	for key, v := range values {
		out = append(out, Series{Series: key, Values: strings.Join(v, " ")})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Series < out[j].Series })
	return out
}

type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// samples lists the series of f as Prometheus stores them.
func samples(f metricstest.Families) []sample {
	var out []sample
	for name, fam := range f {
		for _, m := range fam.GetMetric() {
			add := func(suffix string, v float64, extra ...string) {
				labels := map[string]string{}
				for _, l := range m.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				for i := 0; i+1 < len(extra); i += 2 {
					labels[extra[i]] = extra[i+1]
				}
				out = append(out, sample{name: name + suffix, labels: labels, value: v})
			}
			switch {
			case m.Histogram != nil:
				histogram(m.Histogram, add)
			case m.Summary != nil:
				for _, q := range m.Summary.GetQuantile() {
					add("", q.GetValue(), "quantile", formatFloat(q.GetQuantile()))
				}
				add("_sum", m.Summary.GetSampleSum())
				add("_count", float64(m.Summary.GetSampleCount()))
			case m.Counter != nil:
				add("", m.Counter.GetValue())
			case m.Gauge != nil:
				add("", m.Gauge.GetValue())
			default:
				add("", m.GetUntyped().GetValue())
			}
		}
	}
	return out
}

func histogram(h *dto.Histogram, add func(suffix string, v float64, extra ...string)) {
	for _, b := range h.GetBucket() {
		add("_bucket", float64(b.GetCumulativeCount()), "le", formatFloat(b.GetUpperBound()))
	}
	add("_bucket", float64(h.GetSampleCount()), "le", "+Inf")
	add("_sum", h.GetSampleSum())
	add("_count", float64(h.GetSampleCount()))
}

// formatFloat writes a bucket bound or quantile as Prometheus's text format does.
func formatFloat(f float64) string {
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// Minutes formats m minutes as a promtool duration.
func Minutes(m int) string {
	return fmt.Sprintf("%dm", m)
}
