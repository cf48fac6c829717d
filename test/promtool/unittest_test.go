package promtool

import (
	"fmt"
	"strings"
	"testing"

	"github.com/almproject/alm/test/metricstest"
)

func parse(t *testing.T, text string) metricstest.Families {
	t.Helper()
	f, err := metricstest.Parse(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// InputSeries writes what Prometheus would store: no sample before a series first appears, a staleness marker once
// it is gone, histograms as buckets, sum and count; keep filters by name and labels.
func TestInputSeries(t *testing.T) {
	scrapes := []metricstest.Families{
		parse(t, "# TYPE reqs counter\nreqs{code=\"200\"} 1\n# TYPE other gauge\nother 5\n"),
		parse(t, "# TYPE reqs counter\nreqs{code=\"200\"} 2\nreqs{code=\"500\"} 1\n"+
			"# TYPE lat histogram\nlat_bucket{le=\"0.5\"} 1\nlat_bucket{le=\"+Inf\"} 2\nlat_sum 1.25\nlat_count 2\n"),
		parse(t, "# TYPE reqs counter\nreqs{code=\"500\"} 3\n"),
	}
	got := InputSeries(scrapes, func(name string, _ map[string]string) bool { return name != "other" })
	var lines []string
	for _, s := range got {
		lines = append(lines, fmt.Sprintf("%s: %s", s.Series, s.Values))
	}
	want := []string{
		`lat_bucket{le="+Inf"}: _ 2 stale`,
		`lat_bucket{le="0.5"}: _ 1 stale`,
		`lat_count: _ 2 stale`,
		`lat_sum: _ 1.25 stale`,
		`reqs{code="200"}: 1 2 stale`,
		`reqs{code="500"}: _ 1 3`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("InputSeries:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}
