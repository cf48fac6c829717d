package metricstest

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"
)

// An evaluator of the PromQL our alert rules use, over scraped metrics: instant vector selectors with label matchers
// (=, !=, =~, !~), rate(selector[range]), sum/max/min/count by (labels), and the binary operators * / == != > < >= <=
// between vectors (one-to-one on every label but the name) and scalars, with PromQL's meaning (comparisons filter).
// Anything else is a parse error, so a rule using it fails its test instead of passing unevaluated. Differences from
// Prometheus: rate does not extrapolate to the range's edges (a ratio of two rates over the same range is the same),
// and a series missing from the latest scrape at or before the evaluation time is absent (as a staleness marker makes
// it), else the lookback is 5m.

// Point is one scrape of the timeline: when, and what it returned.
type Point struct {
	At       time.Time
	Families Families
}

// Timeline is a series of scrapes, oldest first.
type Timeline []Point

// Series is one element of an instant vector.
type Series struct {
	Labels map[string]string
	Value  float64
}

// lookback is how long a sample stays the current value of its series.
const lookback = 5 * time.Minute

// Eval evaluates expr at time at over tl and returns the resulting vector (a scalar result is one series with no labels).
func Eval(expr string, tl Timeline, at time.Time) ([]Series, error) {
	p := &parser{toks: nil}
	if err := p.lex(expr); err != nil {
		return nil, err
	}
	n, err := p.parseExpr()
	if err != nil {
		return nil, err
	}
	if p.pos != len(p.toks) {
		return nil, fmt.Errorf("unexpected %q after the expression", p.toks[p.pos].text)
	}
	v, err := n.eval(tl, at)
	if err != nil {
		return nil, err
	}
	if v.vector == nil && v.isScalar {
		return []Series{{Labels: map[string]string{}, Value: v.scalar}}, nil
	}
	return v.vector, nil
}

// result is a scalar or an instant vector.
type result struct {
	isScalar bool
	scalar   float64
	vector   []Series
}

type node interface {
	eval(tl Timeline, at time.Time) (result, error)
}

type numberNode float64

func (n numberNode) eval(Timeline, time.Time) (result, error) {
	return result{isScalar: true, scalar: float64(n)}, nil
}

type matcher struct {
	name, op, value string
	re              *regexp.Regexp
}

func (m matcher) matches(labels map[string]string) bool {
	v := labels[m.name]
	switch m.op {
	case "=":
		return v == m.value
	case "!=":
		return v != m.value
	case "=~":
		return m.re.MatchString(v)
	default: // "!~"
		return !m.re.MatchString(v)
	}
}

type selectorNode struct {
	matchers []matcher
	rng      time.Duration // > 0 only as rate's argument
}

// instant selects the series of the latest scrape at or before at (within the lookback).
func (s *selectorNode) eval(tl Timeline, at time.Time) (result, error) {
	for i := len(tl) - 1; i >= 0; i-- {
		if tl[i].At.After(at) {
			continue
		}
		if at.Sub(tl[i].At) > lookback {
			break
		}
		return result{vector: s.select1(tl[i].Families)}, nil
	}
	return result{vector: []Series{}}, nil
}

func (s *selectorNode) select1(f Families) []Series {
	out := []Series{}
	for _, series := range f.all() {
		ok := true
		for _, m := range s.matchers {
			ok = ok && m.matches(series.Labels)
		}
		if ok {
			out = append(out, series)
		}
	}
	return out
}

type rateNode struct{ sel *selectorNode }

// eval is the per-second increase of each counter over the scrapes in (at-range, at], counter resets included.
func (r *rateNode) eval(tl Timeline, at time.Time) (result, error) {
	type pts struct {
		labels map[string]string
		t      []time.Time
		v      []float64
	}
	bySeries := map[string]*pts{}
	for _, p := range tl {
		if !p.At.After(at.Add(-r.sel.rng)) || p.At.After(at) {
			continue
		}
		for _, s := range r.sel.select1(p.Families) {
			key := signature(s.Labels, true)
			if bySeries[key] == nil {
				bySeries[key] = &pts{labels: withoutName(s.Labels)}
			}
			bySeries[key].t = append(bySeries[key].t, p.At)
			bySeries[key].v = append(bySeries[key].v, s.Value)
		}
	}
	out := []Series{}
	for _, s := range bySeries {
		if len(s.v) < 2 {
			continue
		}
		inc := 0.0
		for i := 1; i < len(s.v); i++ {
			if s.v[i] < s.v[i-1] {
				inc += s.v[i] // a reset: the counter started again from 0
			} else {
				inc += s.v[i] - s.v[i-1]
			}
		}
		out = append(out, Series{Labels: s.labels, Value: inc / s.t[len(s.t)-1].Sub(s.t[0]).Seconds()})
	}
	return result{vector: out}, nil
}

type aggregateNode struct {
	op  string
	by  []string
	arg node
}

func (a *aggregateNode) eval(tl Timeline, at time.Time) (result, error) {
	v, err := a.arg.eval(tl, at)
	if err != nil {
		return result{}, err
	}
	if v.isScalar {
		return result{}, fmt.Errorf("%s of a scalar", a.op)
	}
	groups := map[string]*Series{}
	for _, s := range v.vector {
		labels := map[string]string{}
		for _, l := range a.by {
			if val, ok := s.Labels[l]; ok && val != "" {
				labels[l] = val
			}
		}
		key := signature(labels, false)
		g := groups[key]
		if g == nil {
			groups[key] = &Series{Labels: labels, Value: initial(a.op, s.Value)}
			continue
		}
		switch a.op {
		case "sum":
			g.Value += s.Value
		case "max":
			g.Value = math.Max(g.Value, s.Value)
		case "min":
			g.Value = math.Min(g.Value, s.Value)
		case "count":
			g.Value++
		}
	}
	out := []Series{}
	for _, g := range groups {
		out = append(out, *g)
	}
	return result{vector: out}, nil
}

func initial(op string, v float64) float64 {
	if op == "count" {
		return 1
	}
	return v
}

type binaryNode struct {
	op          string
	left, right node
}

func (b *binaryNode) eval(tl Timeline, at time.Time) (result, error) {
	l, err := b.left.eval(tl, at)
	if err != nil {
		return result{}, err
	}
	r, err := b.right.eval(tl, at)
	if err != nil {
		return result{}, err
	}
	compare := isComparison(b.op)
	switch {
	case l.isScalar && r.isScalar:
		if compare {
			return result{}, fmt.Errorf("comparison of two scalars needs bool, which is not supported")
		}
		res, _ := apply(b.op, l.scalar, r.scalar)
		return result{isScalar: true, scalar: res}, nil
	case r.isScalar:
		return result{vector: withScalar(b.op, l.vector, r.scalar, false)}, nil
	case l.isScalar:
		return result{vector: withScalar(b.op, r.vector, l.scalar, true)}, nil
	}
	right := map[string]Series{}
	for _, s := range r.vector {
		right[signature(s.Labels, true)] = s
	}
	out := []Series{}
	for _, s := range l.vector {
		o, ok := right[signature(s.Labels, true)]
		if !ok {
			continue
		}
		res, keep := apply(b.op, s.Value, o.Value)
		switch {
		case compare && keep:
			out = append(out, s)
		case !compare:
			out = append(out, Series{Labels: withoutName(s.Labels), Value: res})
		}
	}
	return result{vector: out}, nil
}

func withScalar(op string, vec []Series, scalar float64, scalarLeft bool) []Series {
	out := []Series{}
	for _, s := range vec {
		a, b := s.Value, scalar
		if scalarLeft {
			a, b = b, a
		}
		res, keep := apply(op, a, b)
		switch {
		case isComparison(op) && keep:
			out = append(out, s)
		case !isComparison(op):
			out = append(out, Series{Labels: withoutName(s.Labels), Value: res})
		}
	}
	return out
}

func isComparison(op string) bool {
	switch op {
	case "==", "!=", ">", "<", ">=", "<=":
		return true
	}
	return false
}

// apply computes a op b: the arithmetic result, or for a comparison whether it holds (NaN never does).
func apply(op string, a, b float64) (float64, bool) {
	switch op {
	case "*":
		return a * b, true
	case "/":
		return a / b, true
	case "==":
		return a, a == b
	case "!=":
		return a, a != b && !math.IsNaN(a) && !math.IsNaN(b)
	case ">":
		return a, a > b
	case "<":
		return a, a < b
	case ">=":
		return a, a >= b
	default: // "<="
		return a, a <= b
	}
}

// signature identifies a label set (without the metric name when dropName).
func signature(labels map[string]string, dropName bool) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		if dropName && k == model.MetricNameLabel {
			continue
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "=" + strconv.Quote(labels[k]) + ",")
	}
	return b.String()
}

func withoutName(labels map[string]string) map[string]string {
	out := make(map[string]string, len(labels))
	for k, v := range labels {
		if k != model.MetricNameLabel {
			out[k] = v
		}
	}
	return out
}

// all lists every series of f as Prometheus stores them: counters, gauges and untyped values under their name;
// histograms and summaries as <name>_count and <name>_sum.
func (f Families) all() []Series {
	var out []Series
	for name, fam := range f {
		for _, m := range fam.GetMetric() {
			add := func(n string, v float64) {
				labels := map[string]string{model.MetricNameLabel: n}
				for _, l := range m.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				out = append(out, Series{Labels: labels, Value: v})
			}
			switch {
			case m.Histogram != nil:
				add(name+"_count", float64(m.Histogram.GetSampleCount()))
				add(name+"_sum", m.Histogram.GetSampleSum())
			case m.Summary != nil:
				add(name+"_count", float64(m.Summary.GetSampleCount()))
				add(name+"_sum", m.Summary.GetSampleSum())
			default:
				add(name, value(m))
			}
		}
	}
	return out
}
