package metricstest

import (
	"fmt"
	"os"
	"time"

	"github.com/prometheus/common/model"
	"sigs.k8s.io/yaml"
)

// Rule is one alerting rule of a PrometheusRule.
type Rule struct {
	Alert  string
	Expr   string
	For    time.Duration
	Labels map[string]string
}

// LoadRules reads the alerting rules of the PrometheusRule manifest at path, by alert name.
func LoadRules(path string) (map[string]Rule, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Kind string `json:"kind"`
		Spec struct {
			Groups []struct {
				Rules []struct {
					Alert  string            `json:"alert"`
					Expr   string            `json:"expr"`
					For    string            `json:"for"`
					Labels map[string]string `json:"labels"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if doc.Kind != "PrometheusRule" {
		return nil, fmt.Errorf("%s: kind %q, want PrometheusRule", path, doc.Kind)
	}
	out := map[string]Rule{}
	for _, g := range doc.Spec.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			rule := Rule{Alert: r.Alert, Expr: r.Expr, Labels: r.Labels}
			if r.For != "" {
				d, err := model.ParseDuration(r.For)
				if err != nil {
					return nil, fmt.Errorf("%s: alert %s: for: %w", path, r.Alert, err)
				}
				rule.For = time.Duration(d)
			}
			out[r.Alert] = rule
		}
	}
	return out, nil
}

// Firing evaluates the rule as Prometheus does, at every scrape of tl up to at (the evaluation interval is the scrape
// interval): a label set is pending from the first evaluation its expression returns it, until an evaluation that
// does not; it fires once it has been pending for the rule's for. It returns the label sets firing at at.
func (r Rule) Firing(tl Timeline, at time.Time) ([]map[string]string, error) {
	since := map[string]time.Time{}
	var firing []map[string]string
	for _, p := range tl {
		if p.At.After(at) {
			break
		}
		active, err := Eval(r.Expr, tl, p.At)
		if err != nil {
			return nil, fmt.Errorf("alert %s: %w", r.Alert, err)
		}
		next := map[string]time.Time{}
		firing = nil
		for _, s := range active {
			key := signature(s.Labels, true)
			start, ok := since[key]
			if !ok {
				start = p.At
			}
			next[key] = start
			if p.At.Sub(start) >= r.For {
				firing = append(firing, withoutName(s.Labels))
			}
		}
		since = next
	}
	return firing, nil
}
