// Package metricstest reads Prometheus metrics as a user's Prometheus sees them — scraped over HTTP in the text
// format, or gathered from a registry in the test's own process — and finds samples by name and labels.
package metricstest

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Families are metric families by name.
type Families map[string]*dto.MetricFamily

// Scrape reads url (a /metrics endpoint) as Prometheus scrapes it.
func Scrape(ctx context.Context, url string) (Families, error) {
	return ScrapeAs(ctx, url, "")
}

// ScrapeAs reads url as Prometheus scrapes ALM's /metrics (config/prometheus): with a bearer token (of a
// ServiceAccount bound to ClusterRole alm-metrics-reader), over HTTPS without verifying the certificate, which ALM
// generates self-signed unless it is given one.
func ScrapeAs(ctx context.Context, url, token string) (Families, error) {
	status, body, err := Get(ctx, url, token)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("GET %s: HTTP %d: %.200s", url, status, body)
	}
	return Parse(strings.NewReader(body))
}

// insecureClient trusts any server certificate: ALM's metrics certificate is self-signed by default.
var insecureClient = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}

// Get reads url with token as a bearer token (none when empty), as ScrapeAs does, and returns the status and body.
func Get(ctx context.Context, url, token string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := insecureClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// Parse reads the Prometheus text format.
func Parse(r io.Reader) (Families, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	return Families(fams), err
}

// Gather gathers g (e.g. controller-runtime's metrics.Registry).
func Gather(g prometheus.Gatherer) (Families, error) {
	list, err := g.Gather()
	if err != nil {
		return nil, err
	}
	out := Families{}
	for _, f := range list {
		out[f.GetName()] = f
	}
	return out, nil
}

// Sample is one series: its labels and value (a counter's, gauge's or untyped value; a histogram's count).
type Sample struct {
	Labels map[string]string
	Value  float64
}

// Samples returns the series of name whose labels include want.
func (f Families) Samples(name string, want map[string]string) []Sample {
	fam := f[name]
	if fam == nil {
		return nil
	}
	var out []Sample
	for _, m := range fam.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if !includes(labels, want) {
			continue
		}
		out = append(out, Sample{Labels: labels, Value: value(m)})
	}
	return out
}

// Sum adds up the values of the series of name whose labels include want (0 when there are none).
func (f Families) Sum(name string, want map[string]string) float64 {
	total := 0.0
	for _, s := range f.Samples(name, want) {
		total += s.Value
	}
	return total
}

// Value is the value of the one series of name whose labels include want; an error when there is none or more.
func (f Families) Value(name string, want map[string]string) (float64, error) {
	s := f.Samples(name, want)
	if len(s) != 1 {
		return 0, fmt.Errorf("%d series of %s%s, want 1 (have: %s)", len(s), name, Format(want), f.Describe(name))
	}
	return s[0].Value, nil
}

// Equal checks that the one series of name with labels has value want.
func (f Families) Equal(name string, labels map[string]string, want float64) error {
	got, err := f.Value(name, labels)
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("%s%s = %g, want %g", name, Format(labels), got, want)
	}
	return nil
}

// Describe lists the series of name, one per line, for failure messages.
func (f Families) Describe(name string) string {
	var lines []string
	for _, s := range f.Samples(name, nil) {
		lines = append(lines, fmt.Sprintf("%s%s %g", name, Format(s.Labels), s.Value))
	}
	if len(lines) == 0 {
		return "none"
	}
	return strings.Join(lines, "; ")
}

// Format writes labels as {a="1",b="2"}, sorted.
func Format(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%q", k, labels[k]))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func includes(labels, want map[string]string) bool {
	for k, v := range want {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	case m.Summary != nil:
		return float64(m.Summary.GetSampleCount())
	default:
		return m.GetUntyped().GetValue()
	}
}
