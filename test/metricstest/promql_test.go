package metricstest

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func scrape(t *testing.T, text string) Families {
	t.Helper()
	f, err := Parse(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// timeline builds one scrape a minute: requests_total grows by ok and failed per minute for each server (a reset at
// minute 6 on "b"), phase is 1 for two objects.
func timeline(t *testing.T, minutes int) (Timeline, time.Time) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var tl Timeline
	for m := 0; m <= minutes; m++ {
		b := m
		if m >= 6 {
			b = m - 6
		}
		text := fmt.Sprintf(`# TYPE requests_total counter
requests_total{server="a",success="true"} %d
requests_total{server="a",success="false"} %d
requests_total{server="b",success="true"} %d
# TYPE phase gauge
phase{name="x",phase="Failed"} 1
phase{name="y",phase="Succeeded"} 1
`, 60*m, 30*m, 60*b)
		tl = append(tl, Point{At: start.Add(time.Duration(m) * time.Minute), Families: scrape(t, text)})
	}
	return tl, start
}

func TestEval(t *testing.T) {
	tl, start := timeline(t, 20)
	at := start.Add(10 * time.Minute)
	cases := []struct {
		expr string
		want string // sorted "labels=value" lines
	}{
		{`phase{phase="Failed"}`, `{__name__="phase",name="x",phase="Failed"}=1`},
		{`phase{phase!="Failed"} == 1`, `{__name__="phase",name="y",phase="Succeeded"}=1`},
		{`phase{name=~"x|y", phase!~"S.*"}`, `{__name__="phase",name="x",phase="Failed"}=1`},
		{`max by (name) (phase) == 1`, `{name="x"}=1 {name="y"}=1`},
		{`rate(requests_total{server="a",success="false"}[5m])`, `{server="a",success="false"}=0.5`},
		{`rate(requests_total{server="b"}[5m])`, `{server="b",success="true"}=1`}, // the reset at minute 6 counts as growth
		{`sum by (server) (rate(requests_total{success="false"}[5m])) / sum by (server) (rate(requests_total[5m]))`,
			`{server="a"}=0.3333333333333333`}, // b has no failures: no series to match, as in Prometheus
		{`sum by (server) (rate(requests_total{success="false"}[5m])) / sum by (server) (rate(requests_total[5m])) > 0.1`,
			`{server="a"}=0.3333333333333333`},
		{`count(phase)`, `{}=2`},
	}
	for _, tc := range cases {
		t.Run(tc.expr, func(t *testing.T) {
			got, err := Eval(tc.expr, tl, at)
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, s := range got {
				lines = append(lines, fmt.Sprintf("%s=%g", Format(s.Labels), s.Value))
			}
			if joined := strings.Join(sortStrings(lines), " "); joined != tc.want {
				t.Errorf("Eval = %s, want %s", joined, tc.want)
			}
		})
	}
	for _, bad := range []string{`histogram_quantile(0.9, x)`, `sum without (a) (x)`, `x + 1`, `rate(x)`, `1 > 2`} {
		if _, err := Eval(bad, tl, at); err == nil {
			t.Errorf("Eval(%s) = no error, want an unsupported-expression error", bad)
		}
	}
}

func TestRuleFor(t *testing.T) {
	tl, start := timeline(t, 20)
	r := Rule{Alert: "Failed", Expr: `phase{phase="Failed"} == 1`, For: 10 * time.Minute}
	for _, tc := range []struct {
		minute int
		firing bool
	}{{0, false}, {9, false}, {10, true}, {20, true}} {
		got, err := r.Firing(tl, start.Add(time.Duration(tc.minute)*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if (len(got) == 1) != tc.firing {
			t.Errorf("minute %d: firing %v, want %v", tc.minute, got, tc.firing)
		}
	}
}

func sortStrings(s []string) []string {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s
}
