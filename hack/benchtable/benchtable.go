// Package benchtable turns the output of `go test -bench` into the one Markdown table `make bench` prints and the
// README carries: each figure beside its anchor (a run of the reference implementation in the same process, where
// one can run here) or its target. Every value comes from a benchmark's output; a figure that was not measured is
// shown as "not run", never as a number.
package benchtable

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Result is one benchmark's line: its name without the -GOMAXPROCS suffix and its metrics by unit.
type Result struct {
	Package string
	Name    string
	Metrics map[string]float64
}

var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+(\d+)\s+(.*)$`)

// Parse reads `go test -bench` output and returns the benchmark lines in order. A benchmark run more than once
// (-count) keeps its last line.
func Parse(r io.Reader) ([]Result, error) {
	var out []Result
	index := map[string]int{}
	pkg := ""
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimSpace(p)
			continue
		}
		m := benchLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		res := Result{Package: pkg, Name: m[1], Metrics: map[string]float64{}}
		fields := strings.Fields(m[3])
		for i := 0; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				return nil, fmt.Errorf("benchmark %s: value %q of %q is not a number", res.Name, fields[i], fields[i+1])
			}
			res.Metrics[fields[i+1]] = v
		}
		if i, ok := index[res.Name]; ok {
			out[i] = res
			continue
		}
		index[res.Name] = len(out)
		out = append(out, res)
	}
	return out, sc.Err()
}

// Figure is one row of the table: a metric of a benchmark, how to print it, and what it is compared with.
type Figure struct {
	// Bench is the benchmark's name (sub-benchmarks with their path, e.g. BenchmarkSync/list).
	Bench string
	// Metric is the unit the benchmark reports, e.g. "alm-ms/op".
	Metric string
	// Title says what was measured.
	Title string
	// Format prints the value; "%.0f" when empty.
	Format string
	// Anchor, when set, is a metric of the same benchmark measured in the same run by the reference
	// implementation; AnchorTitle names it.
	Anchor, AnchorTitle string
	// Max, when set, is the target the value must not exceed; Min the one it must reach.
	Max, Min *float64
}

// Limit returns a pointer to v, for Figure.Max and Figure.Min.
func Limit(v float64) *float64 { return &v }

// Write prints one Markdown table: the figures in order, then every measured metric no figure names (so nothing
// a benchmark reported is hidden).
func Write(w io.Writer, figures []Figure, results []Result) {
	byName := map[string]Result{}
	for _, r := range results {
		byName[r.Name] = r
	}
	shown := map[string]bool{}
	fmt.Fprintln(w, "| Figure | Measured | Anchor or target | |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, f := range figures {
		shown[f.Bench+" "+f.Metric] = true
		if f.Anchor != "" {
			shown[f.Bench+" "+f.Anchor] = true
		}
		fmt.Fprintln(w, row(f, byName))
	}
	for _, r := range results {
		units := make([]string, 0, len(r.Metrics))
		for unit := range r.Metrics {
			if !shown[r.Name+" "+unit] && unit != "ns/op" && unit != "B/op" && unit != "allocs/op" {
				units = append(units, unit)
			}
		}
		sort.Strings(units)
		for _, unit := range units {
			fmt.Fprintf(w, "| %s: %s | %s | | |\n", r.Name, unit, number(r.Metrics[unit], ""))
		}
	}
}

func row(f Figure, results map[string]Result) string {
	r, ok := results[f.Bench]
	v, measured := r.Metrics[f.Metric]
	if !ok || !measured {
		return fmt.Sprintf("| %s | not run (%s %s) | %s | |", f.Title, f.Bench, f.Metric, target(f))
	}
	verdict := ""
	switch {
	case f.Max != nil && v > *f.Max, f.Min != nil && v < *f.Min:
		verdict = "missed"
	case f.Max != nil || f.Min != nil:
		verdict = "met"
	}
	comparison := target(f)
	if f.Anchor != "" {
		if a, ok := r.Metrics[f.Anchor]; ok {
			comparison = fmt.Sprintf("%s: %s (ALM %.2f×)", f.AnchorTitle, number(a, f.Format), v/a)
		} else {
			comparison = f.AnchorTitle + ": not run"
		}
	}
	return fmt.Sprintf("| %s | %s | %s | %s |", f.Title, number(v, f.Format), comparison, verdict)
}

func target(f Figure) string {
	switch {
	case f.Max != nil:
		return "target ≤ " + number(*f.Max, f.Format)
	case f.Min != nil:
		return "target ≥ " + number(*f.Min, f.Format)
	}
	return ""
}

func number(v float64, format string) string {
	if format == "" {
		switch {
		case v != 0 && v < 10 && v > -10:
			format = "%.2f"
		default:
			format = "%.0f"
		}
	}
	return fmt.Sprintf(format, v)
}
